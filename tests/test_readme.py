"""The documentation's seeded stable-baselines3 example does what its page says it does.

The example moved from the README to the guide page on reinforcement learning
(``docs/guide/rl.md``); ``tests/test_docs_guides.py`` runs the other python blocks of the
README and the guide pages.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "rl.md"
TEXT = PAGE.read_text(encoding="utf-8")


def _python_block(containing: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
    matching = [block for block in blocks if containing in block]
    assert len(matching) == 1, f"expected one python block with {containing!r}, found {len(matching)}"
    return matching[0]


@pytest.mark.slow
@pytest.mark.extra("sb3")
def test_the_seeded_sb3_example_stops_where_its_page_says():
    import torch

    code = _python_block("BehaviourConvergenceCallback(")
    stated = int(re.search(r"seed 0: stops at step (\d+)", code).group(1))
    assert f"it stops at step {stated:,}" in TEXT
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        namespace: dict = {}
        exec(compile(code, str(PAGE), "exec"), namespace)  # the page's own lines, unchanged
    finally:
        torch.set_num_threads(threads)
    stop = namespace["stop"]
    assert stop.stopped_at == stated
    assert namespace["model"].num_timesteps == stated
