"""The application: the command line, the experiment runner and its output folder, reports.

The only code in simscore, with :mod:`simscore.integrations`, that imports ``contexts`` and
``policies``; both names are checked first to be simscore-dialogue's own packages
(:mod:`simscore.ownership`).
"""

from simscore.ownership import require_own_packages

require_own_packages("contexts", "policies")
