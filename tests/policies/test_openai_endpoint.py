"""OpenAIEndpointPolicy against real servers on the loopback address.

* ``transformers serve`` (transformers' own OpenAI-compatible server, the ``serve`` extra)
  started as a subprocess on a tiny random model written here: requests with transcript
  messages and tools, C_gen prompts, determinism across runs, the command line, and the API
  key in no output;
* small ``http.server`` servers in this process for what a model server does not do on
  demand: 503 twice then a reply, 429 with Retry-After, 400, 401 echoing the key, a redirect,
  a reply too slow, a reply that is not JSON.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contexts import generate_grid
from contexts.transcripts import read_chat_transcripts
from policies.lm.openai_endpoint import OpenAIEndpointPolicy, chat_completions_url
from simscore.acts import Act
from simscore.errors import EndpointError
from simscore.policy import run_policy
from tests.contexts.transcript_samples import write_chat_transcripts

KEY = "sk-simscore-test-7f3a9c1e5b2d4068"
#: Renders the tools' names, then the messages (a tool call as its name), then the prompt.
TEMPLATE = (
    "{% if tools %}tools:{% for t in tools %} {{ t.function.name }}{% endfor %}\n{% endif %}"
    "{% for m in messages %}{{ m.role }}: {{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %} {{ c.function.name }}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from examples.tiny_models import write_tiny_model

    return write_tiny_model(tmp_path_factory.mktemp("served") / "tiny-gpt2", seed=3, chat_template=TEMPLATE)


@pytest.fixture(scope="module")
def served(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``transformers serve`` on the tiny model at 127.0.0.1: its base URL and its log file."""
    import importlib.util

    from transformers.utils import import_utils

    try:
        found = importlib.util.find_spec("transformers.cli.serving") is not None
    except ModuleNotFoundError:  # transformers 4 has no transformers.cli
        found = False
    if not found:
        pytest.skip("transformers serve with chat completions needs transformers 5")
    if not import_utils.is_serve_available() or importlib.util.find_spec("accelerate") is None:
        pytest.skip("transformers serve needs fastapi, uvicorn, openai and accelerate: pip install 'simscore-dialogue[text,serve]'")
    port = _free_port()
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    # the server lists the models of its hub cache on /v1/models and answers 500 where that folder is
    # missing (huggingface_hub's CacheNotFound), as it is on a new machine: it gets an empty one of its own
    home = tmp_path_factory.mktemp("serve-hf-home")
    (home / "hub").mkdir()
    env = {**os.environ, "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-c", "import sys; from transformers.cli.transformers import main; sys.exit(main())",
               "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
               "--log-level", "info"]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except urllib.error.HTTPError as exc:  # it runs and answers errors: waiting will not mend it
                pytest.fail(f"transformers serve answered {exc.code} on /v1/models:\n{log.read_text()[-3000:]}")
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield base, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return read_chat_transcripts(write_chat_transcripts(tmp_path_factory.mktemp("chats") / "chats.jsonl"))


@pytest.mark.slow  # transformers serve starts in 10-30 s
def test_transformers_serve_answers_transcripts_and_grid_deterministically(served: tuple[str, Path], model_dir: Path,
                                                                           transcripts: Any) -> None:
    base, _ = served
    grid = generate_grid()
    contexts = [*transcripts.contexts, *list(grid)[:4]]
    first = run_policy(OpenAIEndpointPolicy(base, model=str(model_dir), max_tokens=6, concurrency=3), contexts)
    again = run_policy(OpenAIEndpointPolicy(base, model=str(model_dir), max_tokens=6, concurrency=1), contexts)
    assert [first[c.id] for c in contexts] == [again[c.id] for c in contexts]  # same seed, temperature 0
    texts = [first[c.id].text for c in contexts]
    assert all(isinstance(text, str) and text for text in texts)
    # the random model writes no tool call: every reply is a text, the act reply()
    assert {str(first[c.id].action) for c in contexts} == {"reply()"}
    assert len(set(texts)) > 1  # the prompts differ, and so do the replies
    facts = first.provenance
    assert facts["adapter"] == "openai" and facts["endpoint"] == f"{base}/chat/completions"
    assert facts["model"] == str(model_dir) and facts["served_models"] == [f"{model_dir}@main"]
    assert facts["finish_reasons"] == {"length": len(contexts)} and (facts["retried"], facts["retries"]) == (0, 4)
    assert (facts["temperature"], facts["seed"], facts["api_key"]) == (0.0, 0, None)


