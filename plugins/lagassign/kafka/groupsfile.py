"""The groups file: groups whose consumers run in manual ``assign()`` mode.

Such consumers never join the group, so the broker cannot tell who they are: the file declares
each group's instance ids and topics (and, optionally, its reset policy). Example::

    groups:
      - group: orders-workers
        topics: [orders]                  # topics of every instance unless it lists its own
        instances: [w0, w1, w2]
        auto_offset_reset: earliest       # optional; default --auto-offset-reset
      - group: billing
        instances:
          b0: [invoices]
          b1: [invoices, refunds]

A bare list of groups (without the ``groups:`` key) is accepted too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.lag import RESET_POLICIES
from .errors import GroupsFileError


@dataclass(frozen=True)
class AssignGroup:
    """A declared assign()-mode group: instance id -> its topics, and its reset policy."""

    group: str
    instances: dict[str, tuple[str, ...]]
    auto_offset_reset: str | None = None

    @property
    def topics(self) -> list[str]:
        """Every topic some instance consumes, sorted."""
        return sorted({t for ts in self.instances.values() for t in ts})


def _topics(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(t, str) and t for t in value):
        raise GroupsFileError(f"{where}: 'topics' must be a non-empty list of topic names")
    return tuple(sorted(set(value)))


def _group(entry: Any, index: int, source: str) -> AssignGroup:
    if not isinstance(entry, dict):
        raise GroupsFileError(f"{source}: group #{index} must be a mapping, got {type(entry).__name__}")
    name = entry.get("group")
    if not isinstance(name, str) or not name:
        raise GroupsFileError(f"{source}: group #{index} has no 'group' name")
    where = f"{source}: group {name}"
    unknown = sorted(set(entry) - {"group", "topics", "instances", "auto_offset_reset"})
    if unknown:
        raise GroupsFileError(f"{where}: unknown key(s) {', '.join(unknown)}")
    default_topics = _topics(entry["topics"], where) if "topics" in entry else None
    raw = entry.get("instances")
    instances: dict[str, tuple[str, ...]] = {}
    if isinstance(raw, list) and raw:
        for iid in raw:
            if not isinstance(iid, str) or not iid:
                raise GroupsFileError(f"{where}: instance ids must be non-empty strings, got {iid!r}")
            if iid in instances:
                raise GroupsFileError(f"{where}: instance {iid} is listed twice")
            if default_topics is None:
                raise GroupsFileError(f"{where}: instances are listed without 'topics'")
            instances[iid] = default_topics
    elif isinstance(raw, dict) and raw:
        for iid, topics in raw.items():
            if not isinstance(iid, str) or not iid:
                raise GroupsFileError(f"{where}: instance ids must be non-empty strings, got {iid!r}")
            if topics is None:
                if default_topics is None:
                    raise GroupsFileError(f"{where}: instance {iid} has no topics")
                instances[iid] = default_topics
            else:
                instances[iid] = _topics(topics, f"{where} instance {iid}")
    else:
        raise GroupsFileError(f"{where}: 'instances' must be a non-empty list or mapping of instance ids")
    reset = entry.get("auto_offset_reset")
    if reset is not None and (not isinstance(reset, str) or reset.lower() not in RESET_POLICIES):
        raise GroupsFileError(f"{where}: auto_offset_reset must be one of {', '.join(RESET_POLICIES)}")
    return AssignGroup(name, dict(sorted(instances.items())), reset.lower() if reset else None)


def parse_groups(data: Any, source: str = "groups file") -> list[AssignGroup]:
    """Validate the loaded YAML of a groups file."""
    if isinstance(data, dict):
        if set(data) != {"groups"}:
            raise GroupsFileError(f"{source}: expected a 'groups:' list at the top")
        data = data["groups"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise GroupsFileError(f"{source}: 'groups' must be a list")
    groups = [_group(entry, i, source) for i, entry in enumerate(data)]
    seen: set[str] = set()
    for g in groups:
        if g.group in seen:
            raise GroupsFileError(f"{source}: group {g.group} is declared twice")
        seen.add(g.group)
    return groups


def _strict_loader() -> Any:
    """A safe YAML loader that refuses a key given twice in one mapping (plain YAML keeps the
    last one silently: an instance listed twice would vanish without a word)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{key!r} is listed twice in one mapping", key_node.start_mark
                )
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return StrictLoader


def load_groups_file(path: str | Path) -> list[AssignGroup]:
    """Read and validate a groups file (YAML); a key given twice in a mapping is refused."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise GroupsFileError(f"cannot read groups file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise GroupsFileError(f"groups file {path} is not UTF-8 text") from None
    try:
        data = yaml.load(text, Loader=_strict_loader())  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise GroupsFileError(f"groups file {path}: {problem}{where}") from None
    return parse_groups(data, str(path))
