"""The report's sections on the behaviour maps (``[map]``, :mod:`simscore.app.experiment.maps`).

:func:`section_behaviour_map` writes "Who behaves like whom" from the final policies' maps:
per context set whether each reward model's seeds form a cluster of their own (the paper's
finding 5 says reward models differ about as much as seeds do: then they would not), the
clusters with their bootstrap support, and each policy's nearest neighbour.
:func:`section_plateau` writes where each run's checkpoints plateau.
"""

from __future__ import annotations

import pandas as pd

from simscore.analysis.tables_io import markdown_table
from simscore.app.experiment.maps import FINAL_MAP
from simscore.app.report.base import ReportInput, measure_label
from simscore.io.untrusted import markdown_text

__all__ = ["section_behaviour_map", "section_plateau"]


def _measure(table: pd.DataFrame) -> str:
    """The measure the section details: TMR where the maps have it (the paper's main measure), else the first."""
    measures = list(dict.fromkeys(table["measure"].astype(str)))
    return "tmr" if "tmr" in measures else measures[0]


def _final(table: pd.DataFrame | None) -> pd.DataFrame:
    if table is None or table.empty:
        return pd.DataFrame()
    return table[table["map"].astype(str) == FINAL_MAP]


def _groups_lines(groups: pd.DataFrame) -> list[str]:
    """Each asked group, per context set and measure: a cluster of its own or not, and how often."""
    if groups.empty:
        return []
    shown = groups.assign(
        measure=[measure_label(m) for m in groups["measure"]],
        cluster=["yes" if int(c) else "no" for c in groups["clustered"]],
        support=[f"{s:.0%}" for s in groups["support"]],
    )
    wide = shown.pivot_table(index=["context_set", "group", "members"], columns="measure",
                             values="support", aggfunc="first", sort=False)
    clustered = shown.pivot_table(index=["context_set", "group", "members"], columns="measure",
                                  values="cluster", aggfunc="first", sort=False)
    cells = wide.copy()
    for column in cells.columns:
        cells[column] = [f"{c} ({s})" for c, s in zip(clustered[column], wide[column], strict=True)]
    separate = groups[groups["group"].astype(str).str.endswith(" seeds")]
    share = float(separate["clustered"].astype(int).mean()) if not separate.empty else float("nan")
    lines = [
        "Does a reward model's set of seeds form a cluster of its own? \"yes\" where the clustering of all the data "
        "has a cluster of exactly those runs, with (in brackets) the share of bootstrap resamples whose clustering "
        "has it:",
        "",
        markdown_table(cells.reset_index()),
        "",
    ]
    if not separate.empty:
        if share == 0.0:
            verdict = ("No reward model's seeds form a cluster of their own on any context set or measure: the "
                       "seeds of one reward model are not nearer each other than to the other's -- as the paper's "
                       "finding 5 has it (reward models differ about as much as seeds do).")
        elif share == 1.0:
            verdict = ("Every reward model's seeds form a cluster of their own on every context set and measure: "
                       "here the reward models differ more than seeds do, against the paper's finding 5.")
        else:
            verdict = (f"The seeds form a cluster of their own in {share:.0%} of the (context set, measure, reward "
                       "model) cases: the reward models part in some, not all.")
        lines += [verdict, ""]
    return lines


def section_behaviour_map(table: pd.DataFrame, run: ReportInput) -> list[str]:
    """"Who behaves like whom": the final policies' maps (``table``: ``behaviour_map``)."""
    policies = _final(run.table("behaviour_map_policies"))
    if policies.empty:
        return []
    measure = _measure(policies)
    label = measure_label(measure)
    units = policies.drop_duplicates("context_set")
    where = ", ".join(f"{markdown_text(str(r.context_set))}: {int(r.contexts):,} contexts, {int(r.units):,} "
                      f"{markdown_text(str(r.unit))} resampled" for r in units.itertuples())
    lines = [
        "The behaviour map (`simscore.analysis.behaviour_map`) of the final policies -- every run, the handcrafted "
        "policy and the random one -- on each context set: every pair's similarity with its interval, a "
        "clustering (average linkage on 1 - similarity) whose clusters carry their bootstrap support, and each "
        f"policy's nearest neighbour ({where}). The figure: {label} on the first context set; every measure is in "
        "the tables `behaviour_map*`.",
        "",
    ]
    lines += _groups_lines(_final(run.table("behaviour_map_groups")))
    clusters = _final(run.table("behaviour_map_clusters"))
    n = policies.groupby("context_set")["position"].transform("max") + 1
    sizes = dict(zip(policies["context_set"], n, strict=True))
    clusters = clusters[(clusters["measure"] == measure) & (clusters["size"] > 1)
                        & (clusters["size"] < clusters["context_set"].map(sizes))]
    if not clusters.empty:
        shown = clusters.assign(height=clusters["height"].round(3), support=[f"{s:.0%}" for s in clusters["support"]])
        lines += [f"Clusters of {label} (merge order; height: the average distance 1 - {label} at which they form):",
                  "", markdown_table(shown[["context_set", "merge", "members", "height", "support"]]), ""]
    near = policies[policies["measure"] == measure]
    shown = near.assign(similarity=near["similarity"].round(3), second_similarity=near["second_similarity"].round(3),
                        p=near["p"].round(3))
    lines += [
        f"Nearest neighbours ({label}); p: the share of resamples in which the nearest is not nearer than the second "
        "nearest (small: clearly nearer).",
        "",
        markdown_table(shown[["context_set", "policy", "nearest", "similarity", "second", "second_similarity", "p"]]),
        "",
    ]
    return lines


def section_plateau(table: pd.DataFrame, run: ReportInput) -> list[str]:
    """Where each run's checkpoints plateau (``table``: ``checkpoint_plateau``)."""
    shown = table.assign(measure=[measure_label(m) for m in table["measure"]],
                         plateau=[f"{int(s):,}-{int(last):,} ({int(k)} of {int(n)})"
                                  for s, last, k, n in zip(table["start"], table["last"], table["size"],
                                                           table["checkpoints"], strict=True)],
                         support=["—" if pd.isna(s) else f"{s:.0%}" for s in table["support"]])
    cells = shown.assign(cell=[f"{p} [{s}]" for p, s in zip(shown["plateau"], shown["support"], strict=True)])
    wide = cells.pivot_table(index=["context_set", "run"], columns="measure", values="cell", aggfunc="first",
                             sort=False).reset_index()
    return [
        "The map of each run's checkpoints on its part of C_col. Of the clusters of the checkpoints' clustering "
        "that hold exactly the checkpoints from some k to the final one, the plateau is the one that lives longest "
        "in the dendrogram (the largest gap between the distance at which it forms and the one at which it joins "
        "the rest): where the run stops changing what it does. Each cell: the plateau's checkpoints (how many of "
        "the run's) [its bootstrap support over dialogues]; a plateau of the final checkpoint alone: the last "
        "checkpoint still differs from those before it.",
        "",
        markdown_table(wide),
        "",
    ]
