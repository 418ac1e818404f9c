"""The published numbers of Ultes & Maier (SIGDIAL 2020), shipped with simscore (application layer).

The report (:mod:`simscore.app.report.document`) and the findings (:mod:`simscore.app.report.findings`) set an
experiment's numbers beside the paper's. The paper's Tables 1–4 ship as CSV files inside the
package (``simscore/app/data/paper/``, read with :mod:`importlib.resources`); one function per
table returns them as typed DataFrames, and :func:`facts` holds what the paper states in its
text without a table (shipped as data too: ``facts.toml``), with numbers derived from the
tables. The report and the findings take every number of the paper from here, none from
prose. Measure columns carry simscore's names (``use_ang`` is the paper's "ang sim" /
"USE (avg)", ``use_cos`` its "cos sim" / "USE (cos)").

Column names follow simscore's tables: the files' ``dialogues`` (training dialogues, the
paper's checkpoint label) is read as ``checkpoint``, and Table 1's ``task_success_rate``,
``average_iq`` and ``average_length`` as ``success_rate``, ``avg_iq`` and ``avg_length``
(the columns of the ``performance`` table). simscore's experiment labels its checkpoints by
dialogues trained as well, so the two match on ``checkpoint``.

The paper's tables refer to the collected contexts C_col (our context set :data:`COLLECTED_SET`);
the C_gen half of its Table 4 did not survive in our copy, so there are no C_gen numbers.

>>> performance().query("reward == 'iq' and checkpoint == 40000")[["success_rate", "avg_iq"]]
    success_rate  avg_iq
17          0.94    3.77
>>> facts().best_seed_tmr
{'ts': 0.896, 'iq': 0.68}
"""

from __future__ import annotations

import functools
import io
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from simscore.errors import FileFormatError

__all__ = [
    "MEASURES",
    "COLLECTED_SET",
    "CITATION",
    "BIBTEX",
    "PaperFacts",
    "performance",
    "convergence",
    "reward_models",
    "seeds",
    "facts",
    "convergence_means",
    "seeds_means",
    "reward_models_means",
    "PyDial3Lengths",
    "PYDIAL3_LENGTHS",
]

#: The measure columns of Tables 2–4, in the files' order.
MEASURES: tuple[str, ...] = ("tmr", "dmr", "cer", "cmr", "use_ang", "use_cos", "bleu4", "bertscore")
#: The name of simscore's context set the paper's tables describe (C_col, the collected contexts).
COLLECTED_SET = "col"

#: How to cite the paper, in words.
CITATION = (
    "Stefan Ultes and Wolfgang Maier. 2020. Similarity Scoring for Dialogue Behaviour Comparison. "
    "In Proceedings of the 21st Annual Meeting of the Special Interest Group on Discourse and Dialogue "
    "(SIGDIAL 2020), pages 311–322. Association for Computational Linguistics."
)
#: How to cite the paper, as BibTeX.
BIBTEX = """\
@inproceedings{ultes-maier-2020-similarity,
  title     = {Similarity Scoring for Dialogue Behaviour Comparison},
  author    = {Ultes, Stefan and Maier, Wolfgang},
  booktitle = {Proceedings of the 21st Annual Meeting of the Special Interest Group on Discourse and Dialogue (SIGDIAL 2020)},
  pages     = {311--322},
  publisher = {Association for Computational Linguistics},
  year      = {2020}
}"""

_PACKAGE = "simscore.app"
_FOLDER = ("data", "paper")

# file name -> (file column -> (column in the returned frame, type))
_FILES: dict[str, dict[str, tuple[str, type]]] = {
    "table1_performance.csv": {
        "dialogues": ("checkpoint", int),
        "reward": ("reward", str),
        "task_success_rate": ("success_rate", float),
        "average_iq": ("avg_iq", float),
        "average_length": ("avg_length", float),
    },
    "table2_convergence.csv": {
        "reward": ("reward", str),
        "trial": ("trial", int),
        "dialogues": ("checkpoint", int),
        **{m: (m, float) for m in MEASURES},
    },
    "table3_reward_models.csv": {
        "ts_trial": ("ts_trial", int),
        "iq_trial": ("iq_trial", int),
        **{m: (m, float) for m in MEASURES},
    },
    "table4_seeds_col.csv": {
        "reward": ("reward", str),
        "trial_a": ("trial_a", int),
        "trial_b": ("trial_b", int),
        "dialogues": ("checkpoint", int),
        **{m: (m, float) for m in MEASURES},
    },
}


def _resource_name(name: str) -> str:
    return "/".join(["simscore", "app", *_FOLDER, name])


