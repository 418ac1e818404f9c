"""The inspection room: tools that look into what an experiment or a comparison made.

:mod:`~simscore.app.inspect.explain` (why the policies differ, ``explain/``),
:mod:`~simscore.app.inspect.diagnose` (can a measure be fooled by degenerate policies) and
:mod:`~simscore.app.inspect.view` (an HTML page of the contexts where two policies differ; its
page in :mod:`~simscore.app.inspect.view_page`). Their command-line options are in
:mod:`simscore.app.cli`.
"""
