"""Language models as policies: local generative models (:mod:`~policies.lm.generative`),
OpenAI-compatible endpoints (:mod:`~policies.lm.openai_endpoint`) and the prompts they are given
(:mod:`~policies.lm.prompts`)."""