def test_the_request_carries_the_transcripts_messages_and_tools(transcripts: Any) -> None:
    policy = OpenAIEndpointPolicy("http://127.0.0.1:9", model="m")
    context = transcripts.contexts["trip-1/1"]
    body = policy.request(context)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"] == {
        "name": "find_flight", "arguments": '{"origin": "SFO", "destination": "BOS", "date": "2025-05-03"}'}
    assert [t["function"]["name"] for t in body["tools"]] == ["find_flight", "get_weather"]
    assert (body["temperature"], body["stream"], body["model"]) == (0.0, False, "m")
    assert body["seed"] == policy.request(context)["seed"] != policy.request(transcripts.contexts["trip-1/0"])["seed"]
    grid_context = next(iter(generate_grid()))
    grid_body = policy.request(grid_context)
    assert [m["role"] for m in grid_body["messages"]] == ["system", "user"] and "tools" not in grid_body


@pytest.mark.slow
def test_the_command_line_twice_and_the_key_nowhere(served: tuple[str, Path], model_dir: Path, transcripts: Any,
                                                    tmp_path: Path) -> None:
    base, log = served
    contexts = tmp_path / "contexts.jsonl"
    transcripts.contexts.to_jsonl(contexts)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    outputs = []
    for run in (1, 2):
        out = tmp_path / f"run{run}.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "simscore", "respond", f"openai:{base}", "--model", str(model_dir), str(contexts),
             "--out", str(out), "--max-new-tokens", "6", "--concurrency", "2"],
            capture_output=True, text=True, env=env, timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"wrote 4 responses of {str(model_dir)!r} to {out} (4 with an action, 4 with a text)"
        outputs.append(out.read_text())
        for text in (out.read_text(), done.stdout, done.stderr):
            assert KEY not in text
    header = json.loads(outputs[0].splitlines()[0])
    assert [line for line in outputs[0].splitlines()[1:]] == [line for line in outputs[1].splitlines()[1:]]
    assert json.dumps(header).count("OPENAI_API_KEY") == 1  # the variable's name, not its value
    assert KEY not in log.read_text()


# -- servers of our own: retries, timeouts, refusals ---------------------------------------------

REPLY = {"id": "r1", "object": "chat.completion", "model": "scripted", "system_fingerprint": "fp_1",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
             "role": "assistant", "content": "Checking.", "tool_calls": [{"id": "x1", "type": "function", "function": {
                 "name": "find_flight", "arguments": '{"origin": "SFO", "destination": "BOS"}'}}]}}]}


class _Script:
    """What a server of ours answers, request by request; what it received."""

    def __init__(self, answers: list[Callable[[http.server.BaseHTTPRequestHandler], None]]) -> None:
        self.answers = answers
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.lock = threading.Lock()


def _status(code: int, body: bytes = b"{}", headers: dict[str, str] | None = None) -> Callable[[Any], None]:
    def answer(handler: Any) -> None:
        handler.send_response(code)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


OK = _status(200, json.dumps(REPLY).encode())


@pytest.fixture
def scripted() -> Iterator[Callable[..., tuple[str, _Script]]]:
    servers = []

    def start(*answers: Callable[[Any], None]) -> tuple[str, _Script]:
        script = _Script(list(answers))

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with script.lock:
                    script.received.append((self.path, dict(self.headers), body))
                    answer = script.answers.pop(0) if len(script.answers) > 1 else script.answers[0]
                answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", script

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("SIMSCORE_TEST_KEY", KEY)
    return "SIMSCORE_TEST_KEY"


def test_503_twice_then_an_answer(scripted: Any, transcripts: Any, key: str) -> None:
    base, script = scripted(_status(503), _status(503), OK)
    policy = OpenAIEndpointPolicy(base, model="m", api_key_env=key, backoff=0.1)
    start = time.monotonic()
    responses = run_policy(policy, [transcripts.contexts["trip-1/0"]])
    assert time.monotonic() - start >= 0.1 + 0.2  # waited backoff, then twice that
    assert responses["trip-1/0"].action == Act.parse("find_flight(destination=BOS,origin=SFO)")
    assert responses["trip-1/0"].text == "Checking."
    assert len(script.received) == 3 and {path for path, _, _ in script.received} == {"/v1/chat/completions"}
    assert {headers["Authorization"] for _, headers, _ in script.received} == {f"Bearer {KEY}"}  # the key is sent
    facts = responses.provenance
    assert (facts["retried"], facts["finish_reasons"], facts["system_fingerprints"]) == (2, {"tool_calls": 1}, ["fp_1"])
    assert facts["api_key"] == f"from {key}" and KEY not in json.dumps(facts) and KEY not in repr(policy)


