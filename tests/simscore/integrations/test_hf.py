"""The Hugging Face Trainer / TRL behaviour callback, on a tiny random GPT-2 for a few steps on the CPU."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from contexts import generate_grid  # noqa: E402
from examples.tiny_models import write_tiny_model  # noqa: E402
from policies.lm.generative import Decoding, GenerativePolicy  # noqa: E402
from simscore.integrations.hf import BehaviourCallback  # noqa: E402

TEXT = "Hello , welcome to the Cambridge restaurant system . How may I help you ?"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def contexts():
    grid = list(generate_grid())
    return grid[::216]  # 6 contexts


class _Rows(torch.utils.data.Dataset):
    """The same tokenised turn, labels = inputs (a causal LM learns to say it)."""

    def __init__(self, tokenizer, n=16):
        ids = tokenizer(TEXT)["input_ids"]
        self.row = {"input_ids": torch.tensor(ids), "attention_mask": torch.ones(len(ids), dtype=torch.long),
                    "labels": torch.tensor(ids)}
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return dict(self.row)


class _Reporter(transformers.TrainerCallback):
    """Stands for TensorBoard / W&B: a callback before ours that receives every log in on_log."""

    def __init__(self):
        self.seen = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.seen.append(dict(logs or {}))


def _trainer(folder, tmp_path, steps, callbacks=()):
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path), max_steps=steps, per_device_train_batch_size=4, learning_rate=5e-3, logging_steps=100,
        report_to=[], save_strategy="no", use_cpu=True, seed=0, disable_tqdm=True)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=_Rows(tokenizer), callbacks=list(callbacks))
    return trainer, tokenizer


def test_checks_log_through_the_trainer_and_leave_training_as_it_was(folder, contexts, tmp_path):
    torch.set_num_threads(1)
    reporter = _Reporter()
    trainer, tokenizer = _trainer(folder, tmp_path / "a", 6, [reporter])
    watch = BehaviourCallback(trainer, contexts, check_freq=2, max_new_tokens=6, stop=False, tokenizer=tokenizer,
                              rule="point", reference="initial")
    trainer.add_callback(watch)
    trainer.train()
    history = watch.history()
    assert history["step"].tolist() == [2, 4, 6] and history["previous_step"].tolist() == [0, 2, 4]
    logged = [entry for entry in trainer.state.log_history if "behaviour/bleu4" in entry]
    assert [entry["step"] for entry in logged] == [2, 4, 6]
    for entry, (_, row) in zip(logged, history.iterrows()):
        for column in ("bleu4", "bleu4_ci_low", "bleu4_ci_high", "bleu4_cs_low", "bleu4_chance", "bleu4_reference"):
            assert entry[f"behaviour/{column}"] == row[column]
        assert 0.0 <= entry["behaviour/bleu4_ci_low"] <= entry["behaviour/bleu4"] <= entry["behaviour/bleu4_ci_high"]
        assert entry["behaviour/check_seconds"] > 0
    # the first comparison's previous snapshot is the initial model: the reference gives the same numbers
    assert history.loc[0, "bleu4_reference"] == history.loc[0, "bleu4"]
    # a reporting integration (registered before the callback, as report_to's are) receives the values
    reported = [logs for logs in reporter.seen if "behaviour/bleu4" in logs]
    assert [logs["behaviour/bleu4"] for logs in reported] == history["bleu4"].tolist()
    # a run without the callback trains exactly alike: a check draws no random numbers and restores train mode
    plain, _ = _trainer(folder, tmp_path / "b", 6)
    plain.train()
    for (name, a), (_, b) in zip(trainer.model.named_parameters(), plain.model.named_parameters()):
        assert torch.equal(a, b), name


def test_a_live_model_answers_in_eval_mode_and_gets_its_flags_back(folder, contexts):
    loaded = GenerativePolicy(folder, decoding=Decoding(max_new_tokens=5))
    model = loaded.model.train()
    model.transformer.h[0].eval()  # a part kept in evaluation mode while the rest trains
    flags = [m.training for m in model.modules()]
    live = GenerativePolicy.from_model(model, loaded.tokenizer, decoding=Decoding(max_new_tokens=5))
    states = torch.get_rng_state(), np.random.get_state()[1].copy(), random.getstate()
    answers = live.respond_batch(contexts)
    assert [m.training for m in model.modules()] == flags
    assert torch.equal(torch.get_rng_state(), states[0]) and np.array_equal(np.random.get_state()[1], states[1])
    assert random.getstate() == states[2]
    assert answers == loaded.respond_batch(contexts)  # dropout off: the same greedy answers as the loaded model
    assert live.live and live.model_sha256 is None and live.provenance["model_dir"] is None
    assert str(live.device) == "cpu" and "in memory" in repr(live)


def test_trl_sft_stops_after_patience_stable_checks(folder, contexts, tmp_path):
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from trl import SFTConfig, SFTTrainer

    torch.set_num_threads(1)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    config = SFTConfig(output_dir=str(tmp_path), max_steps=40, per_device_train_batch_size=4, learning_rate=5e-3,
                       logging_steps=100, report_to=[], save_strategy="no", use_cpu=True, seed=0, max_length=64,
                       disable_tqdm=True)
    trainer = SFTTrainer(model=model, args=config, train_dataset=datasets.Dataset.from_dict({"text": [TEXT] * 32}),
                         processing_class=tokenizer)
    watch = BehaviourCallback(trainer, contexts, check_freq=2, max_new_tokens=6, threshold=0.9, patience=2,
                              rule="point")
    trainer.add_callback(watch)
    trainer.train()
    assert watch.converged and watch.stopped_at == trainer.state.global_step < 40
    assert watch.stopped_at % 2 == 0
    history = watch.history()
    assert history["stable"].tolist()[-2:] == [True, True] and (history["bleu4"].iloc[-2:] >= 0.9).all()
    last = [entry for entry in trainer.state.log_history if "behaviour/bleu4" in entry][-1]
    assert last["step"] == watch.stopped_at and last["behaviour/stable_checks"] == 2.0
    assert watch.logged[-1]["step"] == watch.stopped_at


def test_arguments_are_checked(folder, contexts, tmp_path):
    trainer, tokenizer = _trainer(folder, tmp_path / "a", 2)
    with pytest.raises(TypeError, match="trainer must be a transformers Trainer"):
        BehaviourCallback(object(), contexts)
    with pytest.raises(ValueError, match="needs at least one context"):
        BehaviourCallback(trainer, [])
    with pytest.raises(TypeError, match="reference must be 'initial'"):
        BehaviourCallback(trainer, contexts, reference="first")
    with pytest.raises(ValueError, match="check_freq"):
        BehaviourCallback(trainer, contexts, check_freq=0)
    with pytest.raises(KeyError, match="did you mean 'bleu4'"):
        BehaviourCallback(trainer, contexts, ("bleu5",))
    # each failed, or logged NaN, only once training ran
    with pytest.raises(ValueError, match="chance_seed must be >= 0, got -5"):
        BehaviourCallback(trainer, contexts, chance_seed=-5)
    for prefix in ("", "/", " "):
        with pytest.raises(ValueError, match="log_prefix must name the logged values"):
            BehaviourCallback(trainer, contexts, log_prefix=prefix)
    with pytest.raises(ValueError, match=r"^tmr, cmr compare the responses' actions, and with act_output=False the "
                                         r"model answers in text: pass act_output=True, or a text measure"):
        BehaviourCallback(trainer, contexts, ("tmr", "bleu4", "cmr"))
    BehaviourCallback(trainer, contexts, ("tmr",), act_output=True)
    other, _ = _trainer(folder, tmp_path / "b", 2)
    other.add_callback(BehaviourCallback(trainer, contexts, tokenizer=tokenizer))
    with pytest.raises(ValueError, match="built for another trainer"):
        other.train()
