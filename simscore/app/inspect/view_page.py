"""The page of ``simscore view``: one self-contained HTML file, its CSS and JavaScript inline.

:func:`render_page` fills the template with :func:`simscore.app.inspect.view.view_data`'s
result. The data enters the page as JSON in a ``<script type="application/json">`` element,
with ``<``, ``>``, ``&`` and the JavaScript line separators escaped; the script inserts every
piece of user data with ``textContent``. Same data give the same bytes.

The style sheet and the script are the package's data files ``assets/view.css`` and
``assets/view.js`` beside this module, read with :mod:`importlib.resources` on the first page
and kept for the process; the page holds them inline, so it needs no file beside it and no
network.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["render_page"]

#: The page's style sheet and script: data files of this package's ``assets`` folder.
_ASSETS = ("view.css", "view.js")

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, ``<!--`` or line separators)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


@functools.cache
def _assets() -> tuple[str, str]:
    """The page's style sheet and script, ``(CSS, JavaScript)``, read once per process (UTF-8)."""
    folder = resources.files("simscore.app.inspect").joinpath("assets")
    css, js = (folder.joinpath(name).read_text(encoding="utf-8") for name in _ASSETS)
    return css, js


def render_page(data: Mapping[str, Any]) -> str:
    """The HTML page for :func:`view_data`'s result (inline CSS and JavaScript, no network)."""
    title = html.escape(f"simscore view: {data['a']} vs {data['b']}", quote=True)
    css, js = _assets()
    parts = {"TITLE": title, "CSS": css, "JS": js, "DATA": _script_json(dict(data))}
    return re.sub(r"%(TITLE|CSS|JS|DATA)%", lambda match: parts[match.group(1)], _PAGE)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
%CSS%</style>
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
<script>
%JS%</script>
</body>
</html>
"""
