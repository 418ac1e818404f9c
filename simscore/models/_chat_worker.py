"""The renderer process of :class:`simscore.models.chat_templates.ChatTemplate` (run as a script, never imported).

Started as ``python -I _chat_worker.py SYS_PATH MEMORY``: it takes the parent's import path,
imports jinja2 (and only the standard library besides), builds the environment transformers
renders chat templates in, renders one template once to import everything rendering may
need, then limits itself (``MEMORY`` bytes of address space more than it uses now, no file
to open or write, no process to start; POSIX only) and says ``{"ready": true}``. Then it
reads one JSON request per line on stdin and writes one JSON reply per line on stdout:
``{"text": ...}`` or ``{"error": ...}``. The parent bounds its time.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: jinja2 releases before 3.1.6 have known sandbox escapes (transformers requires 3.1.6 too).
_JINJA_FLOOR = (3, 1, 6)


def _environment() -> Any:
    """jinja2's immutable sandbox as ``transformers.utils.chat_template_utils`` (5.x) configures it."""
    import jinja2
    import jinja2.ext
    import jinja2.sandbox

    version = tuple(int(part) for part in jinja2.__version__.split(".")[:3] if part.isdigit())
    if version < _JINJA_FLOOR:
        raise ImportError(f"chat templates need jinja2>=3.1.6 (earlier ones have sandbox escapes), found {jinja2.__version__}")
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_generation_extension(), jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _namespace_class()
    return env


def _generation_extension() -> Any:
    """``{% generation %}...{% endgeneration %}``: renders its body (transformers marks assistant tokens with it)."""
    import jinja2.ext
    import jinja2.nodes

    class Generation(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return str(caller())

    return Generation


def _namespace_class() -> Any:
    """jinja2's ``namespace`` refusing underscore names (no way to a dunder through its attributes)."""
    import jinja2.exceptions
    import jinja2.utils

    def check(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"a namespace cannot hold the underscore name {name!r}")

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args: Any, **kwargs: Any) -> None:
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

    return TemplateNamespace


def _raise_exception(message: str) -> None:
    import jinja2.exceptions

    raise jinja2.exceptions.TemplateError(message)


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    from datetime import datetime

    return datetime.now().strftime(format)


class _TemplateDict:
    """``dict`` without its attributes (no way to the class from a template)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _render(env: Any, compiled: dict[str, Any], request: dict[str, Any]) -> str:
    template = request["template"]
    if template not in compiled:
        compiled.clear()
        compiled[template] = env.from_string(template)
    limit = int(request["max_chars"])
    pieces: list[str] = []
    size = 0
    stream = compiled[template].generate(
        messages=request["messages"], tools=request.get("tools"), documents=None,
        add_generation_prompt=request["add_generation_prompt"], **request["variables"],
    )
    for piece in stream:
        size += len(piece)
        if size > limit:
            raise OverflowError(f"the prompt grew beyond {limit:,} characters")
        pieces.append(piece)
    return "".join(pieces)


def _limit(memory: int) -> None:
    """Address space: what is used now plus ``memory``; no file to open or write; no process to start."""
    try:
        import resource
    except ImportError:  # not POSIX: the parent's time and size limits only
        return
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            used = int(handle.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        used = None
    limits = [(resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_NOFILE, 3), (resource.RLIMIT_CORE, 0)]
    if used is not None:
        limits.append((resource.RLIMIT_AS, used + memory))
    if hasattr(resource, "RLIMIT_NPROC"):
        limits.append((resource.RLIMIT_NPROC, 0))
    for which, value in limits:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):  # e.g. macOS refuses RLIMIT_AS
            pass


def _reply(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    sys.path[:] = json.loads(sys.argv[1])
    memory = int(sys.argv[2])
    try:
        env = _environment()
    except ImportError as exc:
        _reply({"error": f"{exc}; pip install 'jinja2>=3.1.6'"})
        return
    compiled: dict[str, Any] = {}
    warm = "{{ messages[0].content|tojson }}{{ strftime_now('%Y')|wordwrap(5) }}{% set n = namespace(x=1) %}"
    _render(env, compiled, {"template": warm, "messages": [{"content": "x"}], "variables": {},
                            "add_generation_prompt": True, "max_chars": 100})
    try:  # an error imports jinja's traceback rewriting
        _render(env, compiled, {"template": "{{ raise_exception('x') }}", "messages": [], "variables": {},
                                "add_generation_prompt": True, "max_chars": 100})
    except Exception:  # noqa: BLE001 - expected
        pass
    _limit(memory)
    _reply({"ready": True})
    for line in sys.stdin:
        try:
            text = _render(env, compiled, json.loads(line))
        except MemoryError:
            compiled.clear()
            _reply({"error": "MemoryError: the template needed more memory than its limit"})
            continue
        except Exception as exc:  # noqa: BLE001 - every failure of a template is reported to the parent
            _reply({"error": f"{type(exc).__name__}: {str(exc)[:500]}"})
            continue
        _reply({"text": text})


if __name__ == "__main__":
    main()
