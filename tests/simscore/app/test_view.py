"""Tests of simscore.app.inspect.view: ``simscore view`` and :func:`write_view`."""

from __future__ import annotations

import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from simscore import Act, Response, Responses, compare
from simscore.app.cli import main
from simscore.app.inspect.view import read_comparison, view_data, write_view
from simscore.app.inspect.view_page import render_page
from simscore.errors import (
    ContextMismatchError,
    FileFormatError,
    InputMismatchError,
    OutputExistsError,
)
from simscore.stats import Bootstrap

ROOT = Path(__file__).resolve().parents[3]
EVIL = "</script><img src=x onerror=alert(1)><!-- \u2028 & done"


def _responses() -> tuple[Responses, Responses]:
    a = Responses(
        {
            "same": Response(Act.parse("request(area)"), "What part of town?"),
            "act": Response(Act.parse("request(food)"), "What kind of food?"),
            "text": Response(Act.parse("hello()"), "Hello."),
            "evil": Response(Act.parse("inform(name=x)"), EVIL),
        },
        policy="alpha",
        provenance={"seed": 1},
    )
    b = Responses(
        {
            "same": Response(Act.parse("request(area)"), "What part of town?"),
            "act": Response(Act.parse("request(area)"), "What part of town?"),
            "text": Response(Act.parse("hello()"), "Hi there."),
            "evil": Response(Act.parse("bye()"), "Goodbye."),
        },
        policy="beta",
    )
    return a, b


def _contexts() -> ContextSet:
    belief = BeliefState(
        slots={"area": {"centre": 0.8, "north": 0.15}, "food": {"thai": 0.6}},
        method={"byconstraints": 1.0},
        requested={"phone": 0.7},
    )
    return ContextSet(
        [
            Context(cid, belief, {"source": "col", "dialogue_id": "d1", "turn_index": turn,
                                  "history": ["thai food", f"in the centre {cid}"]})
            for turn, cid in enumerate(["same", "act", "text", "evil"])
        ],
        name="tiny",
    )


