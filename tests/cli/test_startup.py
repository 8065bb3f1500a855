"""What the ``lagassign`` command loads to start: the cheap commands (``assign``, ``--version``,
``--help``) run on the core and the parser alone; every other subcommand's implementation is
named by a ``Handler`` and imported only when that subcommand runs."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lagassign.cli import build_parser
from lagassign.cli.parser import Handler
from testpaths import EXAMPLES

# Packages none of the cheap commands may load (the edges' optional dependencies).
HEAVY = {"sqlalchemy", "pyarrow", "confluent_kafka", "pandas", "yaml", "pyspark", "airflow", "fastapi"}
# Beyond the core: the parser's own modules and the three small Kafka-edge files it reads
# (errors for one-line messages, the groups file as an argument type, a user's text file).
PARSER_MODULES = {
    "lagassign",
    "lagassign.cli",
    "lagassign.cli.parser",
    "lagassign.cli.options",
    "lagassign.kafka",
    "lagassign.kafka.errors",
    "lagassign.kafka.groupsfile",
    "lagassign.kafka.textfiles",
}
# What the parser may load beyond what `import lagassign` loads (the core): argparse, logging,
# pathlib and their standard-library helpers, and the modules above. The implementations of
# the other subcommands bring in well over a hundred more.
MOST_BEYOND_THE_CORE = 60

_PROBE = """
import json, sys
out = sys.argv[1]
try:
    if sys.argv[2:] == ["--core"]:
        import lagassign
        lagassign.strategy_names()
    else:
        from lagassign.cli import main
        main(sys.argv[2:])
except SystemExit:
    pass
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def _modules(tmp_path: Path, *argv: str) -> set[str]:
    """The modules a fresh interpreter holds after ``lagassign ARGV`` (``--core``: after
    ``import lagassign`` and the strategy registry)."""
    out = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *argv], capture_output=True, timeout=60, check=True
    )
    return set(json.loads(out.read_text()))


@pytest.mark.parametrize(
    "argv",
    [["assign", "--strategy", "range", str(EXAMPLES / "skewed-group.json")], ["--version"], ["--help"]],
    ids=["assign", "version", "help"],
)
def test_cheap_commands_load_the_core_and_the_parser_alone(tmp_path: Path, argv: list[str]) -> None:
    loaded = _modules(tmp_path, *argv)
    core = _modules(tmp_path, "--core")
    assert not {m.split(".")[0] for m in loaded} & HEAVY
    ours = {m for m in loaded - core if m.startswith("lagassign") and not m.startswith("lagassign.core.")}
    extra = {m for m in ours - PARSER_MODULES if not (m.startswith("lagassign.cli.") and m.endswith("_args"))}
    assert extra == set(), "a cheap command imports a subcommand's implementation"
    assert len(loaded - core) <= MOST_BEYOND_THE_CORE, sorted(loaded - core)


def _commands(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every subcommand under ``parser`` with its words (``"plans list"``), depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words = f"{path} {name}".strip()
                yield words, sub
                yield from _commands(sub, words)


def test_every_handler_names_a_function_of_an_implementation_module() -> None:
    handlers = {
        words: sub.get_default("func")
        for words, sub in _commands(build_parser())
        if isinstance(sub.get_default("func"), Handler)
    }
    assert set(handlers) == {
        "snapshot", "publish", "read-plans", "plan", "watch", "groups",
        "plans list", "plans show", "plans history", "plans claim",
    }  # fmt: skip
    for words, handler in handlers.items():
        module = importlib.import_module(handler.module, "lagassign.cli")
        assert callable(getattr(module, handler.function)), words
        assert not handler.module.endswith("_args"), words


def test_groups_sort_choices_are_the_pipelines() -> None:
    from lagassign.pipeline.overview import SORTS

    groups = dict(_commands(build_parser()))["groups"]
    (sort,) = [a for a in groups._actions if a.dest == "sort"]
    assert tuple(sort.choices or ()) == SORTS


def test_python_dash_m_runs_the_command_where_its_script_is_missing() -> None:
    """``python -m lagassign.cli`` is the tests' fallback (conftest, kafkakit) and a user's."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "lagassign.cli",
            "assign",
            "--strategy",
            "nope",
            str(EXAMPLES / "skewed-group.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("lagassign: error: unknown strategy 'nope'") and run.stderr.count("\n") == 1