def test_429_waits_as_long_as_retry_after_asks(scripted: Any, transcripts: Any) -> None:
    base, script = scripted(_status(429, headers={"Retry-After": "0.4"}), OK)
    start = time.monotonic()
    OpenAIEndpointPolicy(base, model="m", backoff=0.01).respond(transcripts.contexts["trip-1/0"])
    assert time.monotonic() - start >= 0.4 and len(script.received) == 2


@pytest.mark.parametrize(("code", "shown"), [(400, "HTTP 400 Bad Request: {\"error\": \"bad\"}"),
                                             (404, "HTTP 404 Not Found: {\"error\": \"bad\"}"),
                                             (408, "HTTP 408 Request Timeout: {\"error\": \"bad\"}")])
def test_a_client_error_is_not_retried(scripted: Any, transcripts: Any, code: int, shown: str) -> None:
    base, script = scripted(_status(code, b'{"error": "bad"}'))
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", backoff=0.01).respond(transcripts.contexts["trip-1/0"])
    assert str(caught.value) == f"{base}/chat/completions: context 'trip-1/0' after 1 try: {shown}"
    assert len(script.received) == 1


def test_after_a_failure_no_further_request_is_sent(scripted: Any) -> None:
    def refuse(handler: Any) -> None:
        time.sleep(0.2)  # the failure reaches the caller before the next request could finish
        _status(400, b'{"error": "bad"}')(handler)

    base, script = scripted(refuse)
    contexts = list(generate_grid())[:40]
    with pytest.raises(EndpointError, match=f"context {contexts[0].id!r} after 1 try: HTTP 400"):
        OpenAIEndpointPolicy(base, model="m", concurrency=2).respond_batch(contexts)
    assert 1 <= len(script.received) <= 4  # those in flight, not the 40


def test_the_key_is_scrubbed_from_an_echoing_server(scripted: Any, transcripts: Any, key: str) -> None:
    def echo(handler: Any) -> None:
        _status(401, json.dumps({"error": f"bad key {handler.headers['Authorization']}"}).encode())(handler)

    base, _ = scripted(echo)
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    assert KEY not in str(caught.value) and "bad key Bearer [API key]" in str(caught.value)


@pytest.mark.parametrize("origin", ["another", "the same"])
def test_a_redirect_is_not_followed(scripted: Any, transcripts: Any, key: str, origin: str) -> None:
    elsewhere, other = scripted(OK)
    base, script = scripted(_status(307, headers={"Location": f"{elsewhere}/chat/completions"}))
    if origin == "the same":  # a second path of the same server: not followed either
        script.answers = [_status(308, headers={"Location": f"{base}/v2/chat/completions"})]
    target = f"{elsewhere if origin == 'another' else base + '/v2'}/chat/completions"
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    code = 307 if origin == "another" else 308
    assert str(caught.value) == (f"{base}/chat/completions: context 'trip-1/0' after 1 try: HTTP {code} redirect to "
                                 f"{target!r} (not followed: the key goes to the endpoint given only; if that address "
                                 "is the endpoint, give it as the URL)")
    assert other.received == [] and len(script.received) == 1


def test_a_slow_server_times_out_and_is_retried(scripted: Any, transcripts: Any) -> None:
    def slow(handler: Any) -> None:
        time.sleep(1.5)
        OK(handler)

    base, script = scripted(slow)
    start = time.monotonic()
    with pytest.raises(EndpointError, match=r"context 'trip-1/0' after 2 tries: (TimeoutError|timeout): timed out"):
        OpenAIEndpointPolicy(base, model="m", timeout=0.3, retries=1, backoff=0.05).respond(transcripts.contexts["trip-1/0"])
    assert time.monotonic() - start < 1.4 and len(script.received) == 2


