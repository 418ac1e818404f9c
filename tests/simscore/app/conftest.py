"""The app tests' expensive things, each built once per session: the tiny experiment, finished.

:data:`TINY` (two reward models, two seeds, 60 dialogues: 4 GP-SARSA trainings) is run once,
with its figures, and :data:`HELD` (the same with held-out users) is made from a copy of it:
its trainings, C_col and responses are TINY's, reused by the runner as any re-run reuses
them, and only the held-out pieces and what is made from them are new. Both are built once in a test
run, shared by pytest-xdist's workers (:func:`tests.once.built_once`). Tests read the
folders; a test that writes copies one first. Tests that assert nothing
about figures take :func:`figures_off`; the figures of both runs are drawn for real and
checked (``test_outputs``, ``test_held_out_pieces_tables_and_report``).
"""

from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from simscore.app.runner import run_experiment
from tests.once import built_once
from tests.simscore.app.experiments import HELD, TINY


def _png_1x1() -> bytes:
    """A valid PNG of one grey pixel."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)  # 1 x 1, 8-bit greyscale
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x80")) \
        + chunk(b"IEND", b"")


#: What a figure is while figures are off.
PLACEHOLDER_PNG = _png_1x1()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """:data:`TINY` run once, figures included: its folder and its report (read only: copy it to write)."""
    out = built_once(tmp_path_factory, "tiny-run", lambda folder: run_experiment(TINY, folder, n_jobs=1,
                                                                                   progress=False))
    return out, out / "report.md"


@pytest.fixture(scope="session")
def held_run(tiny_run: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`HELD` run on a copy of :func:`tiny_run`'s folder, figures included (read only: copy it to write)."""
    def build(folder: Path) -> None:
        shutil.copytree(tiny_run[0], folder)
        run_experiment(HELD, folder, n_jobs=1, progress=False)

    return built_once(tmp_path_factory, "held-run", build)


@pytest.fixture
def figures_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The experiment's figures are not drawn: each figure a run would draw is a 1 x 1 placeholder.

    :func:`simscore.plots.make_figures` is replaced by one that writes :data:`PLACEHOLDER_PNG`
    under the name of every figure it would draw (:func:`simscore.plots.figures_of`), so the
    report links the same files and the runner's record of what made them is kept as with
    real figures. For tests that check the runner's bookkeeping and the tables, not figures.
    """
    from simscore import plots

    def placeholders(directory: Any, tables: Mapping[str, Any], **_: Any) -> dict[str, Path]:
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = {}
        for name in plots.figures_of(tables):
            written[name] = out / f"{name}.png"
            written[name].write_bytes(PLACEHOLDER_PNG)
        return written

    monkeypatch.setattr(plots, "make_figures", placeholders)
