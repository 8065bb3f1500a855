"""Where the tests find the project's files: the repository, its examples and the tests' data."""

from __future__ import annotations

from pathlib import Path

#: the repository's root (this file is tests/support/testpaths.py)
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
DATA = TESTS / "data"
EXAMPLES = REPO / "examples"
