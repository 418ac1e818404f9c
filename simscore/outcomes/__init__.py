"""How dialogues end: outcome flips (:mod:`~simscore.outcomes.flips`) and the CI gate's decision
(:mod:`~simscore.outcomes.gate`)."""
