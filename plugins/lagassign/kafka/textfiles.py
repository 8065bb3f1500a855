"""Reading a file a user named (a settings file, a groups file, a case), with one-line errors."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import LagassignError


def read_user_file(path: str | Path, kind: str, error: type[LagassignError]) -> str:
    """The UTF-8 text of the ``kind`` file at ``path``; unreadable or not UTF-8, one line
    raised as ``error`` ("cannot read groups file x.yaml: No such file or directory")."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read {kind} file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{kind} file {path} is not UTF-8 text") from None
