"""``simscore contexts flows ...`` end to end, and ``simscore compare --contexts --by``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from contexts.belief import BeliefState
from contexts.context import ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn, write_dialogue_log
from simscore import Act, Response, Responses
from simscore.app.cli import main
from tests.conftest import CONVLAB


def _turn(index: int, user_act: str | None = None, **slots: str) -> DialogueTurn:
    return DialogueTurn(turn_index=index, belief=BeliefState(slots={s: {v: 1.0} for s, v in slots.items()}),
                        user_act=user_act, system_act="request(area)" if index else "hello()")


def _logs(folder: Path) -> tuple[Path, Path]:
    train = [
        Dialogue(f"t{i}", (_turn(0), _turn(1, "inform(food=thai)", food="thai"),
                           _turn(2, "inform(area=north)", food="thai", area="north")))
        for i in range(3)
    ]
    test = [
        Dialogue("a", (_turn(0), _turn(1, "inform(food=thai)", food="thai"),
                       _turn(2, "inform(area=east)", food="thai", area="east"))),
        Dialogue("b", (_turn(0), _turn(1, "inform(food=thai,area=east)", food="thai", area="east"))),
        Dialogue("c", (_turn(0), _turn(1, "inform(area=east)", area="east"),
                       _turn(2, "inform(area=east)", area="east"))),
    ]
    write_dialogue_log(folder / "train.jsonl", train, domain="restaurants", source={"name": "train"})
    write_dialogue_log(folder / "test.jsonl", test, domain="restaurants", source={"name": "test"})
    return folder / "train.jsonl", folder / "test.jsonl"


def test_build_label_summary_sample_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, test = _logs(tmp_path)
    graph, contexts, labelled = tmp_path / "g.json", tmp_path / "c.jsonl", tmp_path / "l.jsonl"
    assert main(["contexts", "flows", "build", str(train), "-o", str(graph)]) == 0
    assert "nodes=2, edges=3, dialogues=3" in capsys.readouterr().out
    assert main(["contexts", "collect", str(test), "-o", str(contexts)]) == 0
    assert main(["contexts", "flows", "label", str(contexts), "--graph", str(graph), "--dialogues", str(test),
                 "-o", str(labelled)]) == 0
    out = capsys.readouterr().out
    # a: thai, then east too (values are ignored: a seen flow); b: both at once (an unseen edge);
    # c: an area first (an unseen node)
    assert "wrote 8 labelled contexts" in out and "5 on unseen flows (62.5%), 2 of 3 dialogues unseen" in out
    flows = {c.id: (c.metadata["flow"], c.metadata["flow_prefix"], c.metadata["flow_exit"])
             for c in ContextSet.read_jsonl(labelled)}
    assert flows["col/test/a/2"] == ("seen", "seen", None)
    assert flows["col/test/b/0"] == ("unseen", "seen", "edge") and flows["col/test/b/1"] == ("unseen", "unseen", "edge")
    assert flows["col/test/c/2"] == ("unseen", "unseen", "node")

    assert main(["contexts", "flows", "summary", str(labelled), "--graph", str(graph)]) == 0
    out = capsys.readouterr().out
    assert "graph: per-domain, 2 nodes" in out and "dialogues: 3, unseen flow 2 (66.7%)" in out
    assert main(["contexts", "flows", "summary", str(labelled), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["patterns"]["repeat"]["contexts"] == 1 and summary["patterns"]["multi_slot"]["contexts"] == 1
    assert main(["contexts", "flows", "summary", "--graph", str(graph), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["graph"]["edges"] == 3

    sample = tmp_path / "s.jsonl"
    assert main(["contexts", "flows", "sample", str(labelled), "--by", "flow_prefix", "--seed", "1",
                 "-o", str(sample)]) == 0
    assert "wrote 6 contexts (3 of each of seen (5), unseen (3))" in capsys.readouterr().out
    assert main(["contexts", "flows", "plot", "--graph", str(graph), "--test", str(test),
                 "-o", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_outputs_are_checked_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, _ = _logs(tmp_path)
    graph = tmp_path / "g.json"
    assert main(["contexts", "flows", "build", str(train), "-o", str(train), "--force"]) == 2
    assert "is also an input" in capsys.readouterr().err
    graph.write_text("keep")
    assert main(["contexts", "flows", "build", str(train), "-o", str(graph)]) == 2
    assert "exists; use --force" in capsys.readouterr().err and graph.read_text() == "keep"
    assert main(["contexts", "flows", "build", str(train), "-o", str(graph), "--force"]) == 0
    assert main(["contexts", "flows", "plot", "--graph", str(graph), "-o", str(graph), "--force"]) == 2
    assert main(["contexts", "flows", "build", str(train), "--split", "train", "-o", str(tmp_path / "x.json")]) == 2
    assert "--split applies to --convlab input only" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_build_from_convlab_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(CONVLAB))
    for dialogue, split in zip(data, ("train", "train", "test")):
        dialogue["data_split"] = split
    source = tmp_path / "dialogues.json"
    source.write_text(json.dumps(data))
    graph = tmp_path / "g.json"
    assert main(["contexts", "flows", "build", "--convlab", "--split", "train", "--domain-agnostic", str(source),
                 "-o", str(graph)]) == 0
    # the hotel-only dialogue has no turn pair (source to sink); the other fills {area, food, price range}
    # three times (the hotel's area rides along), then {area, food}
    assert "FlowGraph(domain-agnostic, nodes=2, edges=5, dialogues=2)" in capsys.readouterr().out


def test_compare_by_stratum(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, test = _logs(tmp_path)
    graph, contexts, labelled = tmp_path / "g.json", tmp_path / "c.jsonl", tmp_path / "l.jsonl"
    main(["contexts", "flows", "build", str(train), "-o", str(graph)])
    main(["contexts", "collect", str(test), "-o", str(contexts)])
    main(["contexts", "flows", "label", str(contexts), "--graph", str(graph), "--dialogues", str(test),
          "-o", str(labelled)])
    capsys.readouterr()
    context_set = ContextSet.read_jsonl(labelled)
    same = Responses({c.id: Response(Act.parse("request(area)")) for c in context_set}, policy="A")
    # B agrees with A on the prefixes still in the graph and nowhere after
    other = Responses({c.id: Response(Act.parse("request(area)" if c.metadata["flow_prefix"] == "seen" else "bye()"))
                       for c in context_set}, policy="B")
    same.to_jsonl(tmp_path / "a.jsonl")
    other.to_jsonl(tmp_path / "b.jsonl")
    args = ["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr,dmr",
            "--contexts", str(labelled), "--by", "flow_prefix"]
    assert main([*args, "--no-cluster"]) == 0
    out = capsys.readouterr().out
    assert "by flow_prefix (0 contexts without a label left out; units: contexts)" in out
    assert re.search(r"tmr\s+seen\s+1\.0000", out) and re.search(r"tmr\s+unseen\s+0\.0000", out)
    assert "p = 0.0357 (exact)" in out  # 5 seen vs 3 unseen: one split of C(8, 3) = 56 as extreme, doubled
    assert "95% CI: percentile bootstrap, 8 contexts resampled" in out
    # collected contexts: by default the units are dialogues, as in the experiment's report; the
    # strata's are a dialogue's contexts in one stratum: seen a, b/0, c/0; unseen b/1, c/1-2. One
    # split of C(5, 2) = 10 as extreme, doubled
    assert main(args) == 0
    out = capsys.readouterr().out
    assert ("by flow_prefix (0 contexts without a label left out; units: dialogue cells of one stratum "
            "(by source_name, dialogue_id))") in out
    assert "p = 0.2 (exact)" in out
    assert "95% CI: percentile bootstrap, 3 dialogues resampled (by source_name, dialogue_id)" in out
    out_file = tmp_path / "cmp.json"
    assert main([*args, "--out", str(out_file), "--cluster", "dialogue_id"]) == 0
    data = json.loads(out_file.read_text())
    assert data["strata"]["info"]["cluster"] == ["dialogue_id"] and data["scores"][0]["flow_prefix"] == "seen"
    assert main([*args, "--out", str(out_file)]) == 2
    assert "exists; use --force" in capsys.readouterr().err
    assert main([*args, "--out", str(labelled), "--format", "json", "--force"]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--by", "flow"]) == 2
    assert "--by, --cluster and --divergence need --contexts" in capsys.readouterr().err
    # --cluster without --by: the summary's intervals resample the named units
    assert main([*args[:-2], "--cluster", "dialogue_id"]) == 0
    assert "95% CI: percentile bootstrap, 3 dialogues resampled (by dialogue_id)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main([*args, "--cluster", "dialogue_id", "--no-cluster"])
    assert exited.value.code == 2
    assert "argument --no-cluster: not allowed with argument --cluster" in capsys.readouterr().err
    # a --by or --cluster column the context set lacks: one message naming its columns, before any scoring
    assert main([*args[:-1], "nosuchcolumn"]) == 2
    err = capsys.readouterr().err
    assert err == (f"simscore compare: error: --by 'nosuchcolumn': the context set {labelled} has no such column "
                   "(it has: source, dialogue_id, turn_index, method, history_length, flow, flow_exit, flow_exit_turn, "
                   "flow_prefix, pattern_clarify, pattern_goal_change, pattern_multi_slot, pattern_repeat, "
                   "source_name)\n")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert main([*args, "--cluster", "source_name,dialog"]) == 2
    assert f"error: --cluster 'dialog': the context set {labelled} has no such column" in capsys.readouterr().err


def test_the_same_dialogue_file_twice_is_refused_however_spelt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, test = _logs(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.jsonl").symlink_to(train)
    os.link(train, tmp_path / "hard.jsonl")
    graph = tmp_path / "g.json"
    for again in (train, tmp_path / "sub" / ".." / "train.jsonl", tmp_path / "link.jsonl", tmp_path / "hard.jsonl"):
        assert main(["contexts", "flows", "build", str(train), str(again), "-o", str(graph)]) == 2
        assert capsys.readouterr().err == (
            f"simscore contexts: error: {again} is given twice (also as {train}): each dialogue file once, or its "
            "dialogues would be counted twice\n")
        assert not graph.exists()
    # label and plot read dialogue files the same way
    assert main(["contexts", "flows", "build", str(train), "-o", str(graph)]) == 0
    assert main(["contexts", "flows", "plot", "--graph", str(graph), "--test", str(test), str(test),
                 "-o", str(tmp_path / "f.png")]) == 2
    assert f"{test} is given twice (also as {test})" in capsys.readouterr().err


def test_a_dialogue_in_two_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, _ = _logs(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(train.read_bytes())  # another file, the same dialogues (source "train", ids t0-t2)
    assert main(["contexts", "flows", "build", str(train), str(copy), "-o", str(tmp_path / "g.json")]) == 2
    assert capsys.readouterr().err == (
        f"simscore contexts: error: dialogue 't0' of source 'train' is in both {train} and {copy}: a dialogue counts "
        "once; give each dialogue once (dialogues of different sources need distinct source names: a log's "
        "source.name, a ConvLab file's dataset)\n")
    # the same ids under another source name are other dialogues
    other = [Dialogue(f"t{i}", (_turn(0), _turn(1, "inform(area=east)", area="east"))) for i in range(2)]
    write_dialogue_log(tmp_path / "other.jsonl", other, domain="restaurants", source={"name": "other"})
    assert main(["contexts", "flows", "build", str(train), str(tmp_path / "other.jsonl"), "-o",
                 str(tmp_path / "g.json")]) == 0
    assert "dialogues=5" in capsys.readouterr().out
