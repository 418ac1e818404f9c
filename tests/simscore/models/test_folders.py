"""The model loader (simscore.models): folders refused by name before anything is loaded, hostile
folders whose code never runs through any loader (a marker file tells), chat templates within
bounds of time, memory and size and inside their sandbox, and the causal-model warning.

The folder checks need no extra (the folders are written by hand, safetensors headers too);
what loads a model needs the text extra."""

from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import time
import warnings
from pathlib import Path

import pytest

from simscore.errors import (
    CausalEncoderWarning,
    ChatTemplateError,
    MeasureOptionError,
    ModelNotFoundError,
    UnsupportedModelError,
)
from simscore.models import (
    ALLOWANCE_ELEMENTS,
    MAX_JSON_DEPTH,
    MAX_TOKENIZER_BYTES,
    MAX_VOCABULARY,
    existing_folder,
    open_model_folder,
)
from simscore.models.chat_templates import ChatTemplate
from tests.simscore.hostile_models import ESCAPES, HOSTILE, PROBLEMS, write_tiny_encoder

CONFIG = {"model_type": "bert", "vocab_size": 20, "hidden_size": 8, "num_hidden_layers": 2,
          "max_position_embeddings": 64, "intermediate_size": 16, "num_attention_heads": 2}


def _safetensors(path: Path, tensors: dict[str, list[int]]) -> int:
    """A float32 safetensors file written by hand (header, zero bytes); returns its number of elements."""
    header, offset = {}, 0
    for name, shape in tensors.items():
        size = math.prod(shape) * 4
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + bytes(offset))
    return sum(math.prod(shape) for shape in tensors.values())


def _folder(root: Path, name: str = "model", *, config: dict | None = None, weights: bool = True,
            tokenizer: bool = True) -> Path:
    """A model folder as save_pretrained writes one, by hand: config.json, model.safetensors, tokenizer.json."""
    folder = root / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG if config is None else config))
    if weights:
        _safetensors(folder / "model.safetensors", {"embeddings.word_embeddings.weight": [20, 8],
                                                    "embeddings.position_embeddings.weight": [64, 8]})
    if tokenizer:
        vocab = {word: i for i, word in enumerate(["[PAD]", "[UNK]", "a", "b"])}
        (folder / "tokenizer.json").write_text(json.dumps({"version": "1.0", "added_tokens": [],
                                                          "model": {"type": "WordLevel", "vocab": vocab}}))
    return folder


# -- refused by name, nothing loaded (no extra needed) -------------------------------------------


def test_a_plain_folder_opens_and_says_what_it_holds(tmp_path):
    folder = open_model_folder(_folder(tmp_path))
    assert folder.model_type == "bert" and folder.weight_files == ("model.safetensors",)
    assert folder.weight_elements == 20 * 8 + 64 * 8 and folder.tokenizer_files == ("tokenizer.json",)
    assert open_model_folder(folder.path, weights=False, tokenizer=False).weight_elements is None


def test_missing_folders_files_and_non_models_are_named(tmp_path):
    with pytest.raises(ModelNotFoundError, match=f"model folder {tmp_path}/nowhere does not exist .*never downloaded"):
        open_model_folder(tmp_path / "nowhere")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UnsupportedModelError, match="file.txt is a file; expected a model folder"):
        existing_folder(tmp_path / "file.txt")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "notes.md").write_text("x")
    with pytest.raises(UnsupportedModelError, match=r"notes is not a Hugging Face model folder: it has no config.json "
                                                    r"\(found: notes.md\)"):
        open_model_folder(notes)
    with pytest.raises(UnsupportedModelError, match=r"bare has no tokenizer files \(tokenizer.json, vocab.txt, .*\) "
                                                    r"\(found: config.json, model.safetensors\)"):
        open_model_folder(_folder(tmp_path, "bare", tokenizer=False))
    with pytest.raises(UnsupportedModelError, match=r"weightless has no model weights \(model.safetensors or "
                                                    r"model.safetensors.index.json\) \(found: config.json, tokenizer.json"):
        open_model_folder(_folder(tmp_path, "weightless", weights=False))


