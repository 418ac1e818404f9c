"""Model folders for the loader's tests (:mod:`simscore.models`): a tiny random BERT, and hostile
variants of any folder whose code -- an ``evil.py`` named by ``auto_map``, a pickled
``pytorch_model.bin``, a chat template that escapes its sandbox -- would leave a marker file.

The hostile files are written byte by byte (the pickle too: no pickle module is used); whether
their code ran is told by the marker file alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

#: The tiny BERT's words (after the special tokens).
WORDS = ("a", "b", "c", "thai", "food", "please", "what", "kind", "of", "would", "you", "like", "?", ".", ",")


def write_tiny_encoder(folder: Path) -> Path:
    """A two-layer BERT of width 8 with random weights (seeded) and its word-piece tokenizer."""
    import torch
    import transformers

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=64)
    config = transformers.BertConfig(vocab_size=len(WORDS) + 5, hidden_size=8, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=16, max_position_embeddings=64)
    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    try:
        model = transformers.BertModel(config)
    finally:
        torch.random.set_rng_state(state)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _evil(folder: Path, marker: Path, module: str = "evil") -> None:
    (folder / f"{module}.py").write_text(
        f"open({str(marker)!r}, 'w').write('{module}.py ran')\n"
        "from transformers import BertConfig as EvilConfig, BertModel as EvilModel, BertTokenizerFast as EvilTokenizer\n"
    )


def _edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    (path).write_text(json.dumps({key: value for key, value in data.items() if value is not None}))


def remote_code(base: Path, folder: Path, marker: Path) -> Path:
    """``base`` whose config.json has an ``auto_map`` to ``evil.py`` and no ``model_type``."""
    shutil.copytree(base, folder)
    auto = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel", "AutoModelForCausalLM": "evil.EvilModel"}
    _edit(folder / "config.json", model_type=None, auto_map=auto)
    _evil(folder, marker)
    return folder


def remote_type(base: Path, folder: Path, marker: Path) -> Path:
    """``base`` whose config.json has an ``auto_map`` to ``evil.py`` and a model type transformers does not know."""
    shutil.copytree(base, folder)
    _edit(folder / "config.json", model_type="evil-model", auto_map={"AutoConfig": "evil.EvilConfig",
                                                                   "AutoModel": "evil.EvilModel"})
    _evil(folder, marker)
    return folder


def remote_tokenizer(base: Path, folder: Path, marker: Path) -> Path:
    """``base`` whose tokenizer_config.json names a tokenizer class in ``evil_tokenizer.py``."""
    shutil.copytree(base, folder)
    _edit(folder / "tokenizer_config.json", tokenizer_class="EvilTokenizer",
          auto_map={"AutoTokenizer": ["evil_tokenizer.EvilTokenizer", "evil_tokenizer.EvilTokenizer"]})
    _evil(folder, marker, "evil_tokenizer")
    return folder


def pickle_payload(marker: Path) -> bytes:
    """A pickle (protocol 0, written by hand) whose loading runs ``exec`` to write ``marker``."""
    code = f"open({str(marker)!r}, 'w').write('pickle ran')"
    return f"cbuiltins\nexec\n(V{code}\ntR.".encode()


def pickle_only(base: Path, folder: Path, marker: Path) -> Path:
    """``base`` with its safetensors weights replaced by a pickled ``pytorch_model.bin`` that writes ``marker``."""
    shutil.copytree(base, folder)
    for path in folder.glob("*.safetensors"):
        path.unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle_payload(marker))
    return folder


#: Every hostile variant of a model folder, by name.
HOSTILE = {"remote_code": remote_code, "remote_type": remote_type, "remote_tokenizer": remote_tokenizer,
           "pickle_only": pickle_only}

#: What each hostile folder is refused for (regular expressions of the messages).
PROBLEMS = {
    "remote_code": r"config.json: auto_map \(AutoConfig -> evil.EvilConfig, AutoModel -> evil.EvilModel, .*\) names "
                   "the folder's own code, which simscore never runs",
    "remote_type": r"config.json: auto_map \(AutoConfig -> evil.EvilConfig, AutoModel -> evil.EvilModel\) names the "
                   "folder's own code",
    "remote_tokenizer": r"tokenizer_config.json: auto_map \(AutoTokenizer -> \['evil_tokenizer.EvilTokenizer'.*names "
                        "the folder's own code",
    "pickle_only": r"has weights only in pytorch_model.bin \(pickle or other formats\); simscore loads safetensors only",
}

#: Chat templates that try to leave jinja's sandbox and run ``touch {marker}`` (``{marker}`` is replaced by the
#: marker's path): through the globals of jinja's and transformers' functions, the class hierarchy, format
#: strings, the attr filter and a namespace's attributes.
ESCAPES = (
    "{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}",
    "{{ joiner.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ lipsum.__globals__['os'].system('touch {marker}') }}",
    "{{ namespace.__init__.__globals__['os'].system('touch {marker}') }}",
    "{{ raise_exception.__globals__['__builtins__']['open']('{marker}', 'w') }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ messages.__class__.__base__.__subclasses__() }}",
    "{{ (messages|attr('__class__')).__base__.__subclasses__() }}",
    "{{ '{0.__class__.__init__.__globals__}'.format(cycler) }}",
    "{{ dict.__call__.__globals__ }}",
    "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
    "{{ tojson.__globals__['json'] }}{{ messages[0].content.__class__ }}",
)
