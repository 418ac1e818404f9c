"""The paper's analyses over comparisons: convergence, seeds, reward models, per turn, correlation.

Pure functions (pandas in, pandas out; no file IO, no plotting) that turn
:class:`~simscore.comparison.Comparison` results into the tidy tables behind the tables and
figures of Ultes & Maier (SIGDIAL 2020), plus the chance-level baseline and the absolute
performance table. :mod:`simscore.plots` draws the tables, :mod:`simscore.analysis.tables_io` saves
them and the application layer writes the report.

Modules: :mod:`~simscore.analysis.tables` (schemas, keys, the result type),
:mod:`~simscore.analysis.comparisons` (convergence, seeds, reward models, chance level),
:mod:`~simscore.analysis.aggregate` (means over pairs), :mod:`~simscore.analysis.per_context`
(pooled and per-turn scores, each pair's first system turn, text measures where the actions
match), :mod:`~simscore.analysis.correlation` and
:mod:`~simscore.analysis.performance`. Every analysis with an interval takes one
``bootstrap=`` :class:`~simscore.stats.Bootstrap` (resamples, coverage, seed). The paper's findings are checked by the application
layer (:mod:`simscore.app.report.findings`). Table schemas: :mod:`simscore.analysis.tables`.

Example: :mod:`simscore.analysis.comparisons`.
"""

from simscore.analysis.aggregate import (
    aggregate_pairs,
    contrast,
    final_rows,
    reward_models_aggregate,
    seeds_aggregate,
)
from simscore.analysis.comparisons import (
    chance_level,
    convergence,
    first_stable_checkpoint,
    reward_models,
    seeds,
    stability_table,
)
from simscore.analysis.correlation import Correlation, correlation, correlation_matrices, correlation_table
from simscore.analysis.per_context import ScoresArg, first_turn, per_turn, pooled_scores, text_at_matching_actions
from simscore.analysis.performance import performance_table
from simscore.analysis.tables import (
    AGG_COLUMNS,
    RECORD_COLUMNS,
    SCHEMAS,
    STAT_COLUMNS,
    AnalysisResult,
    ChanceKey,
    ConvergenceKey,
    MeasuresArg,
    RewardModelsKey,
    SeedsKey,
    check_table,
    combine,
    schema_frame,
    summary_rows,
    typed_table,
)
from simscore.stats import Bootstrap

__all__ = [
    "Bootstrap",
    "STAT_COLUMNS",
    "AGG_COLUMNS",
    "SCHEMAS",
    "RECORD_COLUMNS",
    "MeasuresArg",
    "ScoresArg",
    "AnalysisResult",
    "ConvergenceKey",
    "SeedsKey",
    "RewardModelsKey",
    "ChanceKey",
    "Correlation",
    "summary_rows",
    "schema_frame",
    "typed_table",
    "check_table",
    "combine",
    "convergence",
    "first_stable_checkpoint",
    "stability_table",
    "seeds",
    "seeds_aggregate",
    "reward_models",
    "reward_models_aggregate",
    "aggregate_pairs",
    "final_rows",
    "chance_level",
    "contrast",
    "pooled_scores",
    "per_turn",
    "first_turn",
    "text_at_matching_actions",
    "correlation",
    "correlation_table",
    "correlation_matrices",
    "performance_table",
]