def test_pickle_only_weights_are_refused_by_name(tmp_path):
    from tests.simscore.hostile_models import pickle_payload

    marker = tmp_path / "MARKER"
    folder = _folder(tmp_path, weights=False)
    (folder / "pytorch_model.bin").write_bytes(pickle_payload(marker))
    with pytest.raises(UnsupportedModelError, match=r"model has weights only in pytorch_model.bin \(pickle or other "
                                                    r"formats\); simscore loads safetensors only"):
        open_model_folder(folder)
    assert not marker.exists()
    # the payload is real: unpickled, it writes the marker (which is why it is never unpickled)
    pickle.loads(pickle_payload(marker))  # noqa: S301 - the test's own bytes
    assert marker.read_text() == "pickle ran"


def test_code_named_by_auto_map_is_refused_before_transformers_is_asked(tmp_path):
    config = {key: value for key, value in CONFIG.items() if key != "model_type"}
    folder = _folder(tmp_path, config={**config, "auto_map": {"AutoConfig": "evil.EvilConfig"}})
    with pytest.raises(UnsupportedModelError, match=r"model/config.json: auto_map \(AutoConfig -> evil.EvilConfig\) "
                                                    r"names the folder's own code, which simscore never runs"):
        open_model_folder(folder)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_positions": 10**9}, "n_positions is 1000000000; a model size here must be a whole number from 0 to 16,777,216"),
        ({"max_position_embeddings": 10**9}, "max_position_embeddings is 1000000000; .* from 0 to 16,777,216"),
        ({"vocab_size": 10**9}, "vocab_size is 1000000000; .* from 0 to 1,048,576"),
        ({"hidden_size": 10**9}, "hidden_size is 1000000000; .* from 0 to 131,072"),
        ({"num_hidden_layers": 10**9}, "num_hidden_layers is 1000000000; .* from 0 to 1,024"),
        ({"text_config": {"vocab_size": 10**9}}, "text_config.vocab_size is 1000000000"),
        ({"num_hidden_layers": -1}, "num_hidden_layers is -1"),
        # a width is divided by its heads: none is a ZeroDivisionError inside transformers
        ({"num_attention_heads": 0}, "num_attention_heads is 0; a model size here must be a whole number from 1 to 4,096"),
        ({"text_config": {"n_head": 0}}, "text_config.n_head is 0; .* from 1 to 4,096"),
        ({"vocab_size": 2.5}, "vocab_size is 2.5"),
        ({"vocab_size": True}, "vocab_size is True"),
        ({"vocab_size": "many"}, "vocab_size is many"),
        # within each bound, but not what these weights (672 numbers) can be
        ({"vocab_size": 1_000_000, "hidden_size": 64}, "vocab_size = 1,000,000 at width 64 declares 64,000,000 numbers; "
                                                       "the weights hold 672: the configuration does not describe"),
        ({"max_position_embeddings": 10_000_000}, "max_position_embeddings = 10,000,000 at width 8 declares 80,000,000"),
        ({"num_hidden_layers": 1000, "hidden_size": 4096}, "num_hidden_layers = 1,000 at width 4,096 declares"),
    ],
)
def test_declared_sizes_are_bounded_before_anything_is_allocated(tmp_path, changes, message):
    folder = _folder(tmp_path, config={**CONFIG, **changes})
    with pytest.raises(UnsupportedModelError, match=f"model/config.json: {message}"):
        open_model_folder(folder)


def test_the_allowance_lets_small_models_declare_long_tables(tmp_path):
    # 2**21 positions at width 8 are 2**24 numbers: no more than the allowance, whatever the weights hold
    assert (1 << 21) * 8 == ALLOWANCE_ELEMENTS
    open_model_folder(_folder(tmp_path, config={**CONFIG, "max_position_embeddings": 1 << 21}))
    with pytest.raises(UnsupportedModelError, match="max_position_embeddings = 2,097,153 at width 8"):
        open_model_folder(_folder(tmp_path, "one-more", config={**CONFIG, "max_position_embeddings": (1 << 21) + 1}))


