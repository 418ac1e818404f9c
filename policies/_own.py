"""Imported first by ``policies``: ``contexts`` must be simscore-dialogue's own package.

A foreign ``contexts`` (the name is shared on PyPI) is named in a
:class:`~simscore.errors.PackageClashError` instead of failing half-way through an import.
"""

from simscore.ownership import require_own_packages

require_own_packages("contexts")
