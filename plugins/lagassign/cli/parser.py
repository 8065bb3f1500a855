"""The parts of the ``lagassign`` parser that every subcommand's arguments use.

The parser knows every subcommand's arguments (the ``*_args`` modules), but names each handler
by its module and function (``Handler``): a subcommand's implementation, which brings in the
store, Kafka, the pipeline or pyarrow, is imported only when that subcommand runs, so that
``lagassign assign``, ``--version`` and ``--help`` start with the core alone.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """argparse that exits with one line instead of usage plus message."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"lagassign: error: {message}\n")


@dataclass(frozen=True)
class Handler:
    """A subcommand's handler, imported when it is called: ``function`` of ``module`` (relative
    to ``lagassign.cli``, e.g. ``.kafka``) run on the parsed arguments; its exit code."""

    module: str
    function: str

    def __call__(self, args: argparse.Namespace) -> int:
        run = getattr(importlib.import_module(self.module, __package__), self.function)
        return int(run(args))


def _usage_of(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A handler for a command given without its subcommand: the command's help on stderr."""

    def usage(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return usage


def add_commands(parser: argparse.ArgumentParser, title: str) -> Any:
    """Subcommands of ``parser``; given none, the command prints its usage (exit 2)."""
    parser.set_defaults(func=_usage_of(parser))
    return parser.add_subparsers(title=title, metavar="COMMAND", parser_class=Parser)