def test_json_files_are_bounded_in_nesting_and_size_before_they_are_parsed(tmp_path):
    deep = _folder(tmp_path, "deep")
    (deep / "tokenizer.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UnsupportedModelError, match=f"deep/tokenizer.json: JSON nested deeper than {MAX_JSON_DEPTH} levels"):
        open_model_folder(deep)
    nested = {"model": {}}
    for _ in range(MAX_JSON_DEPTH):
        nested = {"x": nested}
    (deep / "tokenizer.json").write_text(json.dumps(nested))  # within Python's parser, beyond the bound
    with pytest.raises(UnsupportedModelError, match="JSON nested deeper than 64 levels"):
        open_model_folder(deep)
    huge = _folder(tmp_path, "huge")
    with open(huge / "tokenizer.json", "r+b") as handle:  # sparse: nothing is written, nothing is read
        handle.truncate(MAX_TOKENIZER_BYTES + 1)
    with pytest.raises(UnsupportedModelError, match=r"huge/tokenizer.json: 67,108,865 bytes, more than the 67,108,864"):
        open_model_folder(huge)
    zero = _folder(tmp_path, "zero")
    (zero / "config.json").unlink()
    (zero / "config.json").symlink_to("/dev/zero")
    with pytest.raises(UnsupportedModelError, match="zero/config.json: not a regular file"):
        open_model_folder(zero)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_model_folder_is_refused_without_waiting_on_it(tmp_path):
    folder = _folder(tmp_path, tokenizer=False)
    os.mkfifo(folder / "tokenizer.json")
    with pytest.raises(UnsupportedModelError, match="model/tokenizer.json: not a regular file"):
        open_model_folder(folder)


@pytest.mark.slow
def test_vocabularies_are_bounded_before_the_tokenizer_parses_them(tmp_path):
    big = _folder(tmp_path, "big")
    pieces = ",".join(['["x",0.0]'] * (MAX_VOCABULARY + 1))
    (big / "tokenizer.json").write_text(f'{{"model": {{"type": "Unigram", "vocab": [{pieces}]}}}}')
    with pytest.raises(UnsupportedModelError, match="big/tokenizer.json: model.vocab has 1,048,577 entries, more than 1,048,576"):
        open_model_folder(big)
    lines = _folder(tmp_path, "lines", tokenizer=False)
    (lines / "vocab.txt").write_bytes(b"x\n" * (MAX_VOCABULARY + 2))
    with pytest.raises(UnsupportedModelError, match="lines/vocab.txt: more than 1,048,576 entries"):
        open_model_folder(lines)


def test_safetensors_headers_are_checked(tmp_path):
    folder = _folder(tmp_path)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + length])
    header["embeddings.word_embeddings.weight"]["shape"] = [20_000_000, 8]  # claims far more than its bytes
    raw = json.dumps(header).encode()
    weights.write_bytes(len(raw).to_bytes(8, "little") + raw + data[8 + length :])
    with pytest.raises(UnsupportedModelError, match=r"model.safetensors: tensor 'embeddings.word_embeddings.weight' "
                                                    r"declares 160,000,000 elements of F32 in bytes 0-640 of 2688"):
        open_model_folder(folder)
    weights.write_bytes((10**12).to_bytes(8, "little") + b"{}")
    with pytest.raises(UnsupportedModelError, match=r"not a safetensors file \(header length 1000000000000\)"):
        open_model_folder(folder)
    index = _folder(tmp_path, "sharded", weights=False)
    (index / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": "../model/model.safetensors"}}))
    with pytest.raises(UnsupportedModelError, match="names '../model/model.safetensors', not a .safetensors file here"):
        open_model_folder(index)


# -- hostile folders through every loader (the text extra) ----------------------------------------


def _score(name):
    def load(folder):
        from simscore.measures import resolve_measures

        measure = resolve_measures([name], options={name: {"model": str(folder), **(
            {"num_layers": 1} if name == "bertscore" else {})}})[0]
        return measure.score_pairs(["thai food please"], ["what kind of food ?"])
    return load


def _load_model(folder):
    import transformers

    return open_model_folder(folder).load_model(transformers.AutoModel)


LOADERS = {
    "bertscore": _score("bertscore"),
    "emb_cos": _score("emb_cos"),
    "emb_ang": _score("emb_ang"),
    "config": lambda folder: open_model_folder(folder).load_config(),
    "tokenizer": lambda folder: open_model_folder(folder, weights=False).load_tokenizer(),
    "model": _load_model,
}
@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return write_tiny_encoder(tmp_path_factory.mktemp("encoder") / "tiny-bert")


@pytest.mark.extra("text")
def test_the_tiny_encoder_loads_through_every_loader(encoder):
    for name, load in LOADERS.items():
        assert load(encoder) is not None, name


@pytest.mark.extra("text")
@pytest.mark.parametrize("variant", sorted(HOSTILE))
@pytest.mark.parametrize("loader", sorted(LOADERS))
def test_no_loader_runs_a_hostile_folders_code(encoder, tmp_path, loader, variant):
    marker = tmp_path / "MARKER"
    folder = HOSTILE[variant](encoder, tmp_path / variant, marker)
    if loader == "tokenizer" and variant == "pickle_only":
        assert LOADERS[loader](folder) is not None  # the tokenizer reads no weights
    else:
        # a refusal while a measure is configured comes as the measure's option error, naming the measure
        with pytest.raises((UnsupportedModelError, MeasureOptionError), match=PROBLEMS[variant]) as info:
            LOADERS[loader](folder)
        assert str(folder) in str(info.value)
    assert not marker.exists()


@pytest.mark.extra("text")
def test_the_loader_fixes_the_safety_arguments(encoder):
    import transformers

    folder = open_model_folder(encoder)
    with pytest.raises(TypeError, match="trust_remote_code cannot be set: the model loader fixes it"):
        folder.load_tokenizer(trust_remote_code=True)
    with pytest.raises(TypeError, match="use_safetensors cannot be set"):
        folder.load_model(transformers.AutoModel, use_safetensors=False)
    without = open_model_folder(encoder, weights=False)
    with pytest.raises(UnsupportedModelError, match="opened without weights"):
        without.load_model(transformers.AutoModel)


@pytest.mark.extra("text")
def test_a_causal_language_model_as_sentence_encoder_warns(encoder, tmp_path):
    import transformers

    from simscore.measures import resolve_measures

    llama = tmp_path / "tiny-llama"
    config = transformers.LlamaConfig(vocab_size=20, hidden_size=8, intermediate_size=16, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    transformers.LlamaForCausalLM(config).save_pretrained(llama)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(encoder / name, llama)
    for name, options in (("emb_cos", {}), ("bertscore", {"num_layers": 1})):
        measure = resolve_measures([name], options={name: {"model": str(llama), **options}})[0]
        with pytest.warns(CausalEncoderWarning, match=f"{name}.*: {llama} holds a causal language model \\(llama\\), "
                                                      "used here as a sentence encoder"):
            measure.score_pairs(["thai food"], ["what food ?"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CausalEncoderWarning)
        resolve_measures(["emb_cos"], options={"emb_cos": {"model": str(encoder)}})[0].score_pairs(["a"], ["b"])
    assert open_model_folder(llama).is_causal() and not open_model_folder(encoder).is_causal()


# -- chat templates ------------------------------------------------------------------------------

MESSAGES = [
    {"role": "system", "content": "Reply."},
    {"role": "user", "content": "Thai food, please. Café naïve 北京"},
    {"role": "assistant", "content": "Which area?"},
    {"role": "user", "content": "North."},
]
#: Templates as models ship them: ChatML, a Llama-2-like one (raise_exception, bos/eos, loop.index0),
#: and one that uses every addition of transformers' environment (namespace, dict, tojson, loop
#: controls, the generation block) and trims whitespace.
TEMPLATES = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}",
    "{% if messages[0]['role'] == 'system' %}{% set system = messages[0]['content'] %}{% set rest = messages[1:] %}"
    "{% else %}{% set system = '' %}{% set rest = messages %}{% endif %}"
    "{% for message in rest %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if loop.index0 == 0 and system %}{% set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% else %}{{ ' ' + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
    "{% set ns = namespace(turns=0) %}\n"
    "{% for m in messages %}\n"
    "  {% if m.role == 'system' %}{% continue %}{% endif %}\n"
    "  {% set ns.turns = ns.turns + 1 %}\n"
    "  {% if m.role == 'assistant' %}{% generation %}{{ m.content|tojson }}{% endgeneration %}\n"
    "  {% else %}{{ dict(role=m.role, n=ns.turns)|tojson }} {{ m.content }}\n{% endif %}\n"
    "  {% if ns.turns > 9 %}{% break %}{% endif %}\n"
    "{% endfor %}\n"
    "{% if add_generation_prompt %}<{{ ns.turns }}>{% endif %}",
)
#: The last template rendered by hand (system skipped, turns counted from 1, the assistant's text
#: as JSON), with and without the generation prompt: the measure where transformers cannot render it.
EXTENSIONS_RENDERED = {TEMPLATES[2]: (
    '{"role": "user", "n": 1} Thai food, please. Café naïve 北京\n"Which area?"{"role": "user", "n": 3} North.\n<3>',
    '{"role": "user", "n": 1} Thai food, please. Café naïve 北京\n"Which area?"{"role": "user", "n": 3} North.\n',
)}


@pytest.mark.extra("text")
@pytest.mark.parametrize("template", TEMPLATES, ids=["chatml", "llama2", "extensions"])
def test_a_chat_template_renders_as_transformers_renders_it(encoder, template):
    import jinja2
    import transformers
    from packaging import version
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(encoder, local_files_only=True, trust_remote_code=False)
    tokenizer.chat_template = template
    tokenizer.add_special_tokens({"bos_token": "<s>", "eos_token": "</s>"})
    if template in EXTENSIONS_RENDERED:
        expected, without_prompt = EXTENSIONS_RENDERED[template]
        try:  # transformers before 4.43 has neither loop controls nor the generation block: the goldens stand
            tokenizer.apply_chat_template(MESSAGES, tokenize=False)
        except jinja2.TemplateSyntaxError:
            assert version.parse(transformers.__version__) < version.parse("4.43")
        else:
            assert tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True) == expected
    else:
        expected = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
        without_prompt = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=False)
    with ChatTemplate.of(tokenizer) as chat:
        assert chat.render(MESSAGES) == expected
        assert chat.render(MESSAGES, add_generation_prompt=False) == without_prompt
    assert "<s>[INST] <<SYS>>" in expected or "<|im_start|>" in expected or '"Which area?"' in expected


