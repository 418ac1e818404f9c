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


def test_a_redirect_is_not_followed(scripted: Any, transcripts: Any, key: str) -> None:
    elsewhere, other = scripted(OK)
    base, _ = scripted(_status(307, headers={"Location": f"{elsewhere}/chat/completions"}))
    with pytest.raises(EndpointError, match=r"HTTP 307 redirect to .* \(not followed\)"):
        OpenAIEndpointPolicy(base, model="m", api_key_env=key).respond(transcripts.contexts["trip-1/0"])
    assert other.received == []


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
    for argv, message in [
        ([f"openai:{base}"], "POLICY openai:URL needs --model NAME"),
        (["openai:", "--model", "m"], "POLICY openai:URL needs the endpoint's URL after 'openai:'"),
        ([f"openai:{base}", "--model", "m", "--checkpoint", "3"], "--checkpoint applies to GP-SARSA run folders only"),
        ([f"openai:{base}", "--model", "m", "--batch-size", "3"], "--batch-size applies to hf:DIR policies only"),
        (["handcrafted", "--concurrency", "2"], "--concurrency applies to openai:URL policies only"),
        ([f"openai:{base}", "--model", "m", "--timeout", "0"], "POLICY openai:URL: timeout must be > 0"),
        ([f"openai:{base}", "--model", "m", "--api-key-env", "NO_SUCH_KEY_VARIABLE"],
         "the environment variable NO_SUCH_KEY_VARIABLE holding the API key is not set"),
    ]:
        assert main(["respond", argv[0], str(contexts), *out, *argv[1:]]) == 2
        assert message in capsys.readouterr().err, argv
    assert script.received == []
