"""What every adapter of :mod:`policies` records about itself: its name and its provenance.

Shared by the adapters of :mod:`policies.adapters` and :class:`policies.observation.ObservationPolicy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simscore.errors import InvalidResponseError
from simscore.io import dumps


def _qualified_name(obj: Any) -> str:
    """``module.qualname`` of a function or of an object's class (for provenance)."""
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", type(obj).__name__)
    return f"{module}.{qualname}" if module else qualname


def _provenance(facts: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``facts`` updated by the user's ``extra`` entries, checked to be JSON-serialisable."""
    if extra is not None and not isinstance(extra, Mapping):
        raise TypeError(f"provenance must be a mapping or None, got {type(extra).__name__}")
    out = dict(facts)
    out.update(extra or {})
    try:
        dumps(out)
    except (TypeError, ValueError) as exc:
        raise InvalidResponseError(f"provenance must be JSON-serialisable: {exc}") from None
    return out


def _check_name(name: Any) -> None:
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"name must be a non-empty string or None, got {name!r}")