@pytest.mark.slow
@pytest.mark.extra("text")
def test_chat_templates_end_in_a_named_error_within_their_bounds():
    cases = {
        # 10**10 steps in jinja's own loops
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x": "did not render within 1 s",
        # one C-level operation of minutes (no signal could stop it; the process is killed)
        "{{ 7 ** 99999999 }}": "did not render within 1 s",
        "{{ 'x' * 100000 * 100000 }}": "MemoryError: the template needed more memory than its limit",
        # doubling a string: the memory limit, or on a busy machine the time limit, comes first
        "{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}":
            "(MemoryError|did not render within 1 s)",
        "{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}": "the prompt grew beyond 1,000 characters",
        "{{ raise_exception('Conversation roles must alternate') }}": "TemplateError: Conversation roles must alternate",
        "{% for %}": "TemplateSyntaxError: Expected an expression",
    }
    for template, message in cases.items():
        chat = ChatTemplate(template, seconds=1.0, max_chars=1000, source="folder/tokenizer_config.json")
        started = time.monotonic()
        with pytest.raises(ChatTemplateError, match=f"folder/tokenizer_config.json: the chat template .*{message}"):
            chat.render(MESSAGES)
        assert time.monotonic() - started < 30, template  # the start (imports) included, under load
        chat.close()
    with pytest.raises(ChatTemplateError, match="has 1,048,577 characters, more than 1,048,576"):
        ChatTemplate("x" * (1 << 20 | 1))