def _parse(name: str, text: str) -> pd.DataFrame:
    """One shipped table, checked and typed (``name`` is the file name in the data folder)."""
    where = _resource_name(name)
    spec = _FILES[name]
    try:
        raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise FileFormatError(where, f"not a CSV table ({exc})") from None
    if list(raw.columns) != list(spec):
        raise FileFormatError(
            where, f"expected columns {', '.join(spec)}, found {', '.join(map(str, raw.columns))}"
        )
    if raw.empty:
        raise FileFormatError(where, "holds no rows")
    data: dict[str, object] = {}
    for column, (target, kind) in spec.items():
        values = raw[column].str.strip()
        try:
            if kind is int:
                data[target] = np.asarray([int(v) for v in values], dtype=np.int64)
            elif kind is float:
                numbers = np.asarray([float(v) for v in values], dtype=np.float64)
                if not np.isfinite(numbers).all():
                    raise ValueError("not a finite number")
                data[target] = numbers
            else:
                if (values == "").any():
                    raise ValueError("empty text")
                data[target] = values.astype(str).to_numpy()
        except ValueError as exc:
            raise FileFormatError(where, f"column {column!r} must hold {kind.__name__} values ({exc})") from None
    return pd.DataFrame(data)


def _read(name: str) -> str:
    resource = resources.files(_PACKAGE).joinpath(*_FOLDER, name)
    try:
        return resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileFormatError(
            _resource_name(name), "the paper's data is not installed with simscore (package data missing)"
        ) from None


@functools.cache
def _table(name: str) -> pd.DataFrame:
    return _parse(name, _read(name))


def performance() -> pd.DataFrame:
    """The paper's Table 1: absolute performance per reward model and checkpoint.

    Returns
    -------
    DataFrame
        ``checkpoint`` (training dialogues: 1000, 5000, 10000, …, 40000), ``reward`` (``ts``,
        ``iq``), ``success_rate`` (task success, 0–1), ``avg_iq`` (interaction quality, 1–5,
        from the paper's BiLSTM estimator), ``avg_length`` (turns); each the mean of 3 trials,
        evaluated on 100 dialogues. A fresh copy on every call.

    Examples
    --------
    >>> t = performance()
    >>> len(t), sorted(set(t["reward"])), int(t["checkpoint"].max())
    (18, ['iq', 'ts'], 40000)
    """
    return _table("table1_performance.csv").copy()


def convergence() -> pd.DataFrame:
    """The paper's Table 2: checkpoint k against k − 1000 of the same trial, on C_col.

    Returns
    -------
    DataFrame
        ``reward``, ``trial`` (0–2), ``checkpoint`` (10000, 20000, 30000, 40000), then one
        float column per measure (:data:`MEASURES`).

    Examples
    --------
    >>> t = convergence()
    >>> t.query("reward == 'ts' and trial == 0 and checkpoint == 40000")[["tmr", "use_ang", "bleu4"]]
       tmr  use_ang  bleu4
    3  1.0    0.871  0.493
    """
    return _table("table2_convergence.csv").copy()


def reward_models() -> pd.DataFrame:
    """The paper's Table 3: each R_TS trial against each R_IQ trial after 40,000 dialogues.

    On the union of both collected context sets (the caption says the generated set; the
    text says the union of the collected sets).

    Returns
    -------
    DataFrame
        ``ts_trial``, ``iq_trial`` (0–2; nine rows), then one float column per measure.

    Examples
    --------
    >>> round(float(reward_models()["tmr"].mean()), 4)
    0.4071
    """
    return _table("table3_reward_models.csv").copy()


def seeds() -> pd.DataFrame:
    """The paper's Table 4 (its C_col half): trial pairs of the same reward model.

    Returns
    -------
    DataFrame
        ``reward``, ``trial_a``, ``trial_b``, ``checkpoint`` (10000, 20000, 30000, 40000),
        then one float column per measure.

    Examples
    --------
    >>> t = seeds()
    >>> t.query("reward == 'ts' and checkpoint == 40000")["tmr"].tolist()
    [0.508, 0.896, 0.536]
    """
    return _table("table4_seeds_col.csv").copy()


def _mean_by(table: pd.DataFrame, by: list[str], count: str) -> pd.DataFrame:
    columns = [m for m in MEASURES if m in table.columns]
    grouped = table.groupby(by, sort=False)
    out = grouped[columns].mean()
    out.insert(0, count, grouped.size())
    return out.reset_index()


