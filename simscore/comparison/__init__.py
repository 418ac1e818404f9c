"""Comparing two policies: :func:`compare` (:mod:`~simscore.comparison.steps`: align, score,
summarise) and its result :class:`Comparison` with :class:`ComparisonInfo`
(:mod:`~simscore.comparison.result`); what a comparison was made from
(:mod:`~simscore.comparison.inputs`)."""

from simscore.comparison.inputs import check_inputs, input_record
from simscore.comparison.result import COMPARISON_VERSION, JSON_CHUNK, Comparison, ComparisonInfo
from simscore.comparison.steps import compare
from simscore.io.formats import COMPARISON_FORMAT
from simscore.measures import DEFAULT_MEASURES
from simscore.stats.clusters import DIALOGUE_COLUMNS, cluster_codes, dialogue_clusters

__all__ = ["compare", "Comparison", "ComparisonInfo", "input_record", "check_inputs", "cluster_codes",
           "dialogue_clusters", "DIALOGUE_COLUMNS", "DEFAULT_MEASURES", "JSON_CHUNK", "COMPARISON_FORMAT",
           "COMPARISON_VERSION"]