@pytest.mark.extra("text")
def test_a_chat_template_renders_again_after_its_renderer_was_stopped():
    chat = ChatTemplate("{% if messages[0].content == 'loop' %}{% for i in range(100000) %}{% for j in range(100000) %}"
                        "{% endfor %}{% endfor %}{% endif %}<{{ messages[0].content }}>", seconds=1.0)
    assert chat.render([{"role": "user", "content": "a"}]) == "<a>"
    with pytest.raises(ChatTemplateError, match="did not render within 1 s"):
        chat.render([{"role": "user", "content": "loop"}])
    assert chat.render([{"role": "user", "content": "b"}]) == "<b>"
    copy = pickle.loads(pickle.dumps(chat))  # noqa: S301 - a copy made here; the renderer is not carried
    assert copy.render([{"role": "user", "content": "c"}]) == "<c>"
    chat.close()
    copy.close()


@pytest.mark.extra("text")
@pytest.mark.parametrize("escape", ESCAPES)
def test_no_chat_template_escapes_its_sandbox(tmp_path, escape):
    marker = tmp_path / "MARKER"
    template = escape.replace("{marker}", str(marker))
    with ChatTemplate(template, source=str(tmp_path)) as chat, \
            pytest.raises(ChatTemplateError, match=f"{tmp_path}: the chat template failed: "
                                                   "(SecurityError|UndefinedError)"):
        chat.render(MESSAGES)
    assert not marker.exists()
