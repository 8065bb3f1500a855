"""The groups file: groups whose consumers run in manual ``assign()`` mode, and capacities.

Such consumers never join the group, so the broker cannot tell who they are: the file declares
each group's instance ids and topics (and, optionally, its reset policy). Any group may also
state its instances' processing capacity in messages per second (``capacity``: one number for
every instance, or instance id -> number), for planning in time where an instance reports no
rate in its status records; a ``subscribe: true`` entry gives only that, for a group whose
consumers ``subscribe()`` (its ids match ``group.instance.id``, else ``client.id``, else the
member id). Example::

    groups:
      - group: orders-workers
        topics: [orders]                  # topics of every instance unless it lists its own
        instances: [w0, w1, w2]
        auto_offset_reset: earliest       # optional; default --auto-offset-reset
        capacity: 500                     # optional; messages per second, every instance
      - group: billing
        instances:
          b0: [invoices]
          b1: [invoices, refunds]
        capacity: {b0: 800, b1: 3200}     # optional; per instance
      - group: payments                   # a subscribe() group: capacities only
        subscribe: true
        capacity: {pay-0: 1000, pay-1: 4000}

A capacity an instance states in its status records wins; the file's fills members that
state none (before the saturated-commit-rate estimate of ``pipeline.inflow``). A bare list of
groups (without the ``groups:`` key) is accepted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.lag import RESET_POLICIES
from .errors import GroupsFileError
from .textfiles import read_user_file


@dataclass(frozen=True)
class Capacities:
    """Configured messages per second: ``default`` for every instance, ``instances`` per id."""

    default: float | None = None
    instances: dict[str, float] = field(default_factory=dict)

    def of(self, *ids: str | None) -> float | None:
        """The figure of the first of ``ids`` listed, else the default (None: not configured)."""
        for iid in ids:
            if iid is not None and iid in self.instances:
                return self.instances[iid]
        return self.default


@dataclass(frozen=True)
class AssignGroup:
    """A declared assign()-mode group: instance id -> its topics, its reset policy and its
    configured capacities."""

    group: str
    instances: dict[str, tuple[str, ...]]
    auto_offset_reset: str | None = None
    capacity: Capacities = field(default_factory=Capacities)

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


def _per_second(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise GroupsFileError(
            f"{where}: 'capacity' must be messages per second (a number > 0), got {value!r}"
        )
    return float(value)


def _capacities(value: Any, where: str) -> Capacities:
    if value is None:
        return Capacities()
    if isinstance(value, dict):
        out = {}
        for iid, figure in value.items():
            if not isinstance(iid, str) or not iid:
                raise GroupsFileError(f"{where}: capacity keys must be instance ids, got {iid!r}")
            out[iid] = _per_second(figure, f"{where} instance {iid}")
        return Capacities(None, dict(sorted(out.items())))
    return Capacities(_per_second(value, where))


def _entry(entry: Any, index: int, source: str) -> tuple[str, AssignGroup | Capacities]:
    """('assign', the group) or ('subscribe', its capacities) of one entry of the file."""
    if not isinstance(entry, dict):
        raise GroupsFileError(f"{source}: group #{index} must be a mapping, got {type(entry).__name__}")
    name = entry.get("group")
    if not isinstance(name, str) or not name:
        raise GroupsFileError(f"{source}: group #{index} has no 'group' name")
    where = f"{source}: group {name}"
    if entry.get("subscribe") is not None and not isinstance(entry.get("subscribe"), bool):
        raise GroupsFileError(f"{where}: 'subscribe' must be true or false")
    if entry.get("subscribe"):
        unknown = sorted(set(entry) - {"group", "subscribe", "capacity"})
        if unknown:
            raise GroupsFileError(
                f"{where}: a subscribe() group takes only 'capacity', not {', '.join(unknown)}"
            )
        if "capacity" not in entry:
            raise GroupsFileError(f"{where}: a subscribe() group entry needs 'capacity'")
        return "subscribe", _capacities(entry["capacity"], where)
    return "assign", _group(entry, where)


def _group(entry: dict, where: str) -> AssignGroup:
    name = entry["group"]
    unknown = sorted(
        set(entry) - {"group", "topics", "instances", "auto_offset_reset", "capacity", "subscribe"}
    )
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
    capacity = _capacities(entry.get("capacity"), where)
    strangers = sorted(set(capacity.instances) - set(instances))
    if strangers:
        raise GroupsFileError(f"{where}: capacity of undeclared instance(s) {', '.join(strangers)}")
    return AssignGroup(name, dict(sorted(instances.items())), reset.lower() if reset else None, capacity)


def _entries(data: Any, source: str) -> list[tuple[str, str, AssignGroup | Capacities]]:
    """(group, kind, what) of every entry, validated, each group once."""
    if isinstance(data, dict):
        if set(data) != {"groups"}:
            raise GroupsFileError(f"{source}: expected a 'groups:' list at the top")
        data = data["groups"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise GroupsFileError(f"{source}: 'groups' must be a list")
    out = []
    seen: set[str] = set()
    for i, entry in enumerate(data):
        kind, what = _entry(entry, i, source)
        name = entry["group"]
        if name in seen:
            raise GroupsFileError(f"{source}: group {name} is declared twice")
        seen.add(name)
        out.append((name, kind, what))
    return out


def parse_groups(data: Any, source: str = "groups file") -> list[AssignGroup]:
    """Validate the loaded YAML of a groups file; its assign()-mode groups."""
    return [what for _, kind, what in _entries(data, source) if isinstance(what, AssignGroup)]


def parse_capacities(data: Any, source: str = "groups file") -> dict[str, Capacities]:
    """Group -> its configured capacities, for every group of the file that states some."""
    out = {}
    for name, _, what in _entries(data, source):
        caps = what.capacity if isinstance(what, AssignGroup) else what
        if caps.default is not None or caps.instances:
            out[name] = caps
    return out


def fill_capacities(members: list[dict[str, Any]], configured: dict[str, Capacities]) -> int:
    """Set the configured capacity of snapshot member rows that state none (``group``,
    ``instance_id``, ``client_id``, ``member_id``, ``capacity``), in place; returns how many."""
    filled = 0
    for m in members:
        caps = configured.get(m.get("group"))  # type: ignore[arg-type]
        if caps is None or m.get("capacity") is not None:
            continue
        figure = caps.of(m.get("instance_id"), m.get("client_id"), m.get("member_id"))
        if figure is not None:
            m["capacity"] = figure
            filled += 1
    return filled


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
    """Read and validate a groups file (YAML); its assign()-mode groups."""
    return parse_groups(_load(path), str(path))


def load_capacities(path: str | Path) -> dict[str, Capacities]:
    """Read and validate a groups file (YAML); the capacities it configures, per group."""
    return parse_capacities(_load(path), str(path))


def _load(path: str | Path) -> Any:
    """The YAML of a groups file; a key given twice in a mapping is refused."""
    import yaml

    text = read_user_file(path, "groups", GroupsFileError)
    try:
        data = yaml.load(text, Loader=_strict_loader())  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise GroupsFileError(f"groups file {path}: {problem}{where}") from None
    return data
