"""Tests of simscore.app.cli.contexts: ``simscore contexts gen / collect / info``."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import pytest

from contexts.context import ContextSet
from simscore.app.cli.contexts import add_subcommands
from simscore.errors import FileFormatError, InvalidContextError, OutputExistsError

Lines = list[dict[str, Any]]


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_subcommands(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def _write_log(path: Path, lines: Lines) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_gen_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c_gen.jsonl"
    assert run(["contexts", "gen", "--out", str(out)]) == 0
    assert "wrote 1296 contexts" in capsys.readouterr().out
    cs = ContextSet.read_jsonl(out)
    assert len(cs) == 1296 and cs.name == "C_gen"


def test_gen_options(tmp_path: Path) -> None:
    out = tmp_path / "small.jsonl"
    argv = ["contexts", "gen", "-o", str(out), "--levels", "0,0.5,1", "--slots", "area,food",
            "--value", "food=thai", "--methods", "byname,none", "--name", "small"]
    assert run(argv) == 0
    cs = ContextSet.read_jsonl(out)
    assert len(cs) == 3 * 3 * 2 and cs.name == "small"
    assert cs["gen/area=0.5/food=1.0/method=byname"].belief.top("food") == ("thai", 1.0)


def test_gen_bad_options(tmp_path: Path) -> None:
    out = tmp_path / "bad.jsonl"
    with pytest.raises(InvalidContextError, match="levels: level must be <= 1.0, got 2.0"):
        run(["contexts", "gen", "-o", str(out), "--levels", "0,2"])
    with pytest.raises(InvalidContextError, match="--ontology and --venues must be given together"):
        run(["contexts", "gen", "-o", str(out), "--ontology", "x.json"])
    assert not out.exists()
    with pytest.raises(SystemExit):
        run(["contexts", "gen", "-o", str(out), "--levels", "a,b"])


def test_gen_custom_domain(tmp_path: Path) -> None:
    ontology = tmp_path / "o.json"
    ontology.write_text(json.dumps({"informable": {"area": ["north"], "pricerange": ["cheap"], "food": ["thai"]}}))
    venues = tmp_path / "v.json"
    row = {"id": 1, "name": "x", "addr": "a", "area": "north", "food": "thai", "phone": "1",
           "pricerange": "cheap", "postcode": "p", "signature": "s", "description": "d"}
    venues.write_text(json.dumps([row]))
    out = tmp_path / "g.jsonl"
    assert run(["contexts", "gen", "-o", str(out), "--ontology", str(ontology), "--venues", str(venues),
                "--levels", "1", "--methods", "none"]) == 0
    cs = ContextSet.read_jsonl(out)
    assert cs.domain == "o" and cs.ids == ("gen/area=1.0/pricerange=1.0/food=1.0/method=none",)


def test_collect_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str], log_lines: Lines) -> None:
    log = _write_log(tmp_path / "log.jsonl", log_lines)
    out = tmp_path / "c_col.jsonl"
    assert run(["contexts", "collect", str(log), "-o", str(out), "--dialogues-per-source", "1"]) == 0
    assert "wrote 4 contexts from 1 dialogues" in capsys.readouterr().out
    assert ContextSet.read_jsonl(out).ids[0] == "col/sim-a/d1/0"
    with pytest.raises(OutputExistsError, match="exists; use --force"):
        run(["contexts", "collect", str(log), "-o", str(out), "--deduplicate"])
    assert run(["contexts", "collect", str(log), "-o", str(out), "--deduplicate", "--force"]) == 0
    assert len(ContextSet.read_jsonl(out)) == 4


def test_collect_never_writes_over_its_input(tmp_path: Path, log_lines: Lines) -> None:
    log = _write_log(tmp_path / "log.jsonl", log_lines)
    before = log.read_bytes()
    for argv in (["-o", str(log)], ["-o", str(tmp_path / "." / "log.jsonl"), "--force"]):
        with pytest.raises(OutputExistsError, match="is also an input: refusing to write over it"):
            run(["contexts", "collect", str(log), *argv])
    assert log.read_bytes() == before


def test_gen_checks_the_output_before_the_work(tmp_path: Path) -> None:
    out = tmp_path / "gen.jsonl"
    assert run(["contexts", "gen", "-o", str(out), "--levels", "0,1"]) == 0
    with pytest.raises(OutputExistsError, match="exists"):
        run(["contexts", "gen", "-o", str(out), "--levels", "0,1"])
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        if not os.access(read_only, os.W_OK):  # (root may write anywhere)
            with pytest.raises(PermissionError, match="is not writable"):
                run(["contexts", "gen", "-o", str(read_only / "gen.jsonl")])
    finally:
        read_only.chmod(0o700)


def test_collect_convlab(tmp_path: Path, convlab_dialogues: Lines, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "dialogues.json"
    data.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    out = tmp_path / "c_col.jsonl"
    assert run(["contexts", "collect", "--convlab", str(data), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "wrote 5 contexts from 2 dialogues" in captured.out
    # the hotel-only dialogue is reported, on stderr, with counts and the reason
    assert captured.err.startswith(f"simscore contexts collect: warning: {data}: skipped 1 of 3 dialogues (0 turns): ")
    assert "lacks 'restaurant' (domains they have: hotel (1))" in captured.err
    contexts = ContextSet.read_jsonl(out)
    assert len(contexts) == 5
    assert contexts.contexts[0].metadata["user_action"][0] == ("inform", "restaurant", "food", "thai")
    with pytest.raises(InvalidContextError, match="--convlab and --pydial input only"):
        run(["contexts", "collect", str(data), "-o", str(tmp_path / "new.jsonl"), "--skip-unknown-values"])
    with pytest.raises(InvalidContextError, match="--convlab-domain applies to --convlab input only"):
        run(["contexts", "collect", str(data), "-o", str(tmp_path / "new.jsonl"), "--convlab-domain", "hotel"])
    with pytest.raises(InvalidContextError, match="--convlab and --pydial exclude each other"):
        run(["contexts", "collect", str(data), "-o", str(tmp_path / "new.jsonl"), "--convlab", "--pydial"])


def test_collect_convlab_without_the_domain(tmp_path: Path, convlab_dialogues: Lines) -> None:
    from simscore.errors import NoContextsError

    data = tmp_path / "dialogues.json"
    data.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    out = tmp_path / "hotel.jsonl"
    with pytest.raises(NoContextsError, match="no dialogue of domain 'train': all 3 dialogues \\(12 turns\\) were skipped"):
        run(["contexts", "collect", "--convlab", "--convlab-domain", "train", str(data), "-o", str(out)])
    assert not out.exists()


def test_collect_convlab_through_main_exits_2(tmp_path: Path, convlab_dialogues: Lines,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from simscore.app.cli import main

    data = tmp_path / "dialogues.json"
    data.write_text(json.dumps(convlab_dialogues[1:2]), encoding="utf-8")
    assert main(["contexts", "collect", "--convlab", str(data), "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simscore contexts: error: ") and "no dialogue of domain 'restaurant'" in err


def test_collect_pydial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header = {"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": "pd"}}
    belief = {"beliefs": {"food": {"thai": 1.0, "**NONE**": 0.0}, "method": {"byconstraints": 1.0}},
              "features": {"lastInformedVenue": "pizza hut", "offerHappened": True, "lastActionInformNone": False},
              "userActs": [["inform(food=thai)", 1.0]]}
    lines = [header, {"dialogue_id": "d", "turn_index": 0, "belief": {"beliefs": {}}, "system_text": "Hi."},
             {"dialogue_id": "d", "turn_index": 1, "belief": belief, "user_text": "Thai."}]
    log = _write_log(tmp_path / "beliefs.jsonl", lines)
    out = tmp_path / "c.jsonl"
    with pytest.raises(FileFormatError, match="line 3: lastInformedVenue 'pizza hut' is not a venue name"):
        run(["contexts", "collect", "--pydial", str(log), "-o", str(out)])
    assert run(["contexts", "collect", "--pydial", "--skip-unknown-values", str(log), "-o", str(out)]) == 0
    assert "wrote 2 contexts from 1 dialogues" in capsys.readouterr().out
    cs = ContextSet.read_jsonl(out)
    assert cs.ids == ("col/pd/d/0", "col/pd/d/1")
    assert cs["col/pd/d/1"].metadata["user_acts"] == (("inform(food=thai)", 1.0),)
    assert cs["col/pd/d/1"].belief.offer_happened is True


def test_export_convlab_states(tmp_path: Path, convlab_dialogues: Lines, capsys: pytest.CaptureFixture[str]) -> None:
    from policies.convlab import read_convlab_states, to_convlab_state

    data = tmp_path / "dialogues.json"
    data.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    contexts = tmp_path / "c_col.jsonl"
    run(["contexts", "collect", "--convlab", str(data), "-o", str(contexts)])
    states = tmp_path / "states.jsonl"
    assert run(["contexts", "export", "--format", "convlab2", str(contexts), "--out", str(states)]) == 0
    assert f"wrote 5 ConvLab-2 states ('restaurant' domain) of {contexts} to {states}" in capsys.readouterr().out
    header, pairs = read_convlab_states(states)
    cs = ContextSet.read_jsonl(contexts)
    assert header["state_format"] == "convlab2" and header["contexts"]["content_hash"] == cs.content_hash
    assert [cid for cid, _ in pairs] == list(cs.ids)
    assert pairs[0][1] == to_convlab_state(cs.contexts[0], state_format="convlab2")
    assert pairs[0][1]["user_action"] == [["Inform", "Restaurant", "Food", "thai"], ["Inform", "Restaurant", "Price", "cheap"]]
    with pytest.raises(OutputExistsError, match="exists; use --force"):
        run(["contexts", "export", "--format", "convlab3", str(contexts), "-o", str(states)])
    with pytest.raises(OutputExistsError, match="is also an input"):
        run(["contexts", "export", "--format", "convlab3", str(contexts), "-o", str(contexts), "--force"])
    assert run(["contexts", "export", "--format", "convlab3", str(contexts), "-o", str(states),
                "--min-probability", "0.5", "--convlab-domain", "restaurant", "--force"]) == 0
    assert read_convlab_states(states)[1][0][1]["belief_state"]["restaurant"]["price range"] == "cheap"
    with pytest.raises(SystemExit):
        run(["contexts", "export", str(contexts), "-o", str(states)])  # --format is required
    with pytest.raises(SystemExit):
        run(["contexts", "export", "--format", "convlab1", str(contexts), "-o", str(states)])
    with pytest.raises(SystemExit):
        run(["contexts", "export", "--format", "convlab3", str(contexts), "-o", str(states), "--min-probability", "1"])


def test_export_refuses_an_unknown_convlab_domain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from simscore.app.cli import main

    contexts = tmp_path / "c.jsonl"
    assert main(["contexts", "gen", "--levels", "0,1", "--out", str(contexts)]) == 0
    capsys.readouterr()
    states = tmp_path / "states.jsonl"
    with pytest.raises(SystemExit) as info:
        main(["contexts", "export", "--format", "convlab3", str(contexts), "-o", str(states),
              "--convlab-domain", "restaurnat"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "simscore contexts export: error: argument --convlab-domain: unknown ConvLab domain 'restaurnat'; did you "
        "mean 'restaurant'? (known: attraction, hospital, hotel, police, restaurant, taxi, train)")
    assert not states.exists()
    assert main(["contexts", "export", "--format", "convlab2", str(contexts), "-o", str(states),
                 "--convlab-domain", "police"]) == 0


def test_collect_bad_log_writes_nothing(tmp_path: Path, log_lines: Lines) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(log_lines[0]) + "\n" + '{"dialogue_id": "x", "turns": [\n', encoding="utf-8")
    out = tmp_path / "c_col.jsonl"
    with pytest.raises(FileFormatError, match="line 2: invalid JSON"):
        run(["contexts", "collect", str(bad), "-o", str(out)])
    assert not out.exists()


def test_info(tmp_path: Path, capsys: pytest.CaptureFixture[str], log_lines: Lines) -> None:
    log = _write_log(tmp_path / "log.jsonl", log_lines)
    out = tmp_path / "c_col.jsonl"
    run(["contexts", "collect", str(log), "-o", str(out)])
    capsys.readouterr()
    assert run(["contexts", "info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "'C_col', domain 'restaurants', 6 contexts" in text
    assert "built by:     contexts.collect_contexts" in text
    assert run(["contexts", "info", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["by_source"] == {"col": 6}
    assert summary["by_turn"] == {"0": 2, "1": 2, "2": 1, "3": 1}
    assert summary["by_method"] == {"byconstraints": 3, "none": 2, "byname": 1}
    gen = tmp_path / "g.jsonl"
    run(["contexts", "gen", "-o", str(gen), "--levels", "0,1", "--methods", "none"])
    capsys.readouterr()
    run(["contexts", "info", str(gen), "--json"])
    assert json.loads(capsys.readouterr().out)["by_turn"] == {"-": 8}


def test_info_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"format": "simscore-contexts", "version": 9, "name": "x"}\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 1: unsupported format version 9"):
        run(["contexts", "info", str(path)])


def test_info_and_export_check_the_beliefs_against_the_domain(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    header = {"format": "simscore-contexts", "version": 1, "name": "x"}
    record = {"id": "c1", "belief": {"slots": {"area": {"atlantis": 1.0}}}, "metadata": {"source": "gen"}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 2: context 'c1': slot 'area': unknown value 'atlantis'"):
        run(["contexts", "info", str(path)])
    with pytest.raises(FileFormatError, match="unknown value 'atlantis'"):
        run(["contexts", "export", "--format", "convlab3", str(path), "--out", str(tmp_path / "states.jsonl")])
    assert not (tmp_path / "states.jsonl").exists()
