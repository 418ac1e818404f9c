"""Argument checks at the public boundary, in one place.

Every public function and constructor of simscore, contexts and policies checks its
arguments with these helpers; code behind the boundary trusts what was checked. Each helper
returns the value normalised (a Python ``int`` or ``float``) or raises an error that names
the parameter, what was expected and what was received. ``bool`` is never accepted as a
number (``True`` is an ``int`` in Python, but never what a caller meant).

A wrong type raises ``TypeError`` and a value out of range ``ValueError``, unless the caller
passes ``error`` to a numeric check: a function whose contract names one exception class for
every bad argument (``ValueError``, or a class of :mod:`simscore.errors` such as
``InvalidContextError``) keeps it that way, with the helpers' message. ``name`` may carry a
prefix that says where the value came from (``f"{path}: counts.episodes"``).

>>> check_int("seeds[0]", 3, minimum=0)
3
>>> check_int("every", True, minimum=1)
Traceback (most recent call last):
...
TypeError: every must be an int, got bool True
>>> check_number("sigma", 0, minimum=0.0, exclusive_minimum=True)
Traceback (most recent call last):
...
ValueError: sigma must be > 0.0, got 0
>>> check_int("n", "3", error=ValueError)
Traceback (most recent call last):
...
ValueError: n must be an int, got str '3'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection
from typing import Any

__all__ = ["check_int", "check_number", "check_probability", "check_level", "check_bool", "check_choice", "check_seed",
           "MAX_SEED"]

#: Seeds are non-negative and below 2**63 (numpy's SeedSequence takes any size; files and
#: other tools rarely do).
MAX_SEED = 2**63 - 1


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _converted(name: str, value: Any, kind: type, abstract: type, what: str, error: type[Exception] | None) -> Any:
    """``value`` as ``kind`` if it is an ``abstract`` number other than a bool, else the type error."""
    if type(value) is kind:  # the common case, without the slower check against the abstract class
        return value
    if isinstance(value, bool) or not isinstance(value, abstract):
        raise (error or TypeError)(f"{name} must be {what}, got {_describe(value)}")
    return kind(value)


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[Exception] | None = None,
) -> int:
    """``value`` as an ``int`` (numpy integers accepted), within ``[minimum, maximum]``."""
    number: int = _converted(name, value, int, numbers.Integral, "an int", error)
    if minimum is not None and number < minimum:
        raise (error or ValueError)(f"{name} must be >= {minimum}, got {number!r}")
    if maximum is not None and number > maximum:
        raise (error or ValueError)(f"{name} must be <= {maximum:,}, got {number:,}")
    return number


def check_number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    finite: bool = True,
    error: type[Exception] | None = None,
) -> float:
    """``value`` as a ``float`` (ints and numpy numbers accepted), finite unless told otherwise.

    NaN is never accepted; ``finite=False`` lets infinities through.
    """
    number: float = _converted(name, value, float, numbers.Real, "a number", error)
    if math.isnan(number) or (finite and math.isinf(number)):
        raise (error or ValueError)(f"{name} must be a finite number, got {value!r}")
    if minimum is not None:
        if exclusive_minimum and not number > minimum:
            raise (error or ValueError)(f"{name} must be > {minimum}, got {value!r}")
        if not exclusive_minimum and number < minimum:
            raise (error or ValueError)(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and number > maximum:
        raise (error or ValueError)(f"{name} must be <= {maximum}, got {value!r}")
    return number


def check_probability(name: str, value: Any, *, error: type[Exception] | None = None) -> float:
    """A number in [0, 1].

    >>> check_probability("p", 1)
    1.0
    """
    return check_number(name, value, minimum=0.0, maximum=1.0, error=error)


def check_level(name: str, value: Any, *, error: type[Exception] | None = None) -> float:
    """A number strictly between 0 and 1 (a test's level, a power).

    >>> check_level("alpha", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be in (0, 1), got 1.0
    """
    number = check_number(name, value, error=error)
    if not 0.0 < number < 1.0:
        raise (error or ValueError)(f"{name} must be in (0, 1), got {value!r}")
    return number


def check_bool(name: str, value: Any) -> bool:
    """Exactly ``True`` or ``False`` (numpy booleans accepted; not ``"no"``, not ``0``)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_describe(value)}")


def check_choice(name: str, value: Any, choices: Collection[str]) -> str:
    """One of ``choices`` (strings).

    >>> check_choice("reward", "success", ("ts", "iq"))
    Traceback (most recent call last):
    ...
    ValueError: reward must be one of 'ts', 'iq', got 'success'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_seed(name: str, value: Any, *, error: type[Exception] | None = None) -> int:
    """A seed: an int in ``[0, MAX_SEED]``."""
    return check_int(name, value, minimum=0, maximum=MAX_SEED, error=error)
