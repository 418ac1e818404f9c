"""Read a mapping (a TOML table, JSON) into a frozen dataclass, with strict types.

Configurations are read once, into frozen dataclasses that are then passed down unchanged.
:func:`from_mapping` is the one reader: it follows the dataclass's type annotations, refuses
what a careless conversion would accept (a bool from a string, a list from an int, a string
where a list is meant, a float where an int is meant), reads nested dataclasses from nested
tables, suggests the closest name for an unknown key, and names the file, the table and the
key in every error. :func:`to_mapping` writes a dataclass back (tuples as lists), so
``from_mapping(cls, to_mapping(obj)) == obj``.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Schedule:
...     dialogues: int = 100
...     every: int = 10
...     fast: bool = False
>>> from_mapping(Schedule, {"dialogues": 50}, source="run.toml", table="training")
Schedule(dialogues=50, every=10, fast=False)
>>> from_mapping(Schedule, {"fast": "no"}, source="run.toml", table="training")
Traceback (most recent call last):
...
simscore.errors.ConfigError: run.toml: [training] fast: expected true or false, got str 'no'
>>> from_mapping(Schedule, {"dialgues": 5}, source="run.toml", table="training")
Traceback (most recent call last):
...
simscore.errors.ConfigError: run.toml: [training] unknown key 'dialgues'; did you mean 'dialogues'? (known: ...)
"""

from __future__ import annotations

import dataclasses
import difflib
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from simscore.errors import ConfigError

__all__ = ["from_mapping", "to_mapping", "check_keys", "convert_value", "resolve_settings"]

T = TypeVar("T")


def _where(source: str, table: str) -> str:
    return f"{source}: [{table}]" if table else f"{source}:"



def check_keys(data: Mapping[str, Any], known: Iterable[str], *, source: str, table: str = "") -> None:
    """Raise :class:`~simscore.errors.ConfigError` for a key not in ``known`` (with a suggestion)."""
    names = list(known)
    for key in data:
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{_where(source, table)} unknown key {key!r}{hint} (known: {', '.join(names)})")


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def convert_value(value: Any, hint: Any, *, source: str, table: str, key: str) -> Any:
    """``value`` checked (and lists turned into tuples) against the annotation ``hint``; errors name ``key``."""
    where = f"{_where(source, table)} {key}"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in args:
            if option is type(None):
                continue
            try:
                return convert_value(value, option, source=source, table=table, key=key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{where}: got {_describe(value)}")
    if hint is Any:
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {_describe(value)}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected an integer, got {_describe(value)}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{where}: expected a number, got {_describe(value)}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected a string, got {_describe(value)}")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {_describe(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(
                convert_value(item, args[0], source=source, table=table, key=f"{key}[{i}]")
                for i, item in enumerate(value)
            )
        if len(value) != len(args):
            raise ConfigError(f"{where}: expected a list of {len(args)} values, got {len(value)}: {list(value)!r}")
        return tuple(
            convert_value(item, arg, source=source, table=table, key=f"{key}[{i}]")
            for i, (item, arg) in enumerate(zip(value, args))
        )
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a table, got {_describe(value)}")
        return from_mapping(hint, value, source=source, table=f"{table}.{key}" if table else key)
    raise ConfigError(f"{where}: cannot read a value of type {hint!r} from a configuration")


def from_mapping(cls: type[T], data: Mapping[str, Any], *, source: str = "config", table: str = "") -> T:
    """Build the frozen dataclass ``cls`` from ``data``, checking every value's type strictly.

    Parameters
    ----------
    cls : dataclass type
        Its field annotations say what each key must hold: ``int``, ``float``, ``bool``,
        ``str``, ``tuple[X, ...]`` (a list), ``tuple[X, Y]`` (a list of two), a nested
        dataclass (a table), or a union of those with None.
    data : mapping
        Keys are field names; missing keys keep the field's default.
    source, table : str
        The file and the table the mapping came from (named in every error).

    Raises
    ------
    simscore.errors.ConfigError
        An unknown key, a value of the wrong type, or a value the dataclass itself rejects
        (its ``__post_init__`` error, with the file and table in front).
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{_where(source, table)} expected a table, got {_describe(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    check_keys(data, fields, source=source, table=table)
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for key, value in data.items():
        kwargs[key] = convert_value(value, hints[key], source=source, table=table, key=key)
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{_where(source, table)} {exc}") from None


def to_mapping(obj: Any) -> dict[str, Any]:
    """A dataclass instance as plain data: nested dataclasses as dicts, tuples as lists.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class P:
    ...     levels: tuple[float, ...] = (0.5, 1.0)
    >>> to_mapping(P())
    {'levels': [0.5, 1.0]}
    """

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return to_mapping(value)
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        return value

    return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}


def resolve_settings(cls: type[T], given: T | None, *, where: str, parameter: str) -> T:
    """The settings a function was called with: its ``parameter=`` object, or ``cls()`` when none was given.

    Functions whose settings travel together take one frozen dataclass ``cls`` as
    ``parameter=`` (default None: every setting at its default); anything else is a
    :class:`TypeError` naming the function ``where``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Limits:
    ...     low: float = 0.0
    ...     high: float = 1.0
    >>> resolve_settings(Limits, None, where="f", parameter="limits")
    Limits(low=0.0, high=1.0)
    >>> resolve_settings(Limits, {"high": 2.0}, where="f", parameter="limits")
    Traceback (most recent call last):
    ...
    TypeError: f(): limits must be a simscore.io.config.Limits, got dict
    """
    if given is None:
        return cls()
    if not isinstance(given, cls):
        raise TypeError(f"{where}(): {parameter} must be a {_public_name(cls)}, got {type(given).__name__}")
    return given


def _public_name(cls: type) -> str:
    """``cls`` by the shortest dotted name it is imported from (a room's face: ``simscore.stats.Bootstrap``)."""
    parts = cls.__module__.split(".")
    for end in range(1, len(parts)):
        if getattr(sys.modules.get(".".join(parts[:end])), cls.__name__, None) is cls:
            return f"{'.'.join(parts[:end])}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__name__}"
