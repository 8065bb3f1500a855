"""Every strategy documents itself: its spec, a worked example that runs, a unique name."""

from __future__ import annotations

import doctest
import importlib

import pytest
from lagassign.core.strategies import REGISTRY, STRATEGIES


@pytest.mark.parametrize("cls", STRATEGIES, ids=lambda c: c.name)
def test_each_strategy_has_a_worked_example_that_runs(cls):
    module = importlib.import_module(cls.__module__)
    doc = module.__doc__ or ""
    assert ">>> " in doc, f"{module.__name__} has no worked example"
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example line(s) of {module.__name__} disagree with the code"


@pytest.mark.parametrize("cls", STRATEGIES, ids=lambda c: c.name)
def test_each_strategy_cites_its_spec(cls):
    doc = importlib.import_module(cls.__module__).__doc__ or ""
    assert "Spec:" in doc, f"{cls.name} cites no spec"


def test_the_registry_is_keyed_by_the_classes_own_names():
    assert list(REGISTRY) == [cls.name for cls in STRATEGIES]
    assert len(REGISTRY) == len(STRATEGIES), "two strategies share a name"
