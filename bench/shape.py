"""The code's shape as issue 30 measures it: library modules over 400 lines, functions over 60,
and the core's lines (all, and code alone: no blank, comment or docstring lines), now or at a
revision.

    .venv/bin/python bench/shape.py [--rev REV]

The core's figures also leave out what issues 28 and 29 added to it later (``core/health``,
``outcome.py``, ``clusters.py``), so that a revision from before them compares like with like.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = "plugins/lagassign"
LATER_FEATURES = {"health", "health.py", "outcome.py", "clusters.py"}


def _files(rev: str | None) -> dict[str, str]:
    """Every library module's path and text, in the work tree or at ``rev``."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / LIBRARY).rglob("*.py"))}
    names = _git("ls-tree", "-r", "--name-only", rev, LIBRARY).split()
    return {n: _git("show", f"{rev}:{n}") for n in names if n.endswith(".py")}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _code_lines(source: str) -> int:
    """Lines that are neither blank, nor a comment, nor part of a docstring."""
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            first = node.body[0]
            if isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docs.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines = enumerate(source.splitlines(), 1)
    return sum(1 for i, line in lines if line.strip() and not line.strip().startswith("#") and i not in docs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default=None, help="a git revision (default: the work tree)")
    args = parser.parse_args()
    files = _files(args.rev)
    big, long_functions = [], []
    core = {"lines": 0, "code": 0, "comparable lines": 0, "comparable code": 0}
    for path, source in files.items():
        lines = source.count("\n")
        if lines > 400:
            big.append((lines, path))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    long_functions.append((length, f"{path}:{node.lineno} {node.name}"))
        if "/core/" in path:
            code = _code_lines(source)
            core["lines"] += lines
            core["code"] += code
            if path.split("/core/", 1)[1].split("/")[0] not in LATER_FEATURES:
                core["comparable lines"] += lines
                core["comparable code"] += code
    print(f"{args.rev or 'work tree'}: {len(files)} library modules")
    print(f"modules over 400 lines: {len(big)}")
    for lines, path in sorted(big, reverse=True):
        print(f"  {lines:5} {path}")
    print(f"functions over 60 lines: {len(long_functions)}")
    for length, where in sorted(long_functions, reverse=True):
        print(f"  {length:5} {where}")
    print(
        f"core: {core['lines']:,} lines ({core['code']:,} code); without issues 28/29's additions "
        f"{core['comparable lines']:,} ({core['comparable code']:,} code)"
    )


if __name__ == "__main__":
    main()
