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
    (data.samples ? data.samples + " samples per context on each side (a score is the mean over the " +
      data.samples * data.samples + " cross pairs); " : "") +
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
      var hay = [row.id, said(row.a), said(row.b)].join("\n").toLowerCase();
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
  function answer(box, r, other) {
    if (r.act === null) box.appendChild(el("div", "none", "no action"));
    else if (data.tool_calls && r.calls) box.appendChild(callList(r, other));
    else box.appendChild(el("div", "act", r.act));
    box.appendChild(r.text === null ? el("div", "text none", "no text") : el("div", "text", r.text));
  }
  function response(side, name, r, other) {
    var box = el("div", "resp " + side);
    box.appendChild(el("div", "who", side.toUpperCase() + ": " + name));
    if (!r.samples) { answer(box, r, other); return box; }
    // sampled: each distinct response with how many of the K samples gave it, the most frequent first
    r.samples.forEach(function (s) {
      var one = el("div", "sample");
      one.appendChild(el("span", "count", s.count + " of " + data.samples));
      answer(one, s, other);
      box.appendChild(one);
    });
    return box;
  }
  function said(r) {
    return (r.samples || [r]).map(function (s) { return [s.act, s.text].join("\n"); }).join("\n");
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
