"""The output contract, over every command and every public writer (found, not listed by hand).

The contract (:func:`simscore.io.output.prepare_output`, :mod:`simscore.app.cli.args`): an output is
never an input, however it is spelt (``..``, a symbolic link to the folder, a hard link); an
existing file is replaced only with ``--force`` / ``overwrite=True``; the location is checked
before any work; nothing but a regular file is renamed over (a FIFO and a device are written
into, a socket is refused, by every command and every writer). The commands are found by walking ``simscore``'s argument parser, the writers
by walking the ``__all__`` of every module of simscore, contexts and policies: a new command
with an ``--out`` or a new public function that takes a path fails here until it is added to a
table below, with an invocation the test can run.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import contexts
import policies
import simscore
from simscore.app.cli import args as cli_args
from simscore.app.cli import build_parser, main
from simscore.errors import MissingDependencyError, OutputExistsError

# ----------------------------------------------------------------------------- commands

#: Every command with a file output: its arguments, with {IN0}, {IN1}, ... for the files it reads
#: and {OUT} for the output.
FILE_COMMANDS: dict[str, list[str]] = {
    "compare": ["{IN0}", "{IN1}", "--contexts", "{IN2}", "--measures", "tmr", "--out", "{OUT}", "--format", "json"],
    "contexts gen": ["--ontology", "{IN0}", "--venues", "{IN1}", "--out", "{OUT}"],
    "contexts collect": ["{IN0}", "{IN1}", "--out", "{OUT}"],
    "contexts export": ["--format", "convlab3", "{IN0}", "--out", "{OUT}"],
    "contexts transcripts": ["{IN0}", "--out-contexts", "{OUT}", "--out-responses", "{OUT}"],
    "contexts flows build": ["{IN0}", "--out", "{OUT}"],
    "contexts flows label": ["{IN0}", "--graph", "{IN1}", "--dialogues", "{IN2}", "--out", "{OUT}"],
    "contexts flows sample": ["{IN0}", "--out", "{OUT}"],
    "contexts flows plot": ["--graph", "{IN0}", "--test", "{IN1}", "--out", "{OUT}"],
    "view": ["{IN0}", "--a", "{IN1}", "--b", "{IN2}", "--contexts", "{IN3}", "--out", "{OUT}"],
    "respond": ["handcrafted", "{IN0}", "--out", "{OUT}"],
    "gate": ["--logs", "{IN0}", "{IN1}", "--out", "{OUT}"],
}
#: Every command with a folder output (resumable folders, or fixed file names inside).
FOLDER_COMMANDS: dict[str, list[str]] = {
    "demo": ["--out", "{OUT}"],
    "run": ["{IN0}", "--out", "{OUT}"],
    "train": ["--reward", "ts", "--seed", "0", "--out", "{OUT}"],
    "diagnose": ["--contexts", "{IN0}", "--responses", "x={IN1}", "--out", "{OUT}"],
    "map": ["{IN0}", "{IN1}", "{IN2}", "--out", "{OUT}"],
}


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(prefix), parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*prefix, name))


LEAVES = dict(_leaves(build_parser()))
OUTPUT_TYPES = {cli_args.output_file: "file", cli_args.output_folder: "folder"}


def _outputs(parser: argparse.ArgumentParser) -> dict[str, str]:
    return {a.dest: OUTPUT_TYPES[a.type] for a in parser._actions if a.type in OUTPUT_TYPES}


def test_every_out_option_is_declared_and_every_command_with_outputs_is_tested() -> None:
    for name, parser in LEAVES.items():
        undeclared = [a.dest for a in parser._actions if a.dest in ("out", "output", "out_dir") and a.type not in OUTPUT_TYPES]
        assert not undeclared, f"simscore {name}: declare {undeclared} with cli_args.output_file or output_folder"
        outputs = _outputs(parser)
        if not outputs:
            continue
        assert getattr(parser.get_default("func"), "checks_outputs", False), (
            f"simscore {name}: decorate its function with cli_args.checks_outputs"
        )
        table = FILE_COMMANDS if "file" in outputs.values() else FOLDER_COMMANDS
        assert name in table, f"simscore {name} writes {outputs}: add an invocation to this test's tables"
        if "file" in outputs.values():
            assert any(a.dest == "force" for a in parser._actions), f"simscore {name}: a file output needs --force"
    assert set(FILE_COMMANDS) | set(FOLDER_COMMANDS) <= set(LEAVES)


def _argv(name: str, template: list[str], inputs: list[Path], out: Path) -> list[str]:
    values = {f"{{IN{k}}}": str(path) for k, path in enumerate(inputs)} | {"{OUT}": str(out)}
    argv = [part for part in template]
    for key, value in values.items():
        argv = [part.replace(key, value) for part in argv]
    return [*name.split(), *argv]


def _inputs(folder: Path, template: list[str], *, create: bool) -> list[Path]:
    count = sum("{IN" in part for part in template)
    paths = [folder / f"input{k}.jsonl" for k in range(count)]
    if create:
        for path in paths:
            path.write_text(f"original {path.name}\n", encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", sorted(FILE_COMMANDS))
def test_an_existing_output_is_refused_before_any_input_is_read(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = FILE_COMMANDS[name]
    inputs = _inputs(tmp_path, template, create=False)  # missing: reading one would fail with another message
    out = tmp_path / "existing.out"
    out.write_text("keep me\n", encoding="utf-8")
    assert main(_argv(name, template, inputs, out)) == 2
    assert f"{out} exists; use --force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize("name", sorted(FILE_COMMANDS))
@pytest.mark.parametrize("spelling", ["plain", "dotdot", "linked-folder", "hard-link"])
def test_no_spelling_of_an_input_is_written_even_with_force(
    name: str, spelling: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = FILE_COMMANDS[name]
    data = tmp_path / "data"
    data.mkdir()
    inputs = _inputs(data, template, create=True)
    (tmp_path / "link").symlink_to(data, target_is_directory=True)
    for k, given in enumerate(inputs):
        out = {
            "plain": given,
            "dotdot": data / "sub" / ".." / given.name,
            "linked-folder": tmp_path / "link" / given.name,
            "hard-link": tmp_path / f"hard{k}.jsonl",
        }[spelling]
        if spelling == "hard-link":
            os.link(given, out)
        assert main([*_argv(name, template, inputs, out), "--force"]) == 2, (name, spelling, k)
        assert "is also an input: refusing to write over it" in capsys.readouterr().err
    assert [p.read_text(encoding="utf-8") for p in inputs] == [f"original {p.name}\n" for p in inputs]


@pytest.mark.parametrize("name", sorted(FOLDER_COMMANDS))
def test_a_folder_output_is_never_a_file_or_an_input(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = FOLDER_COMMANDS[name]
    inputs = _inputs(tmp_path, template, create=True)
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me\n", encoding="utf-8")
    assert main(_argv(name, template, inputs, a_file)) == 2
    assert f"{a_file} is a file, expected a folder" in capsys.readouterr().err
    for given in inputs:
        assert main(_argv(name, template, inputs, given)) == 2
        assert "expected a folder" in capsys.readouterr().err or "is also an input" in capsys.readouterr().err
    assert a_file.read_text(encoding="utf-8") == "keep me\n"
    assert [p.read_text(encoding="utf-8") for p in inputs] == [f"original {p.name}\n" for p in inputs]


def test_files_a_command_writes_into_its_folder_follow_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "diag"
    out.mkdir()
    (out / "diagnose.md").write_text("keep me\n", encoding="utf-8")
    given = tmp_path / "missing-contexts.jsonl"
    assert main(["diagnose", "--out", str(out), "--contexts", str(given)]) == 2
    assert f"{out / 'diagnose.md'} exists; use --force" in capsys.readouterr().err
    assert main(["diagnose", "--out", str(out), "--responses", f"x={out / 'diagnose.md'}", "--force"]) == 2
    assert "diagnose.md is also an input" in capsys.readouterr().err
    assert (out / "diagnose.md").read_text(encoding="utf-8") == "keep me\n"


# ----------------------------------------------------------------------------- writers

#: Parameters that name a file or folder a function writes or reads.
PATH_PARAMETERS = {"path", "json_path", "out", "path_stem", "log_path", "out_dir", "folder", "directory", "output", "run_dir", "target"}
#: Public functions that only read the path they take.
READERS = {
    "simscore.app.experiment.config.load_config", "simscore.app.inspect.explain.load_runs", "simscore.app.inspect.view.read_comparison",
    "simscore.io.reading.read_jsonl", "simscore.io.reading.read_text", "simscore.io.reading.read_bytes", "simscore.io.reading.read_json",
    "simscore.io.reading.parse_json", "simscore.io.reading.parse_toml", "simscore.io.reading.read_lines", "simscore.io.reading.read_csv_rows",
    "simscore.io.reading.open_input", "simscore.responses.Responses.read_jsonl", "simscore.outcomes.gate.read_outcome_log",
    "contexts.transcripts.read_chat_transcripts", "contexts.transcripts.read_tau2_results",
    "contexts.transcripts.read_transcripts", "contexts.transcripts.log_hint",
    "simscore.io.tau2.read_tau2", "simscore.io.tau2.tau2_results", "simscore.io.tau2.is_tau2_folder",
    "simscore.responses_csv.read_responses", "simscore.responses_csv.read_responses_csv",
    "simscore.responses_csv.response_file_format", "simscore.analysis.tables_io.load_tables",
    "simscore.responses_csv.read_sampled_responses", "simscore.samples.SampledResponses.read_jsonl",
    "simscore.responses.read_record",  # a record's line of the file it names, in messages
    "contexts.collect.import_convlab", "contexts.collect.read_convlab", "contexts.context.ContextSet.read_jsonl",
    "contexts.dialogue_log.read_dialogue_log", "contexts.domain.load_ontology", "contexts.domain.load_venues",
    "contexts.flows.dialogues.read_flow_dialogues", "contexts.flows.graph.FlowGraph.load", "contexts.pydial.read_pydial_beliefs",
    "contexts.pydial.import_pydial", "policies.adapters.LoggedPolicy.from_file", "policies.convlab.read_convlab_states",
    "policies.gpsarsa.evaluation.read_evaluation", "policies.gpsarsa.learner.GPSarsa.load",
    "policies.gpsarsa.checkpoint.read_checkpoint_json", "policies.gpsarsa.checkpoint.read_checkpoint", "policies.gpsarsa.policy.GPSarsaPolicy.load",
    "policies.gpsarsa.training.list_checkpoints", "policies.gpsarsa.training.load_checkpoint",
    "policies.gpsarsa.training.trained_with",
    "policies.lm.generative.model_folder_sha256",
    # model folders are only ever read (simscore.models: checked, then loaded by transformers)
    "simscore.models.folders.existing_folder", "simscore.models.folders.open_model_folder", "simscore.models.folders.read_model_json",
    # the experiment folder's own checks and scoring read the pieces it wrote
    "simscore.app.experiment.analyses.read_responses", "simscore.app.experiment.analyses.score_experiment",
    "simscore.app.experiment.provenance.check_collected", "simscore.app.experiment.provenance.check_folder_settings",
    "simscore.app.experiment.provenance.check_log", "simscore.app.experiment.reference.reference_policies",
    "simscore.app.experiment.provenance.check_piece", "simscore.app.experiment.flow_strata.held_out_comparisons",
    "simscore.app.experiment.flow_strata.flow_strata_tables", "simscore.app.experiment.provenance.upstream_digest",
    "simscore.app.experiment.consequences.consequences_table", "simscore.app.experiment.consequences.input_files",
    "simscore.app.experiment.maps.handcrafted_responses", "simscore.app.experiment.flow_strata.held_out_responses",
    "policies.gpsarsa.training.is_trained",
}
#: Public functions that take a path but touch no file.
PATHS_ONLY = {"simscore.app.experiment.folder.ExperimentFolder.link", "simscore.io.reading.decode_line"}
#: The write mechanism behind the contract (callers check with prepare_output first) and the check itself.
MECHANISM = {"simscore.plots.output.png_target", "simscore.io.output.atomic_open", "simscore.io.output.atomic_write_text", "simscore.io.reading.write_jsonl",
             "simscore.io.output.prepare_output"}
#: Writers of a folder they own and resume or regenerate (an experiment, a training run, its figures).
FOLDER_WRITERS = {
    "simscore.app.runner.run_experiment", "simscore.app.inspect.explain.explain", "simscore.app.report.document.write_report",
    "simscore.app.report.document.draw_figures",
    "simscore.app.report.document.rebuild_report", "simscore.analysis.tables_io.save_tables", "simscore.plots.experiment.make_figures",
    "policies.gpsarsa.training.train",
    "simscore.app.experiment.provenance.stale_random_responses", "simscore.app.experiment.held_out.build_held_out",
    "simscore.app.experiment.provenance.remaking",
}


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    for package in (simscore, contexts, policies):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            module = importlib.import_module(info.name)
            for name in getattr(module, "__all__", ()):
                try:
                    obj = getattr(module, name, None)
                except MissingDependencyError:
                    continue  # built on first access from an extra that is not installed (sb3's callback)
                if getattr(obj, "__module__", None) != module.__name__:
                    continue  # re-exported: found in its own module
                if inspect.isfunction(obj):
                    yield f"{module.__name__}.{name}", obj
                elif inspect.isclass(obj):
                    for method_name, member in vars(obj).items():
                        function = getattr(member, "__func__", member)
                        if not method_name.startswith("_") and inspect.isfunction(function):
                            yield f"{module.__name__}.{name}.{method_name}", function


def _takes_a_path(function: Callable[..., Any]) -> bool:
    return bool(PATH_PARAMETERS & set(inspect.signature(function).parameters))


FOUND = {name: function for name, function in _public_callables() if _takes_a_path(function)}


def _writers() -> dict[str, Callable[[Path, bool], Any]]:
    """Writer name -> write(path, overwrite) with small valid data (the path may get a suffix)."""
    from contexts.dialogue_log import read_dialogue_log, write_dialogue_log
    from contexts.flows import FlowGraph
    from contexts.flows.dialogues import read_flow_dialogues
    from contexts.flows.plot import plot_flows
    from contexts.generate import GridSpec, generate_grid
    from policies.convlab import write_convlab_states
    from policies.gpsarsa.checkpoint import write_checkpoint
    from policies.gpsarsa.evaluation import write_evaluation
    from policies.gpsarsa.learner import GPSarsa
    from policies.gpsarsa.policy import GPSarsaPolicy
    from policies.gpsarsa.values import GPSarsaConfig
    from policies.handcrafted import HandcraftedPolicy
    from policies.sim.simulation import run_dialogues
    from simscore import Act, Response, Responses, compare
    from simscore.analysis.behaviour_map import behaviour_map
    from simscore.app.inspect.diagnose import diagnose, write_diagnose
    from simscore.app.inspect.view import write_view
    from simscore.plots.behaviour_map import plot_map_page
    from simscore.responses_csv import write_responses_csv
    from simscore.samples import SampledResponses
    from simscore.stats import Bootstrap

    a = Responses({"c1": Response(Act.parse("hello()"), "Hi."), "c2": Response(Act.parse("bye()"), "Bye.")}, policy="a")
    b = Responses({"c1": Response(Act.parse("bye()"), "Bye."), "c2": Response(Act.parse("bye()"), "Bye.")}, policy="b")
    grid = generate_grid(GridSpec(levels=(0.0, 1.0)))
    empty = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2))

    def dialogues(path: Path) -> Any:
        log = path.parent / "dialogues-source.jsonl"
        if not log.exists():
            run_dialogues(HandcraftedPolicy(), 2, seed=0, log_path=log)
        return log

    def stem(path: Path) -> Path:
        return path.with_suffix("")

    return {
        "simscore.responses.Responses.to_jsonl": lambda p, o: a.to_jsonl(p, overwrite=o),
        "simscore.samples.SampledResponses.to_jsonl": lambda p, o: SampledResponses.from_samples([a, a]).to_jsonl(
            p, overwrite=o),
        "simscore.responses_csv.write_responses_csv": lambda p, o: write_responses_csv(p, a, overwrite=o),
        "simscore.comparison.result.Comparison.save": lambda p, o: compare(a, b, "tmr").save(p.with_suffix(".json"), overwrite=o),
        "simscore.app.inspect.view.write_view": lambda p, o: write_view(compare(a, b, "tmr"), a, b, p, overwrite=o),
        "simscore.plots.behaviour_map.plot_map_page": lambda p, o: plot_map_page(
            behaviour_map({"a": a, "b": b, "a2": a}, "tmr", bootstrap=Bootstrap(n_resamples=5)), "tmr",
            p.with_suffix(".png"), overwrite=o),
        "simscore.app.inspect.diagnose.write_diagnose": lambda p, o: write_diagnose(
            diagnose({"a": a}, {"b": b}, "tmr", bootstrap=Bootstrap(n_resamples=10)), p.parent, overwrite=o),
        "contexts.context.ContextSet.to_jsonl": lambda p, o: grid.to_jsonl(p, overwrite=o),
        "contexts.dialogue_log.write_dialogue_log": lambda p, o: write_dialogue_log(
            p, read_dialogue_log(dialogues(p))[1], domain="restaurants", overwrite=o),
        "contexts.flows.graph.FlowGraph.save": lambda p, o: FlowGraph.from_dialogues(
            read_flow_dialogues(dialogues(p))).save(p, overwrite=o),
        "contexts.flows.plot.plot_flows": lambda p, o: plot_flows(
            FlowGraph.from_dialogues(read_flow_dialogues(dialogues(p))), p.with_suffix(".png"), overwrite=o),
        "policies.convlab.write_convlab_states": lambda p, o: write_convlab_states(grid, p, overwrite=o),
        "policies.gpsarsa.evaluation.write_evaluation": lambda p, o: write_evaluation(p, [], overwrite=o),
        "policies.gpsarsa.learner.GPSarsa.save": lambda p, o: GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2)).save(
            stem(p), overwrite=o),
        "policies.gpsarsa.policy.GPSarsaPolicy.save": lambda p, o: GPSarsaPolicy(reward="ts", seed=0).save(
            stem(p), overwrite=o),
        "policies.gpsarsa.checkpoint.write_checkpoint": lambda p, o: write_checkpoint(
            stem(p), empty.config, {"dictionary_size": 0, "per_action": [0, 0], "episodes": 0, "transitions": 0},
            empty.arrays(), overwrite=o),
        "policies.sim.simulation.run_dialogues": lambda p, o: run_dialogues(
            HandcraftedPolicy(), 1, seed=0, log_path=p, overwrite=o),
        **{f"simscore.plots.experiment.{name}": _figure_writer(name) for name in FIGURE_WRITERS},
        "simscore.plots.output.save_figure": _figure_writer("save_figure"),
    }


#: The figure writers of simscore.plots, each drawn from a small synthetic table.
FIGURE_WRITERS = ("plot_convergence", "plot_seeds", "plot_per_turn", "plot_reward_models", "plot_correlation",
                  "plot_performance", "plot_chance", "plot_behaviour")


def _figure_writer(name: str) -> Callable[[Path, bool], Any]:
    def write(path: Path, overwrite: bool) -> Any:
        from simscore import analysis, plots
        from tests.simscore.synthetic import synthetic_tables

        target = path.with_suffix(".png")
        tables = synthetic_tables()
        if name == "save_figure":
            return plots.save_figure(plots.draw_performance(tables["performance"]), target, overwrite=overwrite)
        if name == "plot_behaviour":
            history = pd.DataFrame({"step": [1, 2, 3], "tmr": [0.5, 0.9, 1.0], "tmr_ci_low": [0.4, 0.8, 1.0],
                                    "tmr_ci_high": [0.6, 1.0, 1.0]})
            return plots.plot_behaviour(history, target, overwrite=overwrite)
        if name == "plot_chance":
            contrast = analysis.contrast(chance=tables["chance"], convergence=tables["convergence"],
                                         bootstrap=analysis.Bootstrap(n_resamples=20))
            return plots.plot_chance(contrast, target, overwrite=overwrite)
        table = tables[name.removeprefix("plot_")]
        extra = {"bootstrap": analysis.Bootstrap(n_resamples=20)} if name in ("plot_seeds", "plot_reward_models") else {}
        return getattr(plots, name)(table, target, overwrite=overwrite, **extra)

    return write


WRITERS = _writers()
#: Where each writer's output lands when given ``path`` (the file the test makes exist first).
LANDS = {
    **{f"simscore.plots.experiment.{name}": lambda p: p.with_suffix(".png") for name in FIGURE_WRITERS},
    "simscore.comparison.result.Comparison.save": lambda p: p.with_suffix(".json"),
    "simscore.plots.behaviour_map.plot_map_page": lambda p: p.with_suffix(".png"),
    "simscore.plots.output.save_figure": lambda p: p.with_suffix(".png"),
    "simscore.app.inspect.diagnose.write_diagnose": lambda p: p.parent / "diagnose.md",
    "contexts.flows.plot.plot_flows": lambda p: p.with_suffix(".png"),
    "policies.gpsarsa.learner.GPSarsa.save": lambda p: p.with_suffix(".npz"),
    "policies.gpsarsa.checkpoint.write_checkpoint": lambda p: p.with_suffix(".npz"),
    "policies.gpsarsa.policy.GPSarsaPolicy.save": lambda p: p.with_suffix(".json"),
}


def test_every_public_function_that_takes_a_path_is_classified() -> None:
    classified = READERS | PATHS_ONLY | MECHANISM | FOLDER_WRITERS | set(WRITERS)
    unknown = sorted(set(FOUND) - classified)
    assert not unknown, f"new public functions that take a path: {unknown}; add each to a table of this test"
    gone = sorted(classified - set(FOUND))
    assert not gone, f"no longer found (renamed?): {gone}"


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_writer_replaces_an_existing_file_only_when_asked(name: str, tmp_path: Path) -> None:
    parameter = inspect.signature(FOUND[name]).parameters.get("overwrite")
    assert parameter is not None and parameter.default is False and parameter.kind is inspect.Parameter.KEYWORD_ONLY
    path = tmp_path / "out" / "result.jsonl"
    path.parent.mkdir()
    target = LANDS.get(name, lambda p: p)(path)
    target.write_bytes(b"keep me\n")
    with pytest.raises(OutputExistsError, match="exists; use --force"):
        WRITERS[name](path, False)
    assert target.read_bytes() == b"keep me\n"
    WRITERS[name](path, True)
    assert target.read_bytes() != b"keep me\n"
    leftovers = [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, leftovers


# ----------------------------------------------------------------------------- what is not a regular file


@pytest.mark.parametrize("name", sorted(FILE_COMMANDS))
def test_every_command_refuses_a_socket_before_any_input_is_read(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = FILE_COMMANDS[name]
    inputs = _inputs(tmp_path, template, create=False)  # missing: reading one would fail with another message
    out = tmp_path / "out.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(out))
    try:
        assert main([*_argv(name, template, inputs, out), "--force"]) == 2
        assert f"{out} is a socket: refusing to write into it" in capsys.readouterr().err
        assert stat.S_ISSOCK(os.lstat(out).st_mode)
    finally:
        server.close()


def _landing(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """(the path given to writer ``name``, where its output lands) in a fresh folder."""
    path = tmp_path / "out" / "result.jsonl"
    path.parent.mkdir()
    return path, LANDS.get(name, lambda p: p)(path)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_writer_writes_into_a_fifo_and_refuses_a_socket(name: str, tmp_path: Path) -> None:
    from tests.simscore.io.test_output import FifoReader

    path, target = _landing(name, tmp_path)
    reference = tmp_path / "reference" / "result.jsonl"
    reference.parent.mkdir()
    WRITERS[name](reference, False)
    expected = LANDS.get(name, lambda p: p)(reference).read_bytes()
    fifo = FifoReader(target)
    WRITERS[name](path, False)  # a FIFO holds nothing to replace: no overwrite needed
    written = fifo.result()
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if target.suffix != ".png":  # a figure's bytes carry no time, but its drawing is not asserted here
        assert written == expected
    else:
        assert written.startswith(b"\x89PNG")
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
    target.unlink()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(target))
    try:
        with pytest.raises(OutputExistsError, match="is a socket: refusing to write into it"):
            WRITERS[name](path, True)
        assert stat.S_ISSOCK(os.lstat(target).st_mode)
    finally:
        server.close()


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_writer_writes_into_a_device_with_overwrite_and_leaves_it(name: str, tmp_path: Path) -> None:
    from tests.simscore.io.test_output import _device

    path, target = _landing(name, tmp_path)
    _device(target, 1, 3)  # a /dev/null of this test's own
    WRITERS[name](path, True)
    info = os.lstat(target)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
