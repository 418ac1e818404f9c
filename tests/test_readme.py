"""The README's code does what the README says it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _python_block(containing: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    matching = [block for block in blocks if containing in block]
    assert len(matching) == 1, f"expected one python block with {containing!r}, found {len(matching)}"
    return matching[0]


@pytest.mark.slow
@pytest.mark.extra("sb3")
def test_the_seeded_sb3_example_stops_where_the_readme_says():
    import torch

    code = _python_block("BehaviourConvergenceCallback(")
    stated = int(re.search(r"seed 0: stops at step (\d+)", code).group(1))
    assert f"it stops at step {stated:,}" in README
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        namespace: dict = {}
        exec(compile(code, "README.md", "exec"), namespace)  # the README's own lines, unchanged
    finally:
        torch.set_num_threads(threads)
    stop = namespace["stop"]
    assert stop.stopped_at == stated
    assert namespace["model"].num_timesteps == stated
