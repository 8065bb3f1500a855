"""Every worked example in the core's docstrings runs: the engines' as well as the strategies'
(``test_strategy_docs`` asks each strategy for one). Examples that need the optional
``certify`` extra (highspy) are marked ``+SKIP`` where they stand."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import lagassign.core
import pytest

MODULES = sorted(m.name for m in pkgutil.walk_packages(lagassign.core.__path__, "lagassign.core."))


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_each_module_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} example line(s) of {name} disagree with the code"
