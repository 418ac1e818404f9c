"""simscore.app.inspect.diagnose: degenerate vs real scores, verdicts, and the ``simscore diagnose`` files."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest

from contexts.generate import GridSpec, generate_grid
from policies.degenerate import ConstantPolicy, UniformActPolicy, degenerate_policies
from policies.handcrafted import HandcraftedPolicy
from policies.sim.simulation import SummaryPolicyAdapter
from simscore.app.cli import main
from simscore.app.cli.diagnose import add_subcommands
from simscore.app.inspect.diagnose import default_real_policies, diagnose
from simscore.errors import OutputExistsError
from simscore.policy import run_policy
from simscore.stats import Bootstrap

GRID = generate_grid(GridSpec(levels=(0.0, 0.5, 1.0)))


def _responses() -> tuple[dict, dict]:
    real = {name: run_policy(p, GRID, name=name) for name, p in default_real_policies().items()}
    degenerate = {name: run_policy(p, GRID, name=name) for name, p in degenerate_policies().items()}
    return real, degenerate


def test_constant_tmr_is_the_share_of_that_act() -> None:
    handcrafted = run_policy(SummaryPolicyAdapter(HandcraftedPolicy()), GRID, name="handcrafted")
    constant = run_policy(ConstantPolicy("confirm(area=centre)"), GRID, name="constant")
    share = sum(str(a) == "confirm(area=centre)" for a in handcrafted.actions()) / len(GRID)
    assert 0 < share < 1
    result = diagnose({"handcrafted": handcrafted}, {"constant": constant}, "action", bootstrap=Bootstrap(n_resamples=10))
    row = result.table.set_index(["a", "b", "measure"]).loc[("constant", "handcrafted", "tmr")]
    assert row["mean"] == pytest.approx(share) and row["count"] == len(GRID)
    # DMR: the share of any confirm
    dmr = result.table.set_index(["a", "measure"]).loc[("constant", "dmr"), "mean"]
    assert dmr == pytest.approx(sum(a.intent == "confirm" for a in handcrafted.actions()) / len(GRID))
    assert result.verdicts["real"].isna().all()  # one real policy: no real-vs-real pair


def test_pairs_and_verdicts() -> None:
    real, degenerate = _responses()
    result = diagnose(real, degenerate, ["tmr", "dmr"], tolerance=0.1, bootstrap=Bootstrap(n_resamples=10))
    table = result.table
    assert len(table) == (4 * 2 + 1) * 2 and result.n_contexts == len(GRID)
    assert set(table[table["kind"] == "real"][["a", "b"]].itertuples(index=False, name=None)) == {
        ("handcrafted", "handcrafted-c05")}
    real_tmr = table[(table["kind"] == "real") & (table["measure"] == "tmr")]["mean"].item()
    assert result.verdicts.loc["tmr", "real"] == real_tmr
    judged = table[(table["kind"] == "degenerate") & (table["a"] != "uniform")]
    for row in judged.itertuples():
        real_mean = result.verdicts.loc[row.measure, "real"]
        assert row.gamed == (row.mean >= real_mean - 0.1)
    assert not table[table["a"] == "uniform"]["gamed"].any()
    best = judged[judged["measure"] == "dmr"].sort_values("mean").iloc[-1]
    assert result.verdicts.loc["dmr", "best_score"] == best["mean"]
    gamed_by = {name for name in result.verdicts.loc["dmr", "gamed_by"].split(", ") if name}
    assert gamed_by == set(judged[(judged["measure"] == "dmr") & judged["gamed"]]["a"])


def test_bad_inputs() -> None:
    real, degenerate = _responses()
    with pytest.raises(ValueError, match="at least one real"):
        diagnose({}, degenerate, "action")
    with pytest.raises(ValueError, match="both"):
        diagnose(real, {"handcrafted": degenerate["echo"]}, "action")
    with pytest.raises(ValueError, match="nothing to compare"):
        diagnose({"handcrafted": real["handcrafted"]}, {}, "action")
    with pytest.raises(ValueError, match="tolerance"):
        diagnose(real, degenerate, "action", tolerance=-1)
    other = run_policy(UniformActPolicy(), generate_grid(GridSpec(levels=(0.0, 1.0))), name="u")
    with pytest.raises(Exception, match="context"):
        diagnose(real, {"u": other}, "action")


def test_cli_writes_the_files_and_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "diag"
    argv = ["diagnose", "--out", str(out), "--measures", "action", "--quiet"]
    assert main(argv) == 0
    assert "report:" in capsys.readouterr().out
    table = pd.read_csv(out / "diagnose.csv")
    assert set(table["measure"]) == {"tmr", "dmr", "cer", "cmr"} and len(table) == 9 * 4
    assert (out / "diagnose.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (out / "diagnose.md").read_text()
    assert "| constant | handcrafted | degenerate |" in report and "gamed" in report
    before = (out / "diagnose.csv").read_bytes()
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*argv, "--force", "--seed", "3"]) == 0
    after = pd.read_csv(out / "diagnose.csv")
    uniform = after[after["a"] == "uniform"]["mean"].to_numpy()
    assert (out / "diagnose.csv").read_bytes() != before and not (uniform == table[table["a"] == "uniform"]["mean"]).all()


def test_cli_with_a_responses_file(tmp_path: Path) -> None:
    path = tmp_path / "hc.jsonl"
    run_policy(SummaryPolicyAdapter(HandcraftedPolicy(confirm_below=0.3), name="hc03"), GRID).to_jsonl(path)
    out = tmp_path / "diag"
    assert main(["diagnose", "--out", str(out), "--measures", "tmr", "--quiet", "--no-handcrafted",
                 "--responses", f"hc03={path}"]) == 0
    table = pd.read_csv(out / "diagnose.csv")
    assert set(table["b"]) == {"hc03"} and set(table["kind"]) == {"degenerate"}
    with pytest.raises(OutputExistsError):
        from simscore.app.inspect.diagnose import write_diagnose  # the library refuses too

        write_diagnose(diagnose({"hc03": run_policy(ConstantPolicy(), GRID)}, {"u": run_policy(UniformActPolicy(), GRID)},
                                "tmr"), out)


def test_parser_rejects_bad_arguments() -> None:
    parser = argparse.ArgumentParser()
    add_subcommands(parser.add_subparsers())
    for argv in (["diagnose"], ["diagnose", "--out", "d", "--responses", "nofile"],
                 ["diagnose", "--out", "d", "--levels", "a,b"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    assert main(["diagnose", "--out", "d", "--measures", "bleu"]) == 2


@pytest.mark.parametrize("value", ["nan", "-1", "x"])
def test_a_bad_tolerance_is_an_argument_error_before_any_work(value: str, tmp_path, capsys) -> None:
    from simscore.app.cli import main

    with pytest.raises(SystemExit):
        main(["diagnose", "--out", str(tmp_path / "d"), "--tolerance", value])
    assert f"argument --tolerance: expected a number >= 0, got '{value}'" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