def test_a_refused_connection_is_retried_then_named(transcripts: Any) -> None:
    base = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(EndpointError, match=r"after 3 tries: ConnectionRefusedError: \[Errno 111\] Connection refused"):
        OpenAIEndpointPolicy(base, model="m", retries=2, backoff=0.01).respond(transcripts.contexts["trip-1/0"])


@pytest.mark.parametrize(("body", "problem"), [
    (b"<html>", "the reply is not JSON"),
    (b'{"choices": []}', "the reply is not a chat completion (no choices[0].message): {'choices': []}"),
    (json.dumps({"choices": [{"message": {"role": "assistant", "content": None}}]}).encode(),
     "the reply cannot be a response: a reply with neither text nor tool calls"),
])
def test_a_reply_that_is_not_a_chat_completion(scripted: Any, transcripts: Any, body: bytes, problem: str) -> None:
    base, _ = scripted(_status(200, body))
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", reply_intent=None).respond(transcripts.contexts["trip-1/0"])
    assert problem in str(caught.value)


def test_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    with pytest.raises(ValueError, match="the environment variable NO_SUCH_KEY_VARIABLE holding the API key is not set"):
        OpenAIEndpointPolicy("http://127.0.0.1:1", model="m", api_key_env="NO_SUCH_KEY_VARIABLE", require_key=True)
    with pytest.raises(ValueError, match=r"the URL holds credentials \(user:password@host\)"):
        chat_completions_url(f"https://user:{KEY}@api.example.com/v1")
    assert chat_completions_url("http://h:1/v1/chat/completions?api-version=2") == "http://h:1/v1/chat/completions?api-version=2"
    policy = OpenAIEndpointPolicy("http://h:1/v1?key=secret", model="m")
    assert policy.endpoint == "http://h:1/v1/chat/completions" and "secret" not in json.dumps(policy.provenance)
    with pytest.raises(ValueError, match="concurrency"):
        OpenAIEndpointPolicy("http://h:1", model="m", concurrency=0)


