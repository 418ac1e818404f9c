"""The record of an experiment run: what its tables were made with (application layer).

:class:`RunRecord` is saved beside the tables, as the ``meta`` object of ``tables.json`` and of
every ``<table>.json`` (:func:`simscore.analysis.tables_io.save_tables`), and read back by
:meth:`RunRecord.from_meta`; the report (:mod:`simscore.app.report.document`) is built from the tables
and this record alone. Every key is optional, and thresholds this version does not know are kept by
name (:attr:`RunRecord.ignored_thresholds`); the configuration is read back as an
:class:`~simscore.app.experiment.config.ExperimentConfig`, checked as strictly as ``simscore run``
checks a file, and one this version cannot read is left out with the reason
(:attr:`RunRecord.config_problem`), so that the tables still make their report.

The saved object, in this key order (every key optional)::

    {"title": str, "signatures": {measure: signature}, "config": {its TOML tables},
     "versions": {package: version}, "seeds": {what: seed}, "bootstrap": {"n_resamples",
     "confidence", "seed"}, "findings": {threshold: value}, "date": "YYYY-MM-DD",
     "command": str or null}

>>> record = RunRecord.from_meta({"title": "t", "bootstrap": {"n_resamples": 200}, "command": None})
>>> record.bootstrap, record.started_from_python
(Bootstrap(n_resamples=200, confidence=0.95, seed=0), True)
>>> record.to_meta()
{'title': 't', 'bootstrap': {'n_resamples': 200, 'confidence': 0.95, 'seed': 0}, 'command': None}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.sections import Thresholds
from simscore.errors import ConfigError
from simscore.stats import Bootstrap

__all__ = ["RunRecord"]

_KEYS = ("title", "signatures", "config", "versions", "seeds", "bootstrap", "findings", "date", "command")


def _mapping(value: Any, key: str, source: str, kind: type | None = None) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{source}: {key!r} must be an object, got {value!r:.80}")
    if kind is not None:
        wrong = [k for k, v in value.items() if not isinstance(v, kind)]
        if wrong:
            raise ValueError(f"{source}: {key}[{wrong[0]!r}] must be a {kind.__name__}, got {value[wrong[0]]!r:.80}")
    return dict(value)


def _config(saved: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` read as an :class:`ExperimentConfig`, or ``config_problem``: why this version cannot."""
    try:
        return {"config": ExperimentConfig.from_dict(saved, source="the saved configuration")}
    except ConfigError as exc:
        return {"config_problem": str(exc)}


def _text(value: Any, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{source}: {key!r} must be a string, got {value!r:.80}")
    return value


@dataclass(frozen=True)
class RunRecord:
    """What a run's tables were made with; every field optional (None / empty: not recorded).

    Attributes
    ----------
    title : str or None
        The report's title.
    signatures : dict
        Measure name → signature (everything that determines its numbers).
    config : ExperimentConfig or None
        The experiment's configuration (saved as its TOML tables, :meth:`ExperimentConfig.to_dict
        <simscore.app.experiment.config.ExperimentConfig.to_dict>`).
    versions : dict
        Package → version (:func:`simscore.analysis.tables_io.collect_versions`).
    seeds : dict or None
        Every seed of the run by what it seeds (training, evaluation, collection, random
        policy, bootstrap).
    bootstrap : Bootstrap or None
        Settings of the intervals over pairs in the tables and figures (None: the defaults).
    findings : Thresholds or None
        Thresholds of the findings (None: the defaults).
    ignored_thresholds : tuple of str
        Threshold names in the saved record that this simscore does not know (listed, unused).
    config_problem : str or None
        Why the saved configuration was left out (``config`` None): it is not one that this
        version reads (a key it does not know, a value out of range).
    date : str or None
        ISO date the run was scored (written once, so a rebuilt report says the same).
    command : str or None
        The command line that started the run; None when started from Python or not recorded
        (:attr:`command_recorded` tells which).
    command_recorded : bool
        Whether the record says how the run was started.
    """

    title: str | None = None
    signatures: Mapping[str, str] = field(default_factory=dict)
    config: ExperimentConfig | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    seeds: Mapping[str, Any] | None = None
    bootstrap: Bootstrap | None = None
    findings: Thresholds | None = None
    ignored_thresholds: tuple[str, ...] = ()
    config_problem: str | None = None
    date: str | None = None
    command: str | None = None
    command_recorded: bool = False

    @property
    def started_from_python(self) -> bool:
        """The run was started from Python (the record says so, with no command line)."""
        return self.command_recorded and self.command is None

    @property
    def bootstrap_settings(self) -> Bootstrap:
        """:attr:`bootstrap`, or the defaults when not recorded."""
        return self.bootstrap if self.bootstrap is not None else Bootstrap()

    @property
    def thresholds(self) -> Thresholds:
        """:attr:`findings`, or the default thresholds when not recorded."""
        return self.findings if self.findings is not None else Thresholds()

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None, *, source: str = "meta") -> RunRecord:
        """Read a saved record (``meta`` of ``tables.json``); keys it does not know are errors.

        Raises
        ------
        ValueError
            A value of the wrong type, an invalid bootstrap setting or threshold, or an unknown
            key (naming ``source`` and the key).
        """
        if meta is None:
            return cls()
        data = _mapping(meta, "meta", source)
        unknown = [k for k in data if k not in _KEYS]
        if unknown:
            raise ValueError(f"{source}: unknown key {unknown[0]!r} in the run record (known: {', '.join(_KEYS)})")
        kwargs: dict[str, Any] = {}
        if data.get("title") is not None:
            kwargs["title"] = _text(data["title"], "title", source)
        for key in ("signatures", "versions"):
            if data.get(key) is not None:
                kwargs[key] = _mapping(data[key], key, source, str)
        if data.get("config") is not None:
            kwargs.update(_config(_mapping(data["config"], "config", source)))
        if data.get("seeds") is not None:
            kwargs["seeds"] = _mapping(data["seeds"], "seeds", source)
        if data.get("bootstrap") is not None:
            kwargs["bootstrap"] = Bootstrap.from_mapping(data["bootstrap"], source=f"{source}: bootstrap")
        if data.get("findings") is not None:
            saved = _mapping(data["findings"], "findings", source)
            known = {f.name for f in dataclasses.fields(Thresholds)}
            try:
                kwargs["findings"] = Thresholds(**{k: v for k, v in saved.items() if k in known})
            except ValueError as exc:
                raise ValueError(f"{source}: findings: {exc}") from None
            kwargs["ignored_thresholds"] = tuple(sorted(k for k in saved if k not in known))
        if data.get("date") is not None:
            kwargs["date"] = _text(data["date"], "date", source)
        if "command" in data:
            kwargs["command_recorded"] = True
            if data["command"] is not None:
                kwargs["command"] = _text(data["command"], "command", source)
        return cls(**kwargs)

    def to_meta(self) -> dict[str, Any]:
        """The record as saved (JSON data; keys in the order above, unrecorded ones left out)."""
        values: dict[str, Any] = {
            "title": self.title,
            "signatures": dict(self.signatures) or None,
            "config": self.config.to_dict() if self.config is not None else None,
            "versions": dict(self.versions) or None,
            "seeds": dict(self.seeds) if self.seeds is not None else None,
            "bootstrap": self.bootstrap.to_dict() if self.bootstrap is not None else None,
            "findings": self.findings.to_dict() if self.findings is not None else None,
            "date": self.date,
        }
        meta = {key: value for key, value in values.items() if value is not None}
        if self.command_recorded:
            meta["command"] = self.command
        return meta