def convergence_means() -> pd.DataFrame:
    """Table 2 as the paper's experiment reads it: mean over the 3 trials per reward and checkpoint.

    Returns
    -------
    DataFrame
        ``reward``, ``checkpoint``, ``n_trials``, then one column per measure.

    Examples
    --------
    >>> t = convergence_means()
    >>> round(float(t.query("reward == 'ts' and checkpoint == 40000")["tmr"].item()), 4)
    0.9853
    """
    return _mean_by(convergence(), ["reward", "checkpoint"], "n_trials")


def seeds_means() -> pd.DataFrame:
    """Table 4: mean over the 3 trial pairs per reward and checkpoint.

    Returns
    -------
    DataFrame
        ``reward``, ``checkpoint``, ``n_pairs``, then one column per measure.

    Examples
    --------
    >>> t = seeds_means()
    >>> round(float(t.query("reward == 'iq' and checkpoint == 40000")["tmr"].item()), 4)
    0.4587
    """
    return _mean_by(seeds(), ["reward", "checkpoint"], "n_pairs")


def reward_models_means() -> pd.Series:
    """Table 3: mean over the 9 TS×IQ trial pairs, one value per measure (index: measure names).

    >>> round(float(reward_models_means()["dmr"]), 4)
    0.7973
    """
    table = reward_models()
    return table[list(MEASURES)].mean().rename("mean")


@dataclass(frozen=True)
class PaperFacts:
    """What the paper states besides its tables (``facts.toml``), and numbers derived from the tables.

    Attributes
    ----------
    trials : int
        Training runs (seeds) per reward model: 3.
    dialogues, every, eval_dialogues : int
        40,000 training dialogues, a checkpoint every 1,000, evaluated on 100 dialogues.
    final_checkpoint : int
        The checkpoint of the reward-model comparison (Table 3) and of C_col: 40,000.
    collect_dialogues : int
        Evaluation dialogues collected per trial for C_col: 10 (30 per reward model).
    col_contexts : dict
        Size of C_col per reward model: 183 (TS) and 178 (IQ).
    gen_contexts : int
        Size of C_gen: 1,296.
    correlation_tmr : float
        Overall TMR of the pairs behind the correlation analysis (Figure 6): 0.633.
    nonmatching_cer_cmr_r : float
        Pearson r of CER and CMR on the non-matching pairs only: 0.466.
    first_turn_share : float
        Share of seed pairs whose first-turn TMR is 0 or 1 and whose DMR is 1 (Figure 4): all, 1.0.
    best_seed_tmr : dict
        Highest seed-pair TMR on C_col per reward model (Table 4): 0.896 (TS), 0.68 (IQ).
    text_at_tmr_one : dict
        Mean of each text measure over the Table 2 rows whose TMR is 1.000 (the same actions
        realised with other wording); ``text_at_tmr_one_rows`` counts those rows.
    success_range : tuple of float
        Lowest and highest task success rate in Table 1: 0.94 and 1.0.
    performance_checkpoints : tuple of int
        The checkpoints of Table 1: 1,000, 5,000, 10,000, …, 40,000.
    seed_pairs, cross_pairs : int
        Trial pairs per reward model and checkpoint in Table 4 (3), TS×IQ pairs in Table 3 (9).
    """

    trials: int
    dialogues: int
    every: int
    eval_dialogues: int
    final_checkpoint: int
    collect_dialogues: int
    col_contexts: Mapping[str, int]
    gen_contexts: int
    correlation_tmr: float
    nonmatching_cer_cmr_r: float
    first_turn_share: float
    best_seed_tmr: Mapping[str, float]
    text_at_tmr_one: Mapping[str, float]
    text_at_tmr_one_rows: int
    success_range: tuple[float, float]
    performance_checkpoints: tuple[int, ...]
    seed_pairs: int
    cross_pairs: int

    @property
    def col_dialogues(self) -> int:
        """Dialogues behind C_col per reward model (trials × collected dialogues): 30."""
        return self.trials * self.collect_dialogues

    def contexts_per_dialogue(self, reward: str) -> float:
        """C_col contexts per collected dialogue of one reward model (183 / 30 = 6.1 for TS).

        >>> round(facts().contexts_per_dialogue("ts"), 2)
        6.1
        """
        if reward not in self.col_contexts:
            raise KeyError(f"reward {reward!r}: the paper has C_col sizes for {', '.join(self.col_contexts)}")
        return self.col_contexts[reward] / self.col_dialogues


