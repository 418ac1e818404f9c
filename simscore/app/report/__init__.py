"""The report's room: the Markdown report of an experiment beside the paper's numbers.

:mod:`~simscore.app.report.base` holds what every section shares (``ReportInput``, ``Section``);
one module per topic writes sections (:mod:`~simscore.app.report.sections`,
:mod:`~simscore.app.report.performance`, :mod:`~simscore.app.report.flows`), the paper's
findings are graded by :mod:`~simscore.app.report.findings` (types in
:mod:`~simscore.app.report.findings_types`), the paper's numbers come from
:mod:`~simscore.app.report.paper`, and :mod:`~simscore.app.report.document` puts the report
together (``write_report``, ``rebuild_report``). It reads the experiment's room, never the
other way round.
"""
