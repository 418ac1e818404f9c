"""``simscore view`` pages in a real browser: headless Chromium driven by Playwright.

The page must load offline, open on the contexts whose actions differ, label each turn of a
history by its speaker, work when a user operates its filters (not only from the address), show
itself whatever the address holds (a malformed percent-escape included), show two agents' tool calls
side by side (real τ²-bench transcripts), and run nothing of the
script payloads in context ids, acts, texts, policy names, dialogue histories and the address. The browser is the system's Chromium (Debian's ``chromium``
package, ``/usr/bin/chromium``), driven through the ``playwright`` Python package (the test
extra); no browser is ever downloaded (``playwright install`` is not used). Where either is
missing the test is skipped, saying which.

To run it on a fresh Debian or Ubuntu machine (e.g. in ``.ci/run``), install the browser
before the tests: ``apt-get install -y chromium`` (the package name on Debian 12; on Ubuntu,
where ``chromium`` is a snap, install Google Chrome or set ``SIMSCORE_CHROMIUM`` to a Chromium
binary). ``SIMSCORE_CHROMIUM`` names another binary anywhere. A browser that does not start
(missing libraries, say) skips the tests with its error's first line.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from simscore import Act, Response, Responses, compare
from simscore.app.cli import main
from simscore.stats import Bootstrap

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

#: Payloads that would run script if the page inserted them as markup (each sets window.__pwned).
PAYLOADS = [
    "<img src=x onerror=window.__pwned=1>",
    "</script><script>window.__pwned=1</script>",
    "\"><svg onload=window.__pwned=1>",
    "<iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
    "<a href=javascript:window.__pwned=1 id=clickme>x</a>",
    "<!--<script>window.__pwned=1</script>-->\u2028\u2029",
]


def _chromium() -> str | None:
    given = os.environ.get("SIMSCORE_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium binary (chromium, chromium-browser, google-chrome or SIMSCORE_CHROMIUM): "
                    "install one, e.g. 'apt-get install -y chromium', to run the viewer in a browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed (pip install -e '.[test]')")
    with sync_playwright() as driver:
        try:
            instance = driver.chromium.launch(executable_path=binary, args=FLAGS)
        except Exception as exc:  # playwright's Error: the browser would not start here (libraries, sandbox)
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            pytest.skip(f"Chromium ({binary}) did not start: {first}")
        yield instance
        instance.close()


def _files(tmp_path: Path) -> dict[str, Path]:
    """Responses with payloads everywhere, 260 differing contexts (more than a page shows at once)."""
    a_pairs, b_pairs, contexts = {}, {}, []
    belief = BeliefState(slots={"food": {"thai": 0.9}}, method={"byconstraints": 1.0})
    for k in range(260):
        payload = PAYLOADS[k % len(PAYLOADS)]
        cid = f"c{k:03d}{payload}" if k % 2 else f"c{k:03d}"
        turn = k % 4
        a_pairs[cid] = Response(Act("inform", [("name", "=", payload)]) if k % 3 else Act.parse("request(food)"),
                                f"text {k} {payload}")
        same_act = k % 13 == 0  # these differ in their texts only
        b_pairs[cid] = Response(a_pairs[cid].action if same_act else Act.parse("bye()") if k % 5 else Act.parse("request(area)"),
                                f"other {k}")
        history = ["Welcome!", f"user says {payload}"] if k % 2 else ["Thai food.", "Which area?", f"north {k}"]
        contexts.append(Context(cid, belief, {"source": "col", "dialogue_id": f"d{payload}", "turn_index": turn,
                                              "history": history}))
    a_pairs["same"] = b_pairs["same"] = Response(Act.parse("hello()"), "Hi.")
    contexts.append(Context("same", belief, {"source": "col", "dialogue_id": "d", "turn_index": 0, "history": []}))
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b", "contexts")}
    Responses(a_pairs, policy=f"alpha{PAYLOADS[0]}").to_jsonl(paths["a"])
    Responses(b_pairs, policy=f"beta{PAYLOADS[1]}").to_jsonl(paths["b"])
    ContextSet(contexts, name="browser").to_jsonl(paths["contexts"])
    paths["cmp"] = tmp_path / "cmp.json"
    compare(Responses.read_jsonl(paths["a"]), Responses.read_jsonl(paths["b"]), "action", bootstrap=Bootstrap(n_resamples=20)).save(paths["cmp"])
    paths["page"] = tmp_path / "page.html"
    assert main(["view", str(paths["cmp"]), "--a", str(paths["a"]), "--b", str(paths["b"]),
                 "--contexts", str(paths["contexts"]), "--out", str(paths["page"])]) == 0
    return paths


def _open(browser: Any, address: str) -> tuple[Any, list[str]]:
    problems: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: None if request.url.startswith(("file:", "data:", "about:"))
            else problems.append(f"request: {request.url}"))
    page.goto(address)
    page.wait_for_selector("#count[data-count]")
    return page, problems


def _count(page: Any) -> int:
    return int(page.get_attribute("#count", "data-count"))


@pytest.mark.slow
def test_the_page_loads_offline_and_its_filters_work(browser: Any, tmp_path: Path) -> None:
    files = _files(tmp_path)
    page, problems = _open(browser, files["page"].as_uri())
    assert page.title().startswith("simscore view: alpha<img src=x")  # the title is text
    overview = page.text_content("#overview")
    assert overview.startswith("260 of 261 contexts have different responses: 240 in the action, 20 in the wording only.")
    assert "Shown first: the contexts whose actions differ" in overview
    assert page.locator("#summary tbody tr").count() == 4
    a, b = (Responses.read_jsonl(files[side]) for side in ("a", "b"))
    differing = [cid for cid in a if a[cid] != b[cid]]
    turn = {cid: k % 4 for k, cid in enumerate(differing)}
    # it opens on the action differences, each card saying which kind it is
    assert page.input_value("#differs") == "action" and _count(page) == 240
    assert set(page.locator("section.card .kind").all_inner_texts()) == {"action differs"}
    page.select_option("#differs", "wording")
    assert _count(page) == sum(a[cid].action == b[cid].action for cid in differing) == 20
    assert set(page.locator("section.card .kind").all_inner_texts()) == {"wording only"}
    page.select_option("#differs", "")  # either
    assert _count(page) == 260 and page.locator("section.card").count() == 200
    page.click("#more")
    assert page.locator("section.card").count() == 260 and not page.is_visible("#more")
    # the history turn by turn with its speakers, the last the user's
    first = page.locator("section.card").first
    assert first.locator("ol.history .speaker").all_inner_texts() == ["User", "System", "User"]
    assert first.locator("ol.history .said").all_inner_texts() == ["Thai food.", "Which area?", "north 0"]
    second = page.locator("section.card").nth(1)
    assert second.locator("ol.history .speaker").all_inner_texts() == ["System", "User"]
    page.select_option("#measure", "tmr")
    page.select_option("#op", "lt")
    page.fill("#threshold", "1")
    assert _count(page) == sum(a[cid].action != b[cid].action for cid in differing) == 240
    page.select_option("#op", "any")
    page.select_option("#turn", "2")
    assert _count(page) == sum(turn[cid] == 2 for cid in differing) == 65
    page.select_option("#act", "request")
    assert _count(page) == sum(turn[cid] == 2 and "request" in (a[cid].action.intent, b[cid].action.intent)
                               for cid in differing)
    page.select_option("#turn", "")
    page.select_option("#act", "")
    page.fill("#search", "TEXT 170")  # any case, in ids, acts and texts
    assert _count(page) == 1 and "text 170 " in page.text_content("section.card")
    page.fill("#search", "no such text")
    assert _count(page) == 0 and page.is_visible("#empty")
    assert page.evaluate("window.__pwned") is None and problems == []
    page.close()
    # initial filters from the address (a link to a filtered view)
    page, problems = _open(browser, files["page"].as_uri() + "#measure=tmr&op=lt&threshold=1&turn=2&act=request")
    assert page.input_value("#measure") == "tmr" and page.input_value("#turn") == "2"
    assert _count(page) == sum(turn[cid] == 2 and a[cid].action != b[cid].action
                               and "request" in (a[cid].action.intent, b[cid].action.intent) for cid in differing)
    assert problems == []
    page.close()
    page, problems = _open(browser, files["page"].as_uri() + "#differs=&turn=1")
    assert page.input_value("#differs") == "" and _count(page) == sum(turn[cid] == 1 for cid in differing)
    page.close()


def test_a_bad_address_never_leaves_the_page_empty(browser: Any, tmp_path: Path) -> None:
    files = _files(tmp_path)
    for fragment, search, count in (
        ("#q=%E0%A4%A", "%E0%A4%A", 0),  # a malformed escape: the raw text in the filter
        ("#q=%", "%", 0),
        ("#q=text%20170&%ZZ=1", "text 170", 1),  # the good pair applies, the bad one is ignored
        ("#measure=nosuch&op=lt&threshold=1", "", 240),  # a measure the page lacks: the default (tmr) stays
    ):
        page, problems = _open(browser, files["page"].as_uri() + fragment)
        assert problems == [], fragment
        assert page.text_content("#overview").startswith("260 of 261 contexts have different responses"), fragment
        assert page.input_value("#search") == search and page.input_value("#measure") == "tmr", fragment
        assert _count(page) == count and page.is_visible("#empty") == (count == 0), fragment
        page.close()


@pytest.mark.slow
def test_script_payloads_anywhere_run_nothing(browser: Any, tmp_path: Path) -> None:
    files = _files(tmp_path)
    hash_payload = "#q=" + "%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E" + "&measure=%22%3E%3Csvg%20onload%3Dwindow.__pwned%3D1%3E"
    for address in (files["page"].as_uri(), files["page"].as_uri() + hash_payload):
        page, problems = _open(browser, address)
        page.click("#more") if page.is_visible("#more") else None
        page.fill("#search", "")
        page.click("#more") if page.is_visible("#more") else None
        rendered = page.inner_html("#rows")
        for payload in PAYLOADS[:5]:
            assert payload.split(" ")[0] not in rendered.replace("&lt;", "<\u0000")  # never an element
        assert page.locator("#rows img, #rows script, #rows svg, #rows iframe, #rows a").count() == 0
        # the payloads are shown as text, where they were put
        texts = page.locator("#rows").inner_text()
        assert "<img src=x onerror=window.__pwned=1>" in texts and "</script><script>" in texts
        assert page.locator("head script, body > script").count() == 2  # the data and the page's own script
        page.wait_for_timeout(200)  # an onerror or onload would have fired by now
        assert page.evaluate("window.__pwned") is None, address
        assert page.evaluate("parent.__pwned") is None
        assert problems == [], problems
        page.close()


def test_two_agents_tool_calls_side_by_side(browser: Any, tmp_path: Path) -> None:
    # the real τ²-bench pair of examples/data/tau2: turn 4 of task 31, three calls against one
    data = Path(__file__).resolve().parents[3] / "examples" / "data" / "tau2"
    out = {name: tmp_path / f"{name}.jsonl" for name in ("C", "A", "B")}
    assert main(["contexts", "transcripts", str(data / "airline_gpt-4.1_6_tasks.json"), "--pair",
                 str(data / "airline_gpt-4.1-sft_6_tasks.json"), "--out-contexts", str(out["C"]),
                 "--out-responses", str(out["A"]), "--out-responses-b", str(out["B"])]) == 0
    assert main(["compare", str(out["A"]), str(out["B"]), "--measures", "tmr,cmr", "--resamples", "0",
                 "--out", str(tmp_path / "cmp.json")]) == 0
    page_path = tmp_path / "page.html"
    assert main(["view", str(tmp_path / "cmp.json"), "--a", str(out["A"]), "--b", str(out["B"]),
                 "--contexts", str(out["C"]), "--out", str(page_path)]) == 0
    page, problems = _open(browser, page_path.as_uri() + "#q=31/0/4")
    assert _count(page) == 1
    card = page.locator("section.card").first
    a_side, b_side = card.locator(".resp.a"), card.locator(".resp.b")
    assert a_side.locator(".call .name").all_inner_texts() == ["get_reservation_details"] * 3
    assert b_side.locator(".call .name").all_inner_texts() == ["get_reservation_details"]
    assert a_side.locator(".call td").all_inner_texts() == ["reservation_id", "DF89BM", "reservation_id", "COVE6R",
                                                            "reservation_id", "IIHXDG"]
    # B made the call on DF89BM alone: A's other two are marked, nothing of B's
    assert a_side.locator(".call.unmatched td:nth-child(2)").all_inner_texts() == ["COVE6R", "IIHXDG"]
    assert b_side.locator(".call.unmatched").count() == 0
    assert card.locator("ol.history .speaker").all_inner_texts()[:6] == ["Agent", "User", "Agent", "User", "Agent", "Tool"]
    assert "same_history: no" in card.locator(".note").inner_text()
    assert problems == []
    page.close()


def test_a_sampled_comparison_lists_each_side_s_distinct_samples(browser: Any, tmp_path: Path) -> None:
    from simscore.samples import SampledResponses

    hi, bye = Response(Act.parse("hello()"), "Hi."), Response(Act.parse("bye()"), "Bye.")
    a = SampledResponses({"c1": [hi, bye, bye], "c2": [hi, hi, hi]}, policy="alpha")
    b = SampledResponses({"c1": [hi, hi, bye], "c2": [hi, hi, hi]}, policy="beta")
    for side, responses in (("a", a), ("b", b)):
        responses.to_jsonl(tmp_path / f"{side}.jsonl")
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr",
                 "--resamples", "0", "--out", str(tmp_path / "cmp.json")]) == 0
    assert main(["view", str(tmp_path / "cmp.json"), "--a", str(tmp_path / "a.jsonl"), "--b",
                 str(tmp_path / "b.jsonl")]) == 0
    page, problems = _open(browser, (tmp_path / "cmp.html").as_uri())
    assert page.text_content("#overview").startswith("3 samples per context on each side (a score is the mean "
                                                     "over the 9 cross pairs); 1 of 2 contexts have different")
    card = page.locator("section.card").first
    assert card.locator(".resp.a .sample .act").all_inner_texts() == ["bye()", "hello()"]
    assert card.locator(".resp.a .sample .count").all_inner_texts() == ["2 of 3", "1 of 3"]
    assert card.locator(".resp.b .sample .act").all_inner_texts() == ["hello()", "bye()"]
    page.fill("#search", "bye.")  # a sample's text is searched, not only the most frequent one's
    assert _count(page) == 1
    assert problems == []
    page.close()
