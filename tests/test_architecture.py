"""The layout keeps its promise: the pure core imports no edge, and edges import inward only.

Read from the source (``ast``), so a lazy import inside a function counts as much as one at
the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "plugins" / "lagassign"
#: What each layer may import of lagassign (besides itself and the standard library).
ALLOWED = {
    "core": {"core"},
    "tables": {"core"},
    "kafka": {"core", "tables", "store"},
    "store": {"core"},
    "evaluation": {"core", "tables"},
    "spark": {"core", "tables", "evaluation"},
    "pipeline": {"core", "tables", "evaluation", "kafka", "spark", "store"},
    "client": {"core", "kafka"},
    "cli": {"core", "tables", "evaluation", "kafka", "pipeline", "store", "spark", "cli"},
    "workflow": {"core", "tables", "evaluation", "kafka", "pipeline", "spark", "store"},
}
#: Third-party packages the pure core must never touch.
EDGE_PACKAGES = (
    "confluent_kafka",
    "pyarrow",
    "pandas",
    "pyspark",
    "sqlalchemy",
    "airflow",
    "yaml",
    "fastapi",
)


def _imports(path: Path) -> list[str]:
    """Absolute module names imported by ``path`` (relative imports resolved)."""
    package = path.relative_to(PKG.parent).with_suffix("").parts[:-1]  # a module's or __init__'s
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - (node.level - 1)])
                out.append(".".join(base + ([node.module] if node.module else [])))
            else:
                out.append(node.module or "")
    return out


def _layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "lagassign" else None


def test_every_module_belongs_to_a_layer():
    loose = [p.name for p in PKG.glob("*.py") if p.name != "__init__.py"]
    assert loose == [], f"modules outside the layers: {loose}"
    assert {p.name for p in PKG.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(ALLOWED)


def test_the_core_imports_no_edge_and_no_edge_package():
    for path in (PKG / "core").rglob("*.py"):
        for name in _imports(path):
            assert not name.startswith(EDGE_PACKAGES), f"{path.relative_to(PKG)} imports {name}"
            layer = _layer(name)
            assert layer in (None, "core"), f"{path.relative_to(PKG)} imports {name}"


def test_edges_import_only_inward():
    for layer, allowed in ALLOWED.items():
        for path in (PKG / layer).rglob("*.py"):
            for name in _imports(path):
                other = _layer(name)
                if other is not None and other != layer:
                    assert other in allowed, f"{path.relative_to(PKG)} ({layer}) imports {name}"
