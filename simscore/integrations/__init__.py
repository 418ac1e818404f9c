"""Integrations with RL libraries: an outer layer over simscore, contexts and policies.

* :mod:`simscore.integrations.gym` — the Gymnasium environment registered as
  ``simscore/RestaurantSearch-v0`` (importing the module registers it; or
  ``gymnasium.make("simscore.integrations.gym:simscore/RestaurantSearch-v0")`` with no import),
  and :class:`~simscore.integrations.gym.SimilarityReward`, similarity to a reference policy as
  a reward term.
* :mod:`simscore.integrations.sb3` — stable-baselines3: the
  :class:`~simscore.integrations.sb3.BehaviourConvergenceCallback` (a behaviour-based stopping
  criterion) and :class:`~simscore.integrations.sb3.SB3Policy` (a trained model as a simscore
  policy). Needs the extra ``pip install "simscore-dialogue[sb3]"`` (stable-baselines3, sb3-contrib);
  both are imported only when used.
* :mod:`simscore.integrations.hf` — Hugging Face ``Trainer`` and TRL's trainers: the
  :class:`~simscore.integrations.hf.BehaviourCallback` (answers a fixed context set with the model
  being trained every N steps, logs the behaviour curve through the trainer, stops after
  ``patience`` stable checks). Needs the ``text`` extra (and ``trl`` for TRL's trainers).

Like :mod:`simscore.app`, this package may import ``contexts`` and ``policies``; nothing in
the core imports it (``tests/test_layering.py`` checks both), and ``import simscore`` imports
neither gymnasium nor torch. This ``__init__`` only checks that ``contexts`` and ``policies``
are simscore-dialogue's own packages (:mod:`simscore.ownership`).
"""

from simscore.ownership import require_own_packages

__all__: list[str] = []

require_own_packages("contexts", "policies")
