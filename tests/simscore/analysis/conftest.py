"""Fixtures of the analysis tests: the synthetic experiment's results."""

from __future__ import annotations

import pytest

from tests.simscore.synthetic import synthetic_results


@pytest.fixture(scope="module")
def results():
    return synthetic_results()
