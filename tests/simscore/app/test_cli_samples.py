"""``simscore respond --samples K`` (reproducible from the seed) and ``simscore compare`` of sampled files.

The ``hf:`` policy's samples are tested in ``test_cli_respond.py`` beside its other options (one tiny model).
"""

from __future__ import annotations

import json

import pytest

from contexts import GridSpec, generate_grid
from policies import RandomPolicy, SummaryPolicyAdapter
from simscore import run_policy
from simscore.app.cli import main
from simscore.samples import SampledResponses, sample_seed


@pytest.fixture(scope="module")
def grid():
    return generate_grid(GridSpec(levels=(0.0, 1.0), slots=("area",)))


@pytest.fixture()
def contexts(tmp_path, grid):
    grid.to_jsonl(tmp_path / "C_gen.jsonl")
    return tmp_path / "C_gen.jsonl"


def run(*argv: object) -> int:
    return main([*map(str, argv)])


def test_random_samples_are_reproducible_from_the_seed(contexts, grid, tmp_path, capsys):
    out = {name: tmp_path / f"{name}.jsonl" for name in ("s1", "s1again", "s2", "single", "one")}
    assert run("respond", "random", contexts, "--samples", 3, "--seed", 1, "--out", out["s1"]) == 0
    assert f"wrote 3 x {len(grid)} responses of 'random'" in capsys.readouterr().out
    assert run("respond", "random", contexts, "--samples", 3, "--seed", 1, "--out", out["s1again"]) == 0
    assert run("respond", "random", contexts, "--samples", 3, "--seed", 2, "--out", out["s2"]) == 0
    assert out["s1"].read_bytes() == out["s1again"].read_bytes()
    assert out["s1"].read_bytes() != out["s2"].read_bytes()
    drawn = SampledResponses.read_jsonl(out["s1"])
    assert drawn.n_samples == 3 and drawn.provenance["samples"] == {
        "count": 3, "seed": 1, "drawn": True, "seeds": "simscore.samples.sample_seed(seed, k)"}
    for k in range(3):  # sample k is the random policy seeded with sample_seed(1, k)
        expected = run_policy(SummaryPolicyAdapter(RandomPolicy(seed=sample_seed(1, k))), grid)
        assert dict(drawn.sample(k)) == dict(expected)
    # --samples 1 writes today's file, byte for byte
    assert run("respond", "random", contexts, "--seed", 1, "--out", out["single"]) == 0
    assert run("respond", "random", contexts, "--seed", 1, "--samples", 1, "--out", out["one"]) == 0
    assert out["single"].read_bytes() == out["one"].read_bytes()
    assert json.loads(out["single"].read_text().splitlines()[0])["version"] == 1


def test_deterministic_policies_write_copies(contexts, tmp_path, capsys):
    assert run("respond", "handcrafted", contexts, "--samples", 2, "--out", tmp_path / "h.jsonl") == 0
    assert "handcrafted policy 'handcrafted' is deterministic: its 2 samples are copies" in capsys.readouterr().err
    copies = SampledResponses.read_jsonl(tmp_path / "h.jsonl")
    assert all(drawn[0] == drawn[1] for drawn in copies.values())
    assert copies.provenance["samples"]["drawn"] is False


def test_bad_sample_options(contexts, tmp_path, capsys):
    # argparse: K < 1, and K above the limit refused where it is read, before any copy is built
    for k in (0, 10_001, 10_000_000):
        with pytest.raises(SystemExit) as exit_code:
            run("respond", "handcrafted", contexts, "--samples", k, "--out", tmp_path / "x.jsonl")
        assert exit_code.value.code == 2
        assert (f"argument --samples: expected an integer from 1 to 10,000 (simscore.samples.MAX_SAMPLES), got '{k}'"
                in capsys.readouterr().err)
    assert run("respond", "random", contexts, "--samples", 2, "--out", tmp_path / "x.csv") == 2
    assert "--samples K > 1 writes JSON Lines" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_compare_sampled_files(contexts, tmp_path, capsys):
    for name, extra in (("r1", ("--seed", 1)), ("r2", ("--seed", 2)), ("h", ())):
        kind = "handcrafted" if name == "h" else "random"
        assert run("respond", kind, contexts, "--samples", 3, *extra, "--out", tmp_path / f"{name}.jsonl") == 0
    assert run("respond", "random", contexts, "--samples", 2, "--out", tmp_path / "two.jsonl") == 0
    capsys.readouterr()
    assert run("compare", tmp_path / "r1.jsonl", tmp_path / "h.jsonl", "--measures", "tmr,dmr", "--permutations", 199,
               "--resamples", 200, "--chance-responses", tmp_path / "r2.jsonl", "--out", tmp_path / "c.json") == 0
    text = capsys.readouterr().out
    assert "(12 contexts, 3 samples each)" in text and "self-consistency (3 samples per context)" in text
    assert "B per context: 1.00 distinct actions, 0.00 bits act entropy" in text
    document = json.loads((tmp_path / "c.json").read_text())
    table = document["consistency"]["table"]
    assert table["tmr"]["within_b"] == 1.0 and table["tmr"]["chance"] is not None
    assert document["summary"]["tmr"]["mean"] == table["tmr"]["between"]
    assert document["info"]["samples"] == 3 and document["consistency"]["info"]["n_permutations"] == 199
    assert run("compare", tmp_path / "r1.jsonl", tmp_path / "two.jsonl", "--measures", "tmr") == 2
    assert "'random' has 3, 'random' has 2 (run both with the same --samples K)" in capsys.readouterr().err
