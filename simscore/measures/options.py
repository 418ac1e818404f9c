"""Measure options: one way to configure any registered measure, from Python, the CLI and a TOML file.

A measure class lists what can be set in its ``options`` mapping (name -> :class:`MeasureOption`:
the kind of value and a line of help); the keys are exactly the keyword arguments of the
class's :meth:`from_options` (by default its constructor), and a test keeps them so. The same
options reach a measure three ways, all checked before any work (unknown names suggest the
closest; values are checked by the measure's constructor, which loads no model):

- Python: ``resolve_measures(["tmr", "bertscore"], options={"bertscore": {"model": DIR, "num_layers": 17}})``;
- the command line: ``simscore compare A B --measure-option bertscore.model=DIR
  --measure-option bertscore.num_layers=17`` (:func:`parse_assignment` and :func:`parse_value`
  read ``MEASURE.OPTION=VALUE``), and ``--device`` for every measure with a ``device`` option;
- the experiment file: a ``[measures.bertscore]`` table with ``model = "DIR"``.

Every option that can change a number is recorded in the measure's signature; options that
change only speed or memory (batch size, threads, the cache folder ``cache_dir``) are not.

Examples
--------
>>> parse_assignment("bertscore.num_layers=17")
('bertscore', 'num_layers', '17')
>>> parse_value("bertscore.idf", "bool", "yes")
True
>>> parse_value("bertscore.num_layers", "int", "seventeen")
Traceback (most recent call last):
...
simscore.errors.MeasureOptionError: bertscore.num_layers: expected an integer, got 'seventeen'
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from simscore.errors import MeasureOptionError

__all__ = [
    "MeasureOption", "OptionKind", "parse_assignment", "parse_value", "check_option_names", "DEVICE_OPTION",
    "CACHE_DIR_OPTION",
]

#: What an option's value is: ``strings`` is a list of str (on the command line: a UTF-8 text
#: file with one entry per line).
OptionKind = Literal["bool", "int", "float", "str", "path", "device", "strings"]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
class MeasureOption:
    """One option of a measure: the kind of its value and what it does."""

    kind: OptionKind
    help: str


#: The ``device`` option every model-backed measure shares (``--device`` sets it for all).
DEVICE_OPTION = MeasureOption("device", "torch device: 'cpu', 'cuda' or 'cuda:N' (checked before any work)")
#: The ``cache_dir`` option every embedding measure shares (``--cache-dir`` sets it for all):
#: a folder of embeddings kept between runs (:mod:`simscore.measures.disk_cache`); speed only.
CACHE_DIR_OPTION = MeasureOption("path", "a folder that keeps the embeddings between runs (speed only)")


def parse_assignment(text: str) -> tuple[str, str, str]:
    """``"MEASURE.OPTION=VALUE"`` -> ``(measure, option, value)`` (the value may hold ``=`` and ``.``).

    >>> parse_assignment("bertscore.baseline_path=/data/roberta.tsv")
    ('bertscore', 'baseline_path', '/data/roberta.tsv')
    """
    head, sep, value = text.partition("=")
    measure, dot, option = head.strip().partition(".")
    if not sep or not dot or not measure or not option:
        raise MeasureOptionError(
            f"expected MEASURE.OPTION=VALUE (e.g. bertscore.model=/models/roberta-large), got {text!r}"
        )
    return measure, option.strip(), value


def parse_value(where: str, kind: OptionKind, text: str) -> Any:
    """The value of an option given as text (command line), as its kind says.

    ``bool`` takes true/false, yes/no, on/off, 1/0; ``strings`` reads a UTF-8 text file, one
    entry per line (blank lines skipped); ``path``, ``str`` and ``device`` stay strings (the
    measure checks them).
    """
    value = text.strip()
    if kind == "bool":
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise MeasureOptionError(f"{where}: expected true or false, got {text!r}")
    if kind == "int":
        try:
            return int(value)
        except ValueError:
            raise MeasureOptionError(f"{where}: expected an integer, got {text!r}") from None
    if kind == "float":
        try:
            return float(value)
        except ValueError:
            raise MeasureOptionError(f"{where}: expected a number, got {text!r}") from None
    if kind == "strings":
        path = Path(value)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise MeasureOptionError(f"{where}: expected a UTF-8 text file, one entry per line: {exc}") from None
        return [line for line in lines if line.strip()]
    if not value:
        raise MeasureOptionError(f"{where}: expected a value, got nothing")
    return value


def check_option_names(measure: str, given: Iterable[str], known: Mapping[str, MeasureOption]) -> None:
    """Raise :class:`~simscore.errors.MeasureOptionError` for an option ``measure`` does not have.

    >>> check_option_names("bertscore", ["num_layer"], {"num_layers": MeasureOption("int", "")})
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: bertscore has no option 'num_layer'; did you mean 'num_layers'? (options: num_layers)
    """
    for name in given:
        if name not in known:
            if not known:
                raise MeasureOptionError(f"{measure} has no options, got {name!r}")
            close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MeasureOptionError(f"{measure} has no option {name!r}{hint} (options: {', '.join(known)})")
