"""The experiment's room: its configuration and the steps that make an experiment folder.

At the bottom the configuration (:mod:`~simscore.app.experiment.config`: ``ExperimentConfig``,
``load_config``, ``DEMO_CONFIG``; its own tables in :mod:`~simscore.app.experiment.sections`;
what each step receives of it in :mod:`~simscore.app.experiment.steps`),
the folder (:mod:`~simscore.app.experiment.folder`), the run's record
(:mod:`~simscore.app.experiment.record`) and what each piece is made from
(:mod:`~simscore.app.experiment.provenance`); on them the steps: scoring
(:mod:`~simscore.app.experiment.analyses`, :mod:`~simscore.app.experiment.context_facts`), the
reference policies (:mod:`~simscore.app.experiment.reference`), the held-out users
(:mod:`~simscore.app.experiment.held_out`) and the flow strata
(:mod:`~simscore.app.experiment.flow_strata`). None of them imports the report, the inspection
tools or the command line; :func:`simscore.app.runner.run_experiment` runs them in order.
"""
