"""The audit store's frozen migrations, one module per schema version, and their runner.

Each ``mNN_*`` module holds one migration's own DDL (and, where rows recorded before need it,
the one-time filling of what it adds) as it shipped: never edit one, append a new module and
its line in ``runner.MIGRATIONS``. They share the column types of ``store.columns``, and a
table rebuilt on SQLite (migrations 4 and 8) takes its columns from the migration that created
it (``m01_audit_trail.plans_columns``, ``m02_publication_ledger.publications_columns``).
"""

from __future__ import annotations

from .runner import LATEST_VERSION, MIGRATIONS, Migration, migrate

__all__ = ["LATEST_VERSION", "MIGRATIONS", "Migration", "migrate"]
