"""Measure options: the same options from Python, the command line and the experiment file,
checked before any work and recorded in the signatures."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from simscore.app.cli import main
from simscore.app.experiment.config import ExperimentConfig, load_config
from simscore.errors import ConfigError, MeasureOptionError, TextMeasureError, UnknownMeasureError
from simscore.measures import (
    MEASURES,
    configure_measure,
    measure_options,
    options_from_assignments,
    resolve_measures,
    with_device,
)
from simscore.measures._torch import check_device
from simscore.measures.bertscore import BertScore
from simscore.measures.embedding import LocalSentenceEncoder
from simscore.measures.use import use_encoder
from tests.simscore.measures.corpus import bert_dir

#: options of the model-backed measures: skipped, naming the extra, in an install without it
pytestmark = pytest.mark.extra("text")

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: Constructor arguments that are Python-only on purpose (objects, memory bounds), not options.
API_ONLY = {"encoder", "cache_bytes", "cache_entries"}

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - the text extra is installed where these tests run
    HAS_CUDA = False
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device (none here)")


@pytest.mark.parametrize("name", list(MEASURES))
def test_every_option_is_a_keyword_of_what_builds_the_measure(name):
    cls = MEASURES.classes[name]
    builders = {"use_cos": use_encoder, "use_ang": use_encoder,
                "emb_cos": LocalSentenceEncoder.__init__, "emb_ang": LocalSentenceEncoder.__init__}
    builder = builders.get(name, cls.__init__)
    params = {
        p.name for p in inspect.signature(builder).parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
    }
    assert set(measure_options(name)) == params - API_ONLY
    for option in measure_options(name).values():
        assert option.kind in ("bool", "int", "float", "str", "path", "device", "strings") and option.help


def test_options_reach_the_measure_and_its_signature():
    cer, bleu = resolve_measures(["cer", "bleu4"], options={"cer": {"clip": True}, "bleu4": {"lowercase": True}})
    assert cer.signature().endswith("|clip:yes") and bleu.signature().endswith("|lc:yes")
    assert resolve_measures(["cer"])[0] is MEASURES["cer"]  # no options: the shared default
    bert = configure_measure("bertscore", {"model": bert_dir(), "num_layers": 4, "batch_size": 8})
    assert "|model:model(sha256:" in bert.signature() and "|layer:4|" in bert.signature()
    assert bert.batch_size == 8 and not bert.loaded


def test_use_measures_configured_alike_share_one_encoder():
    cos, ang = resolve_measures(["use_cos", "use_ang"], options={"use_cos": {"threads": 1}, "use_ang": {"threads": 1}})
    assert cos.encoder is ang.encoder and cos.encoder.threads == 1
    assert cos.encoder is not MEASURES["use_cos"].encoder
    with pytest.raises(MeasureOptionError, match="use_cos: threads and max_tokens apply to the default encoder"):
        configure_measure("use_cos", {"threads": 1, "savedmodel": "/nowhere"})


def test_bad_options_are_named_before_any_work():
    with pytest.raises(MeasureOptionError, match=r"bertscore has no option 'layers'; did you mean 'num_layers'\?"):
        resolve_measures(["bertscore"], options={"bertscore": {"layers": 4}})
    with pytest.raises(UnknownMeasureError, match=r"unknown measure 'bertscor'; did you mean 'bertscore'\?"):
        resolve_measures(["bertscore"], options={"bertscor": {"num_layers": 4}})
    with pytest.raises(MeasureOptionError, match=r"options given for bertscore, which is not among the measures"):
        resolve_measures(["action"], options={"bertscore": {"num_layers": 4}})
    with pytest.raises(MeasureOptionError, match="options given for cer, which is given as a configured object"):
        resolve_measures([MEASURES["cer"]], options={"cer": {"clip": True}})
    with pytest.raises(MeasureOptionError, match=r"cer: clip must be True or False, got str 'yes'"):
        resolve_measures(["cer"], options={"cer": {"clip": "yes"}})
    with pytest.raises(MeasureOptionError, match=r"bertscore: num_layers must be between 0 and 6 .* got 9"):
        resolve_measures(["bertscore"], options={"bertscore": {"num_layers": 9}})
    with pytest.raises(MeasureOptionError, match=r"tmr has no option 'clip' \(options: calls, args, args_for\)"):
        resolve_measures(["tmr"], options={"tmr": {"clip": True}})
    with pytest.raises(MeasureOptionError, match=r"tmr: calls must be one of 'strict', 'unordered', 'subset', "
                                                 r"'superset', 'per_message', got 'subsets'; did you mean 'subset'\?"):
        resolve_measures(["tmr"], options={"tmr": {"calls": "subsets"}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bertscore.num_layers=17", {"bertscore": {"num_layers": 17}}),
        ("bertscore.idf=Yes", {"bertscore": {"idf": True}}),
        ("bertscore.model=/m/a=b.c", {"bertscore": {"model": "/m/a=b.c"}}),
        ("bleu4.tokenize=intl", {"bleu4": {"tokenize": "intl"}}),
        ("cer.clip=off", {"cer": {"clip": False}}),
    ],
)
def test_command_line_assignments(text, expected):
    assert options_from_assignments([text]) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bertscore", "expected MEASURE.OPTION=VALUE"),
        ("bertscore.num_layers", "expected MEASURE.OPTION=VALUE"),
        ("bertscore.num_layers=x", "bertscore.num_layers: expected an integer, got 'x'"),
        ("bertscore.idf=maybe", "bertscore.idf: expected true or false, got 'maybe'"),
        ("bertscore.modle=x", "did you mean 'model'"),
        ("bertscore.idf_sentences=/no/such/file.txt", "bertscore.idf_sentences: expected a UTF-8 text file"),
    ],
)
def test_command_line_assignment_errors(text, message):
    with pytest.raises(MeasureOptionError, match=message):
        options_from_assignments([text])
    with pytest.raises(MeasureOptionError, match="given twice"):
        options_from_assignments(["cer.clip=yes", "cer.clip=no"])


def test_strings_option_reads_a_file_one_entry_per_line(tmp_path):
    corpus = tmp_path / "idf.txt"
    corpus.write_text("What kind of food?\n\nGoodbye.\n", encoding="utf-8")
    options = options_from_assignments([f"bertscore.idf_sentences={corpus}", "bertscore.idf=true"])
    measure = resolve_measures(["bertscore"], options=options)[0]
    assert measure.idf_sentences == ("What kind of food?", "Goodbye.")
    assert "|idf:yes(n=2,sha256=" in measure.signature()


def test_device_is_checked_before_any_work():
    assert check_device("cpu") == "cpu" and check_device(" CPU ") == "cpu"
    for bad in ("gpu", "cuda:x", "cuda:-1", "", 0):
        with pytest.raises(TextMeasureError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
            check_device(bad)
    if not HAS_CUDA:
        with pytest.raises(TextMeasureError, match=r"device 'cuda'.*(without CUDA|no CUDA device)"):
            check_device("cuda")
        with pytest.raises(MeasureOptionError, match=r"bertscore: device 'cuda:1'"):
            resolve_measures(["bertscore"], options={"bertscore": {"device": "cuda:1"}})


def test_device_and_dtype_are_in_the_signature():
    assert BertScore().signature().endswith("|device:cpu|dtype:float32")
    assert configure_measure("bertscore", {"dtype": "bfloat16"}).signature().endswith("|dtype:bfloat16")
    with pytest.raises(MeasureOptionError, match="bertscore: dtype 'float16' needs a CUDA device"):
        configure_measure("bertscore", {"dtype": "float16"})
    with pytest.raises(MeasureOptionError, match="bertscore: dtype must be one of 'float32', 'bfloat16', 'float16'"):
        configure_measure("bertscore", {"dtype": "fp32"})


def test_with_device_sets_every_model_backed_measure_unless_given():
    assert with_device(["all"], {}, "cuda") == {"bertscore": {"device": "cuda"}}
    assert with_device(["bertscore"], {"bertscore": {"device": "cpu"}}, "cuda") == {"bertscore": {"device": "cpu"}}
    assert with_device(["all"], {"cer": {"clip": True}}, None) == {"cer": {"clip": True}}


@needs_cuda
def test_cuda_devices_are_accepted_and_named_in_the_signature():
    assert check_device("cuda") == "cuda:0"
    assert f"|device:cuda({torch.cuda.get_device_name(0)})|" in BertScore(device="cuda").signature()
    count = torch.cuda.device_count()
    with pytest.raises(TextMeasureError, match=f"torch sees {count} CUDA device"):
        check_device(f"cuda:{count}")


# ------------------------------------------------------------------------ command line


def test_cli_measure_options_reach_the_signatures(capsys):
    a, b = str(EXAMPLES / "responses_a.jsonl"), str(EXAMPLES / "responses_b.jsonl")
    code = main(["compare", a, b, "--measures", "cer,bleu4", "--measure-option", "cer.clip=yes",
                 "--measure-option", "bleu4.lowercase=yes", "--signatures", "--resamples", "10"])
    out = capsys.readouterr().out
    assert code == 0
    assert "cer       cer|" in out and "|clip:yes" in out and "|lc:yes" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--measure-option", "bertscore.layers=4"], "bertscore has no option 'layers'; did you mean 'num_layers'?"),
        (["--measures", "action", "--measure-option", "bertscore.num_layers=4"],
         "options given for bertscore, which is not among the measures"),
        (["--device", "gpu"], "device must be 'cpu', 'cuda' or 'cuda:N', got 'gpu'"),
    ],
)
def test_cli_rejects_bad_options_before_reading_files(capsys, argv, message):
    # the inputs do not exist: the option is reported first, before any file is read
    code = main(["compare", "/no/such/a.jsonl", "/no/such/b.jsonl", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "no/such" not in err


@pytest.mark.skipif(HAS_CUDA, reason="checks the message of a machine without CUDA")
def test_cli_rejects_a_cuda_device_that_does_not_exist(capsys):
    code = main(["compare", "/no/such/a.jsonl", "/no/such/b.jsonl", "--device", "cuda"])
    err = capsys.readouterr().err
    # checked first, whichever measures (here the default ones), before the files are read
    assert code == 2 and "simscore compare: error: --device 'cuda': " in err and "no/such" not in err


# ------------------------------------------------------------------------ experiment file


def test_experiment_file_measure_tables_round_trip(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(
        f'name = "mine"\n[scoring]\nmeasures = ["action", "bleu4", "bertscore"]\n'
        f'[measures.bertscore]\nmodel = "{bert_dir()}"\nnum_layers = 4\nbatch_size = 16\n'
        '[measures.cer]\nclip = true\n',
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.measure_options == {"bertscore": {"model": bert_dir(), "num_layers": 4, "batch_size": 16},
                                      "cer": {"clip": True}}
    record = config.to_dict()
    assert record["measures"] == config.measure_options
    assert ExperimentConfig.from_dict(record) == config
    assert "measures" not in ExperimentConfig().to_dict()  # the demo's record is unchanged


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[measures.bertscore]\nmodle = "x"\n',
         r"run.toml: \[measures.bertscore\] unknown key 'modle'; did you mean 'model'\?"),
        ("[measures.bertscor]\nnum_layers = 4\n",
         r"run.toml: \[measures\] unknown key 'bertscor'; did you mean 'bertscore'\?"),
        ("[measures]\nbertscore = 4\n", r"run.toml: \[measures.bertscore\] must be a table of options"),
        ("[measures.bertscore]\nnum_layers = 9\n", r"run.toml: bertscore: num_layers must be between 0 and 6"),
        ('[scoring]\nmeasures = ["action"]\n[measures.cer]\nclip = "yes"\n',
         r"run.toml: cer: clip must be True or False, got str 'yes'"),
        ('[scoring]\nmeasures = ["tmr"]\n[measures.cer]\nclip = true\n',
         r"run.toml: options given for cer, which is not among the measures \(tmr\)"),
    ],
)
def test_experiment_file_measure_tables_are_checked(tmp_path, table, message):
    path = tmp_path / "run.toml"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path)