def test_the_command_line_names_a_wrong_option(scripted: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from simscore.__main__ import main

    base, script = scripted(OK)
    contexts = tmp_path / "C_gen.jsonl"
    generate_grid().to_jsonl(contexts)
    out = ["--out", str(tmp_path / "x.jsonl")]
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    monkeypatch.setenv("SIMSCORE_LINE_KEY", KEY + "\n")
    for argv, message in [
        ([f"openai:{base}"], "POLICY openai:URL needs --model NAME"),
        (["openai:", "--model", "m"], "POLICY openai:URL needs the endpoint's URL after 'openai:'"),
        ([f"openai:{base}", "--model", "m", "--checkpoint", "3"], "--checkpoint applies to GP-SARSA run folders only"),
        ([f"openai:{base}", "--model", "m", "--batch-size", "3"], "--batch-size applies to hf:DIR policies only"),
        (["handcrafted", "--concurrency", "2"], "--concurrency applies to openai:URL policies only"),
        ([f"openai:{base}", "--model", "m", "--timeout", "0"], "POLICY openai:URL: timeout must be > 0"),
        ([f"openai:{base}", "--model", "m", "--timeout", "1e9"],
         "POLICY openai:URL: timeout must be <= 86400.0, got 1000000000.0"),
        ([f"openai:{base}", "--model", "m", "--api-key-env", "SIMSCORE_LINE_KEY"],
         "POLICY openai:URL: the environment variable SIMSCORE_LINE_KEY holds the API key with a space, a line break"),
        ([f"openai:{base}", "--model", "m", "--api-key-env", "NO_SUCH_KEY_VARIABLE"],
         "the environment variable NO_SUCH_KEY_VARIABLE holding the API key is not set"),
    ]:
        assert main(["respond", argv[0], str(contexts), *out, *argv[1:]]) == 2
        err = capsys.readouterr().err
        assert message in err and KEY not in err, argv
    assert script.received == []


# -- the key in what a hostile server sends back (issue 41) --------------------------------------

def _key_parts(text: str, size: int = 6) -> list[str]:
    """The pieces of KEY's secret tail (after 'sk-simscore-test-'), ``size`` characters long, that ``text``
    holds (a key cut short shows some)."""
    tail = KEY.rsplit("-", 1)[1]
    return [tail[i:i + size] for i in range(len(tail) - size + 1) if tail[i:i + size] in text]


def test_the_reason_phrase_is_scrubbed(scripted: Any, transcripts: Any, key: str) -> None:
    def reason(handler: Any) -> None:
        handler.send_response(401, f"Unauthorized {handler.headers['Authorization']}")
        handler.send_header("Content-Length", "2")
        handler.end_headers()
        handler.wfile.write(b"{}")

    base, _ = scripted(reason)
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    assert str(caught.value) == f"{base}/chat/completions: context 'trip-1/0' after 1 try: HTTP 401 Unauthorized Bearer [API key]: {{}}"


def test_a_redirects_location_is_scrubbed(scripted: Any, transcripts: Any, key: str) -> None:
    import base64

    def redirect(handler: Any) -> None:
        sent = handler.headers["Authorization"]
        encoded = base64.b64encode(sent.encode()).decode()  # "Bearer " puts the key at offset 7 of the bytes
        _status(302, b"", {"Location": f"http://elsewhere.example/v1?k={sent[7:]}&dump={encoded}"})(handler)

    base, _ = scripted(redirect)
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    # base64: 'Bearer sk' is QmVhcmVyIHNr, the key's last '8' OA==; what lies between is masked
    assert str(caught.value) == (f"{base}/chat/completions: context 'trip-1/0' after 1 try: HTTP 302 redirect to "
                                 "'http://elsewhere.example/v1?k=[API key]&dump=QmVhcmVyIHNr[API key]OA==' (not "
                                 "followed: the key goes to the endpoint given only; if that address is the endpoint, "
                                 "give it as the URL)")


def test_the_key_is_scrubbed_before_the_excerpt_cuts(scripted: Any, transcripts: Any, key: str) -> None:
    # unscrubbed, the 120-character excerpt of this reply ends 19 characters into the key
    def echo(handler: Any) -> None:
        body = {"choices": [], "error": "x" * 67 + " " + handler.headers["Authorization"]}
        _status(200, json.dumps(body).encode())(handler)

    base, _ = scripted(echo)
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    assert str(caught.value) == (f"{base}/chat/completions: context 'trip-1/0': the reply is not a chat completion "
                                 f"(no choices[0].message): {{'choices': [], 'error': '{'x' * 67} Bearer [API key]'}}")


@pytest.mark.parametrize("where", ["the headers", "the body"])
def test_a_trickling_server_is_cut_off_at_the_timeout(scripted: Any, transcripts: Any, where: str) -> None:
    # a byte every 0.25 s: each read returns in time, the whole reply never does
    def trickle(handler: Any) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
        if where == "the body":
            handler.wfile.write(head)
        for byte in (head if where == "the headers" else b"{" * 1000)[:40]:
            try:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            except OSError:  # the client gave up
                return
            time.sleep(0.25)

    base, script = scripted(trickle)
    start = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        OpenAIEndpointPolicy(base, model="m", timeout=1, retries=0).respond(transcripts.contexts["trip-1/0"])
    assert 1.0 <= time.monotonic() - start < 2.5 and len(script.received) == 1
    assert str(caught.value).endswith("after 1 try: TimeoutError: timed out (no complete reply within 1 s)")


def test_the_timeout_is_bounded_before_any_request() -> None:
    with pytest.raises(ValueError, match=r"^timeout must be <= 86400.0, got 100000$"):
        OpenAIEndpointPolicy("http://127.0.0.1:9", model="m", timeout=100_000)


def test_a_key_echoed_in_the_answer_is_masked_in_the_responses_file(
        scripted: Any, tmp_path: Path, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    from contexts import GridSpec
    from simscore.__main__ import main

    def echo(handler: Any) -> None:  # a model repeating the key in its text and a call's arguments, but every 3rd time
        sent = handler.headers["Authorization"][len("Bearer "):]
        message: dict[str, Any] = {"role": "assistant", "content": "hello"}
        if len(script.received) % 3:
            message = {"role": "assistant", "content": f"your key is {sent}", "tool_calls": [{
                "id": "c1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"token": sent})}}]}
        _status(200, json.dumps({"model": "m", "choices": [{"finish_reason": "stop", "message": message}]}).encode())(handler)

    base, script = scripted(echo)
    contexts = tmp_path / "C_gen.jsonl"
    generate_grid(GridSpec(slots=("area",), levels=(0.0, 0.5, 1.0), methods=("none",))).to_jsonl(contexts)  # 3 contexts
    out = tmp_path / "answers.jsonl"
    argv = ["respond", f"openai:{base}", str(contexts), "--model", "m", "--api-key-env", key, "--concurrency", "1",
            "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    written = out.read_text()
    assert _key_parts(written + captured.out + captured.err) == [] and written.count("[API key]") == 4
    records = [json.loads(line) for line in written.splitlines()]
    assert [(r["action"], r["text"]) for r in records[1:]] == [
        ('lookup(token="[API key]")', "your key is [API key]"), ('lookup(token="[API key]")', "your key is [API key]"),
        ("reply()", "hello")]
    assert records[0]["provenance"]["api_key_masked"] == 2
    assert captured.err == ("simscore respond: warning: 2 of 3 replies held the API key (from SIMSCORE_TEST_KEY); "
                            "their responses hold [API key] in its place\n")
    assert main([*argv, "--out", str(tmp_path / "sampled.jsonl"), "--samples", "2"]) == 0
    assert capsys.readouterr().err == ("simscore respond: warning: 4 of 6 replies held the API key (from "
                                       "SIMSCORE_TEST_KEY); their responses hold [API key] in its place\n")  # one line


def test_a_key_that_no_header_can_carry_is_refused_unshown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMSCORE_TEST_KEY", KEY + "\r\n")  # KEY=$(cat key.txt) of a file written on Windows
    with pytest.raises(ValueError) as caught:
        OpenAIEndpointPolicy("http://127.0.0.1:9", model="m", api_key_env="SIMSCORE_TEST_KEY")
    assert str(caught.value) == ("the environment variable SIMSCORE_TEST_KEY holds the API key with a space, a line "
                                 "break or another character an HTTP header cannot carry (character 34 of 35); set it "
                                 "to the key alone")
    assert _key_parts(_frames_locals(caught.value)) == []


def _frames_locals(error: BaseException) -> str:
    """The locals of every frame of ``error``'s traceback, as a traceback that shows them would write them."""
    import traceback

    return "".join(f"{name}={value!r}\n" for frame, _ in traceback.walk_tb(error.__traceback__)
                   for name, value in frame.f_locals.items())


def test_the_key_is_in_no_repr_vars_or_traceback_locals(key: str) -> None:
    with pytest.raises(ValueError, match="temperature must be >= 0.0") as caught:
        OpenAIEndpointPolicy("http://127.0.0.1:9", model="m", api_key_env=key, temperature=-1)
    shown = _frames_locals(caught.value)
    assert "self=OpenAIEndpointPolicy(<not made>)" in shown and _key_parts(shown) == []
    policy = OpenAIEndpointPolicy("http://127.0.0.1:9", model="m", api_key_env=key)
    assert _key_parts(repr(vars(policy)) + repr(policy) + json.dumps(policy.provenance)) == []
    assert "APIKey(from SIMSCORE_TEST_KEY)" in repr(vars(policy))


def test_every_form_of_the_key_is_scrubbed() -> None:
    import base64
    import urllib.parse

    from policies.lm._http import APIKey

    secret = "k3y+with/slash=and-more"  # characters that percent-encoding and base64 change
    scrubber = APIKey("V", secret)
    quoted = urllib.parse.quote(secret, safe="")
    texts = [f"?k={quoted}", f"?k={quoted.lower()}", f"?k={urllib.parse.quote_plus(secret)}"]
    for prefix in (b"", b"a", b"ab", b"Authorization: Bearer "):  # every alignment of the key in base64
        encoded = base64.b64encode(prefix + secret.encode()).decode()
        texts += [encoded, encoded.replace("+", "-").replace("/", "_")]
    for text in texts:
        scrubbed = scrubber.scrub(text)
        assert "[API key]" in scrubbed and len(scrubbed) < len(text), text
    assert scrubber.scrub(f"cut here: {secret[:9]}", cut=True) == "cut here: [API key]"
    assert scrubber.scrub(f"cut here: {secret[:9]}") == f"cut here: {secret[:9]}"  # not cut: another text
    assert scrubber.scrub("ends in k3y", cut=True) == "ends in k3y"  # three characters tell nothing
    assert APIKey("V", "short").scrub(base64.b64encode(b"short").decode()) == "c2hvcnQ="  # too short for base64 forms
