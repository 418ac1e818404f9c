"""A read-only, hashable, insertion-ordered ``dict`` used for the package's value types.

It subclasses :class:`dict` so that equality with plain dicts, ``json.dumps`` and lookups
run at C speed; every mutating method raises :class:`TypeError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, NoReturn, TypeVar

__all__ = ["FrozenDict", "freeze_json"]

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A ``dict`` that cannot be changed after construction and can be hashed.

    Examples
    --------
    >>> d = FrozenDict({"a": 1.0})
    >>> d == {"a": 1.0}, hash(d) == hash(FrozenDict({"a": 1.0}))
    (True, True)
    >>> d["b"] = 2.0
    Traceback (most recent call last):
    ...
    TypeError: FrozenDict is read-only
    """

    __slots__ = ("_hash",)
    _hash: int

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("FrozenDict is read-only")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            value = hash(frozenset(self.items()))
            self._hash = value
            return value

    def __reduce__(self) -> tuple[type[FrozenDict[K, V]], tuple[dict[K, V]]]:
        # Rebuild through the constructor (process pools copy contexts this way).
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict[K, V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[K, V]:
        return self


def freeze_json(value: Any, where: str) -> Any:
    """A read-only, hashable copy of a JSON value: lists become tuples, objects FrozenDicts.

    Raises :class:`ValueError` naming ``where`` for anything JSON cannot hold exactly
    (non-string keys, NaN or infinite floats, other types).

    >>> freeze_json({"a": [1, {"b": None}]}, "extra")
    {'a': (1, {'b': None})}
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return value
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item, f"{where}[{i}]") for i, item in enumerate(value))
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return freeze_json(float(value), where)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} is not a string")
            out[key] = freeze_json(item, f"{where}.{key}")
        return FrozenDict(out)
    raise ValueError(f"{where}: {type(value).__name__} value {value!r} cannot be stored as JSON")
