"""The page of ``simscore view``: one self-contained HTML file, its CSS and JavaScript inline.

:func:`render_page` fills the template with :func:`simscore.app.inspect.view.view_data`'s
result. The data enters the page as JSON in a ``<script type="application/json">`` element,
with ``<``, ``>``, ``&`` and the JavaScript line separators escaped; the script inserts every
piece of user data with ``textContent``. Same data give the same bytes.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["render_page"]

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, ``<!--`` or line separators)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def render_page(data: Mapping[str, Any]) -> str:
    """The HTML page for :func:`view_data`'s result (inline CSS and JavaScript, no network)."""
    title = html.escape(f"simscore view: {data['a']} vs {data['b']}", quote=True)
    parts = {"TITLE": title, "CSS": _CSS, "JS": _JS, "DATA": _script_json(dict(data))}
    return re.sub(r"%(TITLE|CSS|JS|DATA)%", lambda match: parts[match.group(1)], _PAGE)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>%CSS%</style>
</head>
<body>
<header>
<div class="titles"><h1 id="title">%TITLE%</h1>
<p id="overview"></p></div>
<table id="summary"><thead><tr><th>measure</th><th>level</th><th>mean</th><th>CI</th></tr></thead>
<tbody></tbody></table>
</header>
<form id="filters" onsubmit="return false">
<label>differs in <select id="differs"><option value="action">the action</option>
<option value="wording">the wording only</option><option value="">either</option></select></label>
<label>measure <select id="measure"></select></label>
<select id="op" aria-label="comparison"><option value="any">any</option><option value="lt">&lt;</option>
<option value="le">&le;</option><option value="gt">&gt;</option><option value="ge">&ge;</option>
<option value="eq">=</option></select>
<input id="threshold" type="number" step="any" value="1" aria-label="threshold">
<label>turn <select id="turn"></select></label>
<label>dialogue act (A or B) <select id="act"></select></label>
<label>search <input id="search" type="search" placeholder="id, act or text"></label>
<span id="count" aria-live="polite"></span>
</form>
<main id="rows"></main>
<p id="more-wrap"><button id="more" type="button">show more</button></p>
<script type="application/json" id="data">%DATA%</script>
<script>%JS%</script>
</body>
</html>
"""

_CSS = """
:root { --ink: #1f2430; --muted: #5d6677; --line: #dde1e8; --bg: #f5f6f8; --a: #2563a8; --b: #b4531c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); background: var(--bg); }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 16px 24px;
         display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
header .titles { flex: 1 1 420px; }
h1 { font-size: 20px; margin: 0 0 4px; }
#overview { margin: 0 0 10px; color: var(--muted); }
table { border-collapse: collapse; }
#summary { font-size: 13px; }
#summary th, #summary td { padding: 1px 14px 1px 0; text-align: left; font-variant-numeric: tabular-nums; }
#summary th { color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
#filters { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 10px 16px;
           align-items: center; padding: 10px 24px; background: #eef1f6; border-bottom: 1px solid var(--line); }
#filters select, #filters input { font: inherit; padding: 2px 4px; }
#threshold { width: 6em; }
#count { margin-left: auto; font-weight: 600; }
main { padding: 12px 24px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 0 0 12px;
        display: grid; grid-template-columns: minmax(260px, 1fr) 2fr; }
.card > h2 { grid-column: 1 / -1; margin: 0; padding: 6px 12px; font-size: 13px; font-weight: 600;
             background: #fafbfc; border-bottom: 1px solid var(--line); border-radius: 6px 6px 0 0; }
.card > h2 .meta { color: var(--muted); font-weight: 400; margin-left: 10px; }
.context { padding: 8px 12px; border-right: 1px solid var(--line); }
.context h3, .responses h3 { font-size: 11px; text-transform: uppercase; letter-spacing: .05em;
                             color: var(--muted); margin: 6px 0 3px; }
.belief { width: 100%; font-size: 12.5px; }
.belief td { padding: 1px 6px 1px 0; vertical-align: top; }
.belief td:first-child { color: var(--muted); white-space: nowrap; }
.p { color: var(--muted); font-variant-numeric: tabular-nums; }
ol.history { margin: 0; padding-left: 20px; font-size: 12.5px; }
.speaker { font-size: 11px; font-weight: 600; margin-right: 6px; color: var(--muted); }
.speaker.user { color: #3a6b35; }
.speaker.tool { color: #7a5b00; }
.calls { display: grid; gap: 4px; }
.call { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px;
        background: #f3f4f7; padding: 2px 6px; border-radius: 3px; border-left: 3px solid transparent; }
.call.unmatched { border-left-color: #d9534f; background: #fdf0ed; }
.call .name { font-weight: 600; }
.call table { border-collapse: collapse; margin-left: 10px; }
.call td { padding: 0 6px 0 0; vertical-align: top; word-break: break-word; }
.call td:first-child { color: var(--muted); white-space: nowrap; }
.note { font-size: 12px; color: #7a5b00; margin: 4px 0; }
.kind { font-size: 11px; padding: 0 6px; border-radius: 8px; background: #fde8e1; }
.kind.wording { background: #eef1f6; }
.responses { padding: 8px 12px; display: grid; grid-template-columns: 1fr 1fr; gap: 10px; align-content: start; }
.resp { border-left: 4px solid var(--a); padding: 2px 10px; }
.resp.b { border-color: var(--b); }
.resp .who { font-size: 11px; font-weight: 600; color: var(--a); }
.resp.b .who { color: var(--b); }
.act { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px;
       word-break: break-word; background: #f3f4f7; padding: 2px 4px; border-radius: 3px; }
.text { margin-top: 4px; }
.none { color: var(--muted); font-style: italic; }
.scores { grid-column: 1 / -1; display: flex; flex-wrap: wrap; gap: 6px; }
.chip { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #eef1f6;
        font-variant-numeric: tabular-nums; }
.chip.low { background: #fde8e1; }
.chip.high { background: #e3f3e6; }
#empty { color: var(--muted); padding: 24px 0; }
#more-wrap { text-align: center; }
@media (max-width: 800px) { .card, .responses { grid-template-columns: 1fr; }
                            .context { border-right: 0; } }
"""

_JS = r"""
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("data").textContent);
  var PAGE = 200;
  var SPEAKERS = {user: "User", system: "System", assistant: "Agent", tool: "Tool"};
  var shown = PAGE;
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(x) { return x === null || x === undefined ? "n/a" : Number(x).toFixed(3); }
  function option(select, value, label) {
    var o = el("option", null, label); o.value = value; select.appendChild(o);
  }
  function intentsOf(row) {
    var out = [];
    [row.a.intent, row.b.intent].forEach(function (i) { if (i && out.indexOf(i) < 0) out.push(i); });
    return out;
  }
  var measures = data.measures;
  var byName = {};
  measures.forEach(function (m) { byName[m.name] = m; });
  // the page opens on the action differences (what the policies decide), where it holds any
  var actionRows = data.rows.filter(function (row) { return row.differs === "action"; }).length;
  document.getElementById("overview").textContent =
    data.differing + " of " + data.total + " contexts have different responses: " + data.differing_actions +
    " in the action, " + (data.differing - data.differing_actions) + " in the wording only" +
    (data.selection ? "; this page holds " + data.selection + " of them" : "") +
    (data.has_contexts ? "." : "; no context set given, so no beliefs or histories.") +
    (actionRows && actionRows < data.rows.length ? " Shown first: the contexts whose actions differ (what the " +
      "policies decide); choose \u201ceither\u201d under \u201cdiffers in\u201d for the wording-only ones too." : "");
  var tbody = document.querySelector("#summary tbody");
  measures.forEach(function (m) {
    var tr = el("tr");
    tr.appendChild(el("td", null, m.name));
    tr.appendChild(el("td", null, m.level || ""));
    tr.appendChild(el("td", null, fmt(m.mean)));
    tr.appendChild(el("td", null, "[" + fmt(m.ci_low) + ", " + fmt(m.ci_high) + "]"));
    tbody.appendChild(tr);
  });
  var measureSel = document.getElementById("measure");
  measures.forEach(function (m) { option(measureSel, m.name, m.name); });
  var turns = [], acts = [];
  data.rows.forEach(function (row) {
    if (row.turn !== null && turns.indexOf(row.turn) < 0) turns.push(row.turn);
    intentsOf(row).forEach(function (i) { if (acts.indexOf(i) < 0) acts.push(i); });
  });
  turns.sort(function (x, y) { return x - y; });
  acts.sort();
  var turnSel = document.getElementById("turn"), actSel = document.getElementById("act");
  option(turnSel, "", "all");
  turns.forEach(function (t) { option(turnSel, String(t), String(t)); });
  option(actSel, "", "all");
  acts.forEach(function (a) { option(actSel, a, a); });
  var opSel = document.getElementById("op"), threshold = document.getElementById("threshold");
  var search = document.getElementById("search"), differsSel = document.getElementById("differs");
  if (byName.tmr) measureSel.value = "tmr";
  differsSel.value = actionRows ? "action" : "";
  // initial filters from the address, e.g. page.html#measure=tmr&op=lt&threshold=1&turn=2&act=request
  var controls = {differs: differsSel, measure: measureSel, op: opSel, threshold: threshold, turn: turnSel,
                  act: actSel, q: search};
  function decode(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }  // malformed escapes: the raw text
  }
  function offers(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }
  location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
    var k = pair.indexOf("=");
    if (k <= 0) return;
    var key = decode(pair.slice(0, k)), value = decode(pair.slice(k + 1));
    if (!Object.prototype.hasOwnProperty.call(controls, key)) return;
    var control = controls[key];
    if (control.tagName === "SELECT" && !offers(control, value)) return;  // e.g. a measure this page lacks
    control.value = value;
  });

  function keep(row) {
    if (differsSel.value !== "" && row.differs !== differsSel.value) return false;
    var op = opSel.value;
    if (op !== "any") {
      var v = row.scores[measureSel.value], t = parseFloat(threshold.value);
      if (v === null || v === undefined || isNaN(t)) return false;
      if (op === "lt" && !(v < t)) return false;
      if (op === "le" && !(v <= t)) return false;
      if (op === "gt" && !(v > t)) return false;
      if (op === "ge" && !(v >= t)) return false;
      if (op === "eq" && Math.abs(v - t) > 1e-9) return false;
    }
    if (turnSel.value !== "" && String(row.turn) !== turnSel.value) return false;
    if (actSel.value !== "" && intentsOf(row).indexOf(actSel.value) < 0) return false;
    var q = search.value.trim().toLowerCase();
    if (q) {
      var hay = [row.id, row.a.act, row.a.text, row.b.act, row.b.text].join("\n").toLowerCase();
      if (hay.indexOf(q) < 0) return false;
    }
    return true;
  }
  function callKey(call) { return JSON.stringify([call.name, call.arguments]); }
  function callList(r, other) {
    // one block per call: the tool, then its arguments one a line; a call the other side did not make alike is marked
    var theirs = (other.calls || []).map(callKey);
    var box = el("div", "calls");
    r.calls.forEach(function (call) {
      var matched = theirs.indexOf(callKey(call)) >= 0;
      var c = el("div", "call" + (matched ? "" : " unmatched"));
      if (!matched) c.title = "the other side made no such call";
      c.appendChild(el("span", "name", call.name + (call.arguments.length ? "" : "()")));
      if (call.arguments.length) {
        var table = el("table");
        call.arguments.forEach(function (arg) {
          var tr = el("tr");
          tr.appendChild(el("td", null, arg[0]));
          tr.appendChild(el("td", null, arg[2] === null ? "" : (arg[1] === "=" ? "" : arg[1] + " ") + arg[2]));
          table.appendChild(tr);
        });
        c.appendChild(table);
      }
      box.appendChild(c);
    });
    return box;
  }
  function response(side, name, r, other) {
    var box = el("div", "resp " + side);
    box.appendChild(el("div", "who", side.toUpperCase() + ": " + name));
    if (r.act === null) box.appendChild(el("div", "none", "no action"));
    else if (data.tool_calls && r.calls) box.appendChild(callList(r, other));
    else box.appendChild(el("div", "act", r.act));
    box.appendChild(r.text === null ? el("div", "text none", "no text") : el("div", "text", r.text));
    return box;
  }
  function beliefBlock(parent, belief) {
    parent.appendChild(el("h3", null, "belief"));
    var table = el("table", "belief");
    function line(label, parts) {
      var tr = el("tr"); tr.appendChild(el("td", null, label));
      var td = el("td");
      parts.forEach(function (p, k) {
        if (k) td.appendChild(document.createTextNode(", "));
        td.appendChild(document.createTextNode(p[0] + " "));
        td.appendChild(el("span", "p", Number(p[1]).toFixed(2)));
      });
      if (!parts.length) td.appendChild(el("span", "none", "none"));
      tr.appendChild(td); table.appendChild(tr);
    }
    belief.slots.forEach(function (s) { line(s.slot, s.values); });
    line("requested", belief.requested);
    line("method", [belief.method]);
    line("discourse act", [belief.discourse_act]);
    if (belief.last_offered !== null) line("last offered", [[belief.last_offered, 1]]);
    parent.appendChild(table);
  }
  function card(row) {
    var c = el("section", "card");
    var h = el("h2", null, row.id);
    var meta = [];
    if (row.dialogue !== null) meta.push("dialogue " + row.dialogue);
    if (row.turn !== null) meta.push("turn " + row.turn);
    if (meta.length) h.appendChild(el("span", "meta", meta.join(" \u00b7 ")));
    h.appendChild(document.createTextNode(" "));
    h.appendChild(el("span", "kind " + row.differs, row.differs === "action" ? "action differs" : "wording only"));
    c.appendChild(h);
    var left = el("div", "context");
    if (row.same_history === false) {
      left.appendChild(el("div", "note", "B was given another history before this turn (same_history: no): " +
                                         "the history shown is A's, and the two answer the same step of the task"));
    }
    if (row.belief) beliefBlock(left, row.belief);
    left.appendChild(el("h3", null, "dialogue so far (oldest first)"));
    if (row.history.length) {
      var ol = el("ol", "history");
      row.history.forEach(function (t) {
        var li = el("li");
        li.appendChild(el("span", "speaker " + t.speaker, SPEAKERS[t.speaker] || "System"));
        li.appendChild(el("span", "said", t.text));
        ol.appendChild(li);
      });
      left.appendChild(ol);
    } else {
      left.appendChild(el("div", "none", data.has_contexts ? "no history" : "no context set given"));
    }
    c.appendChild(left);
    var right = el("div", "responses");
    right.appendChild(response("a", data.a, row.a, row.b));
    right.appendChild(response("b", data.b, row.b, row.a));
    var chips = el("div", "scores");
    measures.forEach(function (m) {
      var v = row.scores[m.name], cls = "chip";
      if (v !== null && v !== undefined) {
        var good = m.higher_is_better ? v >= 0.999 : v <= 0.001;
        var bad = m.higher_is_better ? v < 0.5 : v > 0.5;
        cls += good ? " high" : bad ? " low" : "";
      }
      chips.appendChild(el("span", cls, m.name + " " + fmt(v)));
    });
    right.appendChild(chips);
    c.appendChild(right);
    return c;
  }
  var rowsEl = document.getElementById("rows"), countEl = document.getElementById("count");
  var more = document.getElementById("more");
  function render() {
    var kept = data.rows.filter(keep);
    while (rowsEl.firstChild) rowsEl.removeChild(rowsEl.firstChild);
    kept.slice(0, shown).forEach(function (row) { rowsEl.appendChild(card(row)); });
    if (!kept.length) rowsEl.appendChild(el("p", null, "No context matches these filters.")).id = "empty";
    countEl.textContent = kept.length + " of " + data.rows.length + " differing contexts" +
      (kept.length > shown ? " (first " + shown + " shown)" : "");
    countEl.setAttribute("data-count", String(kept.length));
    more.parentNode.style.display = kept.length > shown ? "" : "none";
  }
  function reset() { shown = PAGE; render(); }
  [differsSel, measureSel, opSel, threshold, turnSel, actSel, search].forEach(function (input) {
    input.addEventListener("input", reset); input.addEventListener("change", reset);
  });
  more.addEventListener("click", function () { shown += PAGE; render(); });
  render();
})();
"""