def _data(html: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match is not None
    return json.loads(match.group(1))


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    a, b = _responses()
    paths = {"a": tmp_path / "a.jsonl", "b": tmp_path / "b.jsonl", "cmp": tmp_path / "cmp.json",
             "ctx": tmp_path / "ctx.jsonl"}
    a.to_jsonl(paths["a"])
    b.to_jsonl(paths["b"])
    _contexts().to_jsonl(paths["ctx"])
    assert main(["compare", str(paths["a"]), str(paths["b"]), "--measures", "action", "--resamples", "50",
                 "--out", str(paths["cmp"])]) == 0
    return paths


def test_page_lists_differing_contexts_only(tmp_path: Path) -> None:
    a, b = _responses()
    path = write_view(compare(a, b), a, b, tmp_path / "page.html", contexts=_contexts())
    html = path.read_text(encoding="utf-8")
    data = _data(html)
    assert [row["id"] for row in data["rows"]] == ["act", "text", "evil"]
    assert data["total"] == 4 and (data["a"], data["b"]) == ("alpha", "beta")
    assert "What part of town?" not in {row["a"]["text"] for row in data["rows"]}
    assert "in the centre same" not in html  # the equal context's history is not in the page
    row = data["rows"][0]
    assert row["a"]["act"] == "request(food)" and row["b"]["act"] == "request(area)"
    assert row["scores"]["tmr"] == 0.0 and row["scores"]["dmr"] == 1.0
    assert row["turn"] == 1 and row["dialogue"] == "d1"
    assert row["history"] == [{"speaker": "system", "text": "thai food"}, {"speaker": "user", "text": "in the centre act"}]
    assert [row["differs"] for row in data["rows"]] == ["action", "wording", "action"]
    belief = row["belief"]
    assert belief["slots"][0] == {"slot": "area", "values": [["centre", 0.8], ["north", 0.15], ["none", 0.05]]}
    assert belief["requested"] == [["phone", 0.7]] and belief["method"] == ["byconstraints", 1.0]
    assert [m["name"] for m in data["measures"]] == ["tmr", "dmr", "cer", "cmr"]


def test_malicious_text_is_escaped(tmp_path: Path) -> None:
    a, b = _responses()
    html = write_view(compare(a, b), a, b, tmp_path / "page.html").read_text(encoding="utf-8")
    assert "<img" not in html and "</script><" not in html.replace("</script>\n<script>", "")
    assert html.count("</script>") == 2  # the data element's and the code's, nothing injected
    assert "\u2028" not in html
    assert "\\u003c/script\\u003e\\u003cimg" in html
    assert [row["b"]["text"] for row in _data(html)["rows"] if row["id"] == "evil"] == ["Goodbye."]
    assert [row["a"]["text"] for row in _data(html)["rows"] if row["id"] == "evil"] == [EVIL]
    assert "innerHTML" not in html and "textContent" in html


def test_policy_names_are_escaped_in_title() -> None:
    a, b = _responses()
    comparison = compare(a, b)
    data = view_data(comparison, a, b)
    data["a"] = "<b>%DATA%</b>"
    html = render_page(data)
    assert "<title>simscore view: &lt;b&gt;%DATA%&lt;/b&gt; vs beta</title>" in html


def test_page_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    a, b = _responses()
    first = write_view(compare(a, b), a, b, tmp_path / "1.html", contexts=_contexts()).read_bytes()
    second = write_view(compare(a, b), a, b, tmp_path / "2.html", contexts=_contexts()).read_bytes()
    assert first == second
    text = first.decode("utf-8")
    assert "http://" not in text and "https://" not in text and "//cdn" not in text
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", text.replace("\\u003cimg src=x", ""))


def test_the_page_assets_ship_as_package_data() -> None:
    # the page's style sheet and script are files of the package (read with importlib.resources):
    # every file of the assets folder is package data, or an installed page would lack it
    with open(ROOT / "pyproject.toml", "rb") as f:
        entries = tomllib.load(f)["tool"]["setuptools"]["package-data"]["simscore"]
    assets = sorted(p.relative_to(ROOT / "simscore").as_posix() for p in (ROOT / "simscore/app/inspect/assets").iterdir())
    assert assets == ["app/inspect/assets/view.css", "app/inspect/assets/view.js"]
    assert [name for name in assets if not any(fnmatch(name, pattern) for pattern in entries)] == []


def test_cli_writes_page_and_refuses_overwrite(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    out = files["cmp"].with_name("page.html")
    argv = ["view", str(files["cmp"]), "--a", str(files["a"]), "--b", str(files["b"]),
            "--contexts", str(files["ctx"]), "--out", str(out)]
    assert main(argv) == 0
    assert "(3 of 4 contexts differ: 2 in the action, 1 in the wording only)" in capsys.readouterr().out
    data = _data(out.read_text(encoding="utf-8"))
    assert (data["differing"], data["differing_actions"]) == (3, 2)
    assert [row["id"] for row in data["rows"]] == ["act", "text", "evil"]
    assert data["has_contexts"] and data["rows"][0]["belief"] is not None
    out.write_text("keep me", encoding="utf-8")
    assert main(argv) == 2
    assert "exists; use --force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "keep me"
    assert main([*argv, "--force"]) == 0
    assert "keep me" not in out.read_text(encoding="utf-8")


def test_cli_default_out_and_never_over_an_input(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base = ["view", str(files["cmp"]), "--a", str(files["a"]), "--b", str(files["b"])]
    assert main(base) == 0
    page = files["cmp"].with_suffix(".html")
    assert page.exists() and _data(page.read_text(encoding="utf-8"))["rows"][0]["belief"] is None
    before = files["a"].read_bytes()
    assert main([*base, "--out", str(files["a"]), "--force"]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert files["a"].read_bytes() == before


def test_read_comparison_round_trip(files: dict[str, Path]) -> None:
    a, b = _responses()
    saved = read_comparison(files["cmp"])
    fresh = compare(a, b, "action", bootstrap=Bootstrap(n_resamples=50))
    assert saved.measures == fresh.measures and (saved.a, saved.b) == ("alpha", "beta")
    assert list(saved.scores.index) == list(fresh.scores.index)
    assert saved.scores["cmr"].tolist() == pytest.approx(fresh.scores["cmr"].tolist())
    assert saved.mean("tmr") == pytest.approx(fresh.mean("tmr"))


def test_bad_inputs_are_clear_errors(files: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="saved as .json"):
        read_comparison(tmp_path / "scores.csv")
    with pytest.raises(FileFormatError, match="file not found"):
        read_comparison(tmp_path / "nope.json")
    (tmp_path / "other.json").write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(FileFormatError, match="not a saved comparison: missing"):
        read_comparison(tmp_path / "other.json")
    # a file of another of simscore's kinds is named, with what belongs (the suffix is no guide)
    with pytest.raises(FileFormatError, match=r"a\.jsonl, line 1: a responses file \(format 'simscore-responses', JSON "
                       r"Lines\) where a saved comparison \(simscore compare --out, one JSON document\) belongs$"):
        read_comparison(files["a"])
    (tmp_path / "responses.json").write_bytes(files["a"].read_bytes())
    with pytest.raises(FileFormatError, match=r"responses\.json, line 1: a responses file .* where a saved comparison"):
        read_comparison(tmp_path / "responses.json")
    (tmp_path / "table.json").write_text('{"format": "simscore-table", "version": 1}', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"table\.json: a result table \(format 'simscore-table', one JSON "
                       r"document\) where a saved comparison"):
        read_comparison(tmp_path / "table.json")
    a, b = _responses()
    comparison = read_comparison(files["cmp"])
    with pytest.raises(InputMismatchError) as caught:
        write_view(comparison, a, b.subset(["same", "act", "text"]), tmp_path / "x.html")
    assert str(caught.value) == ("b is not what side B of the comparison was made from: 3 contexts, not 4; context ids differ "
                                 "(1 of the comparison's missing, 0 others)")
    with pytest.raises(ContextMismatchError, match="responses of B lack 1 compared context id"):
        write_view(comparison, a, b.subset(["same", "act", "text"]), tmp_path / "x.html", check=False)
    with pytest.raises(ContextMismatchError, match="the context set lack"):
        write_view(comparison, a, b, tmp_path / "x.html", contexts=_contexts().select(["same"]))
    assert not (tmp_path / "x.html").exists()
    (tmp_path / "x.html").write_text("old", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        write_view(comparison, a, b, tmp_path / "x.html")


def _edit(document: dict[str, Any], where: str, value: Any) -> None:
    *keys, last = where.split(".")
    for key in keys:
        document = document[int(key)] if isinstance(document, list) else document[key]
    document[int(last) if isinstance(document, list) else last] = value


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("summary.tmr", [0.5, 1], r"field summary.tmr: expected an object, got an array \[0.5, 1\]"),
        ("summary.tmr.mean", "high", r"field summary.tmr.mean: expected a number or null, got a string 'high'"),
        ("summary.tmr.mean", True, r"field summary.tmr.mean: expected a number or null, got a boolean true"),
        ("summary.tmr.median", 0.5, "field summary.tmr: unknown statistic 'median'"),
        ("signatures.tmr", {"v": 1}, r"field signatures.tmr: expected a string, got an object"),
        ("scores.0.tmr", [1], r"field scores\[0\].tmr: expected a number or null, got an array"),
        ("scores.1.context_id", "same", r"field scores\[1\]: context id 'same' appears twice"),
        ("scores.0.turn_index", {"x": 1}, r"field scores\[0\].turn_index: expected a number, string, boolean or null"),
        ("scores.0.turn_index", "abc",
         r"field scores\[0\].turn_index: expected a non-negative integer or null \(a context's metadata\), got a string 'abc'"),
        ("scores.0.turn_index", -1, r"field scores\[0\].turn_index: expected a non-negative integer or null"),
        ("scores.0.turn_index", 2.5, r"field scores\[0\].turn_index: expected a non-negative integer or null .* a number 2.5"),
        ("scores.0.history_length", "x" * 100_000,
         r"field scores\[0\].history_length: .* got a string 'x{59}\.\.\. \(100,000 characters\)$"),
        ("scores.0.dialogue_id", 3, r"field scores\[0\].dialogue_id: expected a string or null \(a context's metadata\), got a number 3"),
        ("info", [], "field info: expected an object, got an array"),
        ("a", 7, "field a: expected a string, got a number 7"),
        ("info.inputs", "x", "field info.inputs: expected an object, got a string 'x'"),
        ("info.inputs.b", None, "field info.inputs.b: expected an object, got null"),
        ("info.inputs.a.contexts", "4", "field info.inputs.a.contexts: expected an integer, got a string '4'"),
        ("info.inputs.a.responses_sha256", "abc",
         r"field info.inputs.a.responses_sha256: expected a SHA-256 \(64 hex digits\), got a string 'abc'"),
        ("format", "simscore-table", r"a result table \(format 'simscore-table', one JSON document\) where a saved comparison \(simscore compare --out, one JSON document\) belongs"),
        ("version", 3, r"unsupported format version 3 \(this simscore reads version 1, 2\)"),
    ],
)
def test_hand_edited_comparison_is_a_file_format_error(
    files: dict[str, Path], tmp_path: Path, where: str, value: Any, message: str
) -> None:
    document = json.loads(files["cmp"].read_text(encoding="utf-8"))
    _edit(document, where, value)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FileFormatError, match=message):
        read_comparison(edited)


def test_infinity_in_a_comparison_is_refused_and_a_huge_number_is_not_a_crash(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = files["cmp"].read_text(encoding="utf-8")
    document = json.loads(text)
    document["summary"]["tmr"]["mean"] = "__INF__"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document).replace('"__INF__"', "Infinity"), encoding="utf-8")
    assert main(["view", str(edited), "--a", str(files["a"]), "--b", str(files["b"])]) == 2
    assert "invalid JSON (non-standard JSON number Infinity)" in capsys.readouterr().err
    # 1e999 is valid JSON (it reads as inf): a mean of 1e999 is shown as n/a; a turn index of
    # 1e999 is no turn index at all, and refused naming the field and the value
    document["summary"]["tmr"]["mean"] = "__BIG__"
    edited.write_text(json.dumps(document).replace('"__BIG__"', "1e999"), encoding="utf-8")
    assert main(["view", str(edited), "--a", str(files["a"]), "--b", str(files["b"]), "--force"]) == 0
    data = _data(edited.with_suffix(".html").read_text(encoding="utf-8"))
    assert data["measures"][0]["mean"] is None
    document["scores"][0]["turn_index"] = "__BIG__"
    edited.write_text(json.dumps(document).replace('"__BIG__"', "1e999"), encoding="utf-8")
    assert main(["view", str(edited), "--a", str(files["a"]), "--b", str(files["b"]), "--force"]) == 2
    assert ("field scores[0].turn_index: expected a non-negative integer or null (a context's metadata), got a number Infinity"
            in capsys.readouterr().err)


def test_deeply_nested_comparison_is_a_file_format_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"simscore": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 1: arrays and objects nested deeper than 64 levels"):
        read_comparison(path)


def test_a_large_page_stops_and_offers_a_sample_or_a_cap(files: dict[str, Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import simscore.app.inspect.view as view

    monkeypatch.setattr(view, "MAX_ROWS", 2)  # the example has 3 differing contexts
    base = ["view", str(files["cmp"]), "--a", str(files["a"]), "--b", str(files["b"])]
    page = files["cmp"].with_suffix(".html")
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "3 contexts differ: a page of all of them would be about 0 MB or more (more than 2 contexts). " in err
    assert "Give --sample N for a seeded random sample" in err and "--limit N for the first N, or --all" in err
    assert not page.exists()
    assert main([*base, "--limit", "2"]) == 0
    assert "(3 of 4 contexts differ: 2 in the action, 1 in the wording only; the page shows the first 2)" in capsys.readouterr().out
    data = _data(page.read_text(encoding="utf-8"))
    assert [row["id"] for row in data["rows"]] == ["act", "text"]
    assert (data["differing"], data["selection"]) == (3, "the first 2")
    assert main([*base, "--sample", "2", "--seed", "3", "--force"]) == 0
    capsys.readouterr()
    sampled = _data(page.read_text(encoding="utf-8"))
    assert len(sampled["rows"]) == 2 and sampled["selection"] == "a random sample of 2 (seed 3)"
    assert main([*base, "--sample", "2", "--seed", "3", "--force"]) == 0
    assert _data(page.read_text(encoding="utf-8")) == sampled  # seeded: the same sample
    assert main([*base, "--all", "--force"]) == 0
    assert len(_data(page.read_text(encoding="utf-8"))["rows"]) == 3
    with pytest.raises(SystemExit):
        main([*base, "--all", "--limit", "1"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_view_refuses_responses_the_comparison_was_not_made_from(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(files["cmp"].read_text(encoding="utf-8"))
    assert (record["format"], record["version"]) == ("simscore-comparison", 2)
    inputs = record["info"]["inputs"]
    assert {k: v for k, v in inputs["a"].items() if not k.endswith("sha256")} == {"policy": "alpha", "contexts": 4}
    assert inputs["a"]["ids_sha256"] == inputs["b"]["ids_sha256"] != inputs["a"]["responses_sha256"]
    base = ["view", str(files["cmp"])]
    a, b = str(files["a"]), str(files["b"])
    page = files["cmp"].with_suffix(".html")
    # swapped: before, the page showed B's responses under A's name
    assert main([*base, "--a", b, "--b", a]) == 2
    assert capsys.readouterr().err == (
        f"simscore view: error: --a {b} and --b {a} are swapped? The comparison was made from 'alpha' as A and "
        f"'beta' as B; --a {b} holds B's responses and --b {a} A's\n")
    # the same file twice: before, "0 of 4 contexts differ"
    assert main([*base, "--a", a, "--b", a]) == 2
    assert capsys.readouterr().err == (
        f"simscore view: error: --b {a} is not what side B of the comparison was made from: policy 'alpha', not 'beta'; "
        "responses differ (SHA-256 of the actions and texts) (it holds A's responses)\n")
    # the right policy name, one response changed
    alpha, beta = _responses()
    edited = Responses({**beta, "act": Response(Act.parse("request(food)"), "What part of town?")}, policy="beta")
    edited.to_jsonl(tmp_path / "edited.jsonl")
    assert main([*base, "--a", a, "--b", str(tmp_path / "edited.jsonl")]) == 2
    assert capsys.readouterr().err.endswith(
        "is not what side B of the comparison was made from: responses differ (SHA-256 of the actions and texts)\n")
    # more contexts than the comparison
    Responses({**alpha, "extra": Response(text="x")}, policy="alpha").to_jsonl(tmp_path / "more.jsonl")
    assert main([*base, "--a", str(tmp_path / "more.jsonl"), "--b", b]) == 2
    assert capsys.readouterr().err.endswith(
        "is not what side A of the comparison was made from: 5 contexts, not 4; context ids differ (0 of the comparison's "
        "missing, 1 others)\n")
    assert not page.exists()
    # the same responses under another file name, and as CSV: accepted (the digest is of the content)
    from simscore.responses_csv import read_responses_csv, write_responses_csv

    write_responses_csv(tmp_path / "beta.csv", beta)
    from simscore.comparison import check_inputs

    check_inputs(read_comparison(files["cmp"]), alpha, read_responses_csv(tmp_path / "beta.csv", policy="beta"))
    assert main([*base, "--a", a, "--b", b]) == 0
    assert page.exists()


def test_an_older_comparison_is_read_with_a_warning_that_it_cannot_be_checked(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(files["cmp"].read_text(encoding="utf-8"))
    for key in ("format", "version"):
        del document[key]
    for key in ("inputs", "clusters", "unit", "units"):
        del document["info"][key]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document), encoding="utf-8")
    a, b = str(files["a"]), str(files["b"])
    assert main(["view", str(old), "--a", b, "--b", a]) == 0  # swapped, and nothing can tell
    assert capsys.readouterr().err == (
        f"simscore view: warning: MissingValueWarning: the comparison does not record what it was made from (saved "
        f"before simscore 0.2.0): cannot check that --a {b} and --b {a} are its responses\n")
    assert read_comparison(old).units_line() is None  # and its summary prints without a units line


def test_seed_without_sample_is_refused(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base = ["view", str(files["cmp"]), "--a", str(files["a"]), "--b", str(files["b"])]
    assert main([*base, "--seed", "3"]) == 2
    assert capsys.readouterr().err == (
        "simscore view: error: --seed seeds the random sample of --sample N: give --sample with it, or leave --seed "
        "out\n")
    assert not files["cmp"].with_suffix(".html").exists()
    assert main([*base, "--limit", "1", "--seed", "3"]) == 2


def test_a_comparison_whose_scores_were_edited_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    from simscore.comparison import check_inputs

    document = json.loads(files["cmp"].read_text(encoding="utf-8"))
    document["scores"] = document["scores"][:3]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document), encoding="utf-8")
    a, b = _responses()
    with pytest.raises(InputMismatchError, match=r"^the comparison's 3 per-context scores are not of the contexts it "
                       r"records \(4, SHA-256\): was it edited\?$"):
        check_inputs(read_comparison(edited), a, b)


def _sampled() -> tuple[Any, Any]:
    from simscore.samples import SampledResponses

    hi, bye, ask = (Response(Act.parse(a), t) for a, t in
                    (("hello()", "Hi."), ("bye()", "Bye."), ("request(food)", "What food?")))
    a = SampledResponses({"same": [hi, bye, hi], "order": [hi, hi, bye], "count": [hi, bye, bye],
                          "wording": [hi, hi, hi]}, policy="alpha")
    b = SampledResponses({"same": [hi, bye, hi], "order": [bye, hi, hi], "count": [hi, hi, bye],
                          "wording": [hi, Response(hi.action, "Hello."), hi]}, policy="beta")
    return a, b


def test_a_sampled_comparison_shows_each_side_s_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # simscore view refused sampled files ("read it with SampledResponses.read_jsonl"); it shows them now
    a, b = _sampled()
    comparison = compare(a, b, ["tmr"], bootstrap=Bootstrap(n_resamples=0), n_permutations=10)
    data = view_data(comparison, a, b)
    assert data["samples"] == 3 and data["total"] == 4
    # the same multiset in another order is no difference; other numbers of the same responses are
    assert [(row["id"], row["differs"]) for row in data["rows"]] == [("count", "action"), ("wording", "wording")]
    count = data["rows"][0]
    assert [(s["act"], s["count"]) for s in count["a"]["samples"]] == [("bye()", 2), ("hello()", 1)]
    assert count["a"]["act"] == "bye()" and [s["count"] for s in count["b"]["samples"]] == [2, 1]
    assert count["scores"]["tmr"] == pytest.approx(4 / 9)  # hi,bye,bye x hi,hi,bye: 2 + 2 of 9 pairs agree
    wording = data["rows"][1]["b"]["samples"]
    assert [(s["text"], s["count"]) for s in wording] == [("Hi.", 2), ("Hello.", 1)]
    # through the command line, checked against the files it was made from
    for side, responses in (("a", a), ("b", b)):
        responses.to_jsonl(tmp_path / f"{side}.jsonl")
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr",
                 "--resamples", "0", "--out", str(tmp_path / "cmp.json")]) == 0
    assert json.loads((tmp_path / "cmp.json").read_text())["info"]["inputs"]["a"]["samples"] == 3
    capsys.readouterr()
    assert main(["view", str(tmp_path / "cmp.json"), "--a", str(tmp_path / "a.jsonl"), "--b",
                 str(tmp_path / "b.jsonl")]) == 0
    assert "(2 of 4 contexts differ: 1 in the action, 1 in the wording only)" in capsys.readouterr().out
    assert '"samples":3' in (tmp_path / "cmp.html").read_text()
    a.sample(0).to_jsonl(tmp_path / "one.jsonl")
    assert main(["view", str(tmp_path / "cmp.json"), "--a", str(tmp_path / "one.jsonl"), "--b",
                 str(tmp_path / "b.jsonl"), "--force"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"--a {tmp_path / 'one.jsonl'} is not what side A of the comparison was made from: one response per "
        "context, not 3 samples per context")