#: Text-level measures among :data:`MEASURES`.
_TEXT = ("use_ang", "use_cos", "bleu4", "bertscore")
_FACTS_FILE = "facts.toml"
#: The facts ``facts.toml`` states, with their types (every one required, no other key).
_STATED: dict[str, type] = {
    "trials": int, "dialogues": int, "every": int, "eval_dialogues": int, "final_checkpoint": int,
    "collect_dialogues": int, "col_contexts": dict, "gen_contexts": int, "correlation_tmr": float,
    "nonmatching_cer_cmr_r": float, "first_turn_share": float,
}


def _stated(text: str) -> dict[str, Any]:
    """The facts of ``facts.toml``, checked: every key present, of its type (a float may be written as an int)."""
    where = _resource_name(_FACTS_FILE)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FileFormatError(where, f"invalid TOML ({exc})") from None
    if set(data) != set(_STATED):
        missing, extra = sorted(set(_STATED) - set(data)), sorted(set(data) - set(_STATED))
        raise FileFormatError(where, f"missing {missing} / unknown {extra} facts")
    for key, kind in _STATED.items():
        value = data[key]
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or isinstance(value, bool):
            raise FileFormatError(where, f"{key} must be {kind.__name__}, got {value!r}")
        if kind is float:
            data[key] = float(value)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in data["col_contexts"].values()):
        raise FileFormatError(where, f"col_contexts must map rewards to integers, got {data['col_contexts']!r}")
    return data


def _facts() -> PaperFacts:
    seed_table = seeds()
    best = {str(r): float(v) for r, v in seed_table.groupby("reward", sort=False)["tmr"].max().items()}
    table2 = convergence()
    matching = table2[np.isclose(table2["tmr"], 1.0, rtol=0.0, atol=1e-9)]
    text = {m: float(matching[m].mean()) for m in _TEXT} if len(matching) else {m: math.nan for m in _TEXT}
    table1 = performance()
    return PaperFacts(
        **_stated(_read(_FACTS_FILE)), best_seed_tmr=best, text_at_tmr_one=text, text_at_tmr_one_rows=len(matching),
        success_range=(float(table1["success_rate"].min()), float(table1["success_rate"].max())),
        performance_checkpoints=tuple(sorted({int(k) for k in table1["checkpoint"]})),
        seed_pairs=int(seeds_means()["n_pairs"].max()), cross_pairs=len(reward_models()),
    )


def facts() -> PaperFacts:
    """The paper's facts without a table (``facts.toml``), and numbers derived from its tables.

    ``best_seed_tmr`` is the highest TMR per reward in Table 4, ``text_at_tmr_one`` the mean
    text measures over the Table 2 rows with TMR 1.000, ``success_range``,
    ``performance_checkpoints``, ``seed_pairs`` and ``cross_pairs`` describe Tables 1, 4 and 3,
    all computed from the shipped tables; the rest is stated in the paper's text.

    Examples
    --------
    >>> f = facts()
    >>> f.col_contexts, f.col_dialogues, f.gen_contexts
    ({'ts': 183, 'iq': 178}, 30, 1296)
    >>> {m: round(v, 3) for m, v in f.text_at_tmr_one.items()}, f.text_at_tmr_one_rows
    ({'use_ang': 0.871, 'use_cos': 0.891, 'bleu4': 0.493, 'bertscore': 0.918}, 1)
    """
    return _facts()


@dataclass(frozen=True)
class PyDial3Lengths:
    """Average dialogue lengths of PyDial3's own Environment 1 (CamRestaurants), not the paper's.

    Measured with PyDial3 (helloric/pydial3) and counted as PyDial counts turns: the system's
    decisions, the greeting not counted, the exchange in which the user says bye counted —
    simscore's count. The reference a length in this count is compared with; the paper's
    Table 1 (4.2–4.8 turns) cannot be this count for Environment 1, and its own C_col holds
    6.1 decisions per collected dialogue (183 contexts from 30 dialogues).

    Attributes
    ----------
    handcrafted : float
        PyDial3's handcrafted policy: 5.9 turns.
    gp_low, gp_high : float
        GP-SARSA after ``gp_dialogues`` training dialogues: 6.2–6.5 turns.
    gp_dialogues : tuple of int
        2,000 and 4,000.
    random : float
        An untrained (uniformly random) GP policy: 17.4 turns.
    """

    handcrafted: float = 5.9
    gp_low: float = 6.2
    gp_high: float = 6.5
    gp_dialogues: tuple[int, int] = (2000, 4000)
    random: float = 17.4


#: The PyDial3 reference lengths (:class:`PyDial3Lengths`).
PYDIAL3_LENGTHS = PyDial3Lengths()
