"""The results of evaluating a group, typed, with the one codec every edge uses.

A ``StrategyResult`` is one strategy's answer for a group (its assignment and metrics, or why it
refused); a ``GroupEvaluation`` is every strategy's answer for one group, the best of them, and
the group's lower bound, or why the group could not be evaluated. Their dict form
(``to_dict``/``from_dict``) is the output contract (docs/ARCHITECTURE.md), and the same dict, as
JSON, is what the evaluation tables, the audit store and XCom carry: no edge has its own shape.

"Best" is defined here once (``best_of``): the lowest max member lag, then the fewest moves,
then the smallest lag and count spreads, then the evaluation's order, among complete results
(every partition consumed). ``current`` competes like any other: when nothing beats the
assignment in force, nothing should move.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from json.encoder import encode_basestring_ascii
from typing import Any, TypedDict

from .errors import LagassignError

#: compact JSON, without the encoder's cycle check (results are trees of lists and dicts; the
#: check cost a fifth of encoding them); the same text as json.dumps with these separators
_COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)

Pairs = list[list[Any]]  # [[topic, partition], ...], sorted


class Metrics(TypedDict, total=False):
    """The metrics object of the output contract (``scoring.score``)."""

    lag: dict[str, int]
    count: dict[str, int]
    max_lag: int
    mean_lag: float
    imbalance: float
    lag_spread: int
    count_spread: int
    moves: int
    lower_bound_max_lag: int
    balanced_lower_bound_max_lag: int
    optimal: bool
    # planning in time (``catchup.catch_up_metrics``), only when every member has a capacity;
    # None stands for never
    catch_up_s: dict[str, float | None]
    max_catch_up_s: float | None
    lower_bound_catch_up_s: float | None
    never_catch_up: list[str]
    catch_up_optimal: bool
    slowest_partition: str | None
    slowest_partition_s: float | None
    #: only for groups with racks on members and replicas (KIP-881): read across racks
    cross_rack_partitions: int
    cross_rack_lag: int


class ResultShapeError(LagassignError):
    """A result or evaluation that does not have the contract's shape."""


class PairTexts:
    """A group's ``[topic, partition]`` pairs by partition index, and (made on first use) the
    compact JSON text of each, as the encoder writes it: the results of the group share them,
    so a plan's JSON is joined from texts instead of encoding thousands of small lists.
    Strategies often agree (almost half the plans of the synthetic mix repeat one of their
    group's): a layout equal to one joined already reuses its text."""

    __slots__ = ("_joined", "_texts", "pairs")

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        self.pairs = pairs
        self._texts: list[str] | None = None
        self._joined: list[tuple[Mapping[str, list[int]], str]] = []

    def texts(self) -> list[str]:
        if self._texts is None:
            topics: dict[str, str] = {}
            self._texts = [
                f"[{topics.get(t) or topics.setdefault(t, encode_basestring_ascii(t))},{int.__repr__(n)}]"
                for t, n in self.pairs
            ]
        return self._texts

    def assignment_json(self, positions: Mapping[str, list[int]]) -> str:
        """The compact JSON of the pairs of these indices per member."""
        for earlier, joined in self._joined:
            if earlier is positions or (earlier == positions and list(earlier) == list(positions)):
                return joined  # the same layout, members in the same order
        text = self.texts().__getitem__
        held = [
            f"{encode_basestring_ascii(mid)}:[{','.join(map(text, idx))}]" for mid, idx in positions.items()
        ]
        joined = "{" + ",".join(held) + "}"
        if len(self._joined) < _JOINED_KEPT:
            self._joined.append((positions, joined))
        return joined


#: layouts whose text a group's ``PairTexts`` keeps (every strategy's once, and some)
_JOINED_KEPT = 32


@dataclass(frozen=True)
class StrategyResult:
    """One strategy's answer for one group: an assignment and its metrics, or a refusal."""

    strategy: str
    assignment: dict[str, Pairs] | None = None
    metrics: Metrics | None = None
    withheld: Pairs | None = None  # cooperative-sticky: partitions held back until revoked
    unassigned: Pairs | None = None  # partitions nobody consumes (only ``current`` can leave any)
    refused: str | None = None
    #: ``assignment`` as partition indices per member, with the group's pair texts
    #: (``with_layout``); not a field of the result: left out of comparisons, repr and ``replace``
    _layout: tuple[PairTexts, Mapping[str, list[int]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def with_layout(self, texts: PairTexts, positions: Mapping[str, list[int]]) -> StrategyResult:
        """This result, told its assignment as indices into ``texts`` (the same pairs, in the
        same order), so that ``to_json`` joins texts made once per group instead of encoding
        every pair of every result again. Made without an assignment, the result makes its
        ``assignment`` pairs from these indices when it is first read (``_PairsOnFirstRead``)."""
        object.__setattr__(self, "_layout", (texts, positions))
        if self.__dict__.get("assignment", False) is None and self.refused is None:
            del self.__dict__["assignment"]
        return self

    def positions_on(self, texts: PairTexts) -> Mapping[str, list[int]] | None:
        """The assignment as indices into ``texts`` per member (read-only) when ``with_layout``
        told it so, else None: then every pair of it is a partition of the group ``texts``
        belongs to."""
        return self._layout[1] if self._layout is not None and self._layout[0] is texts else None

    @property
    def scored(self) -> bool:
        return self.refused is None and self.metrics is not None

    @property
    def complete(self) -> bool:
        """Scored, and every partition consumed."""
        return self.scored and not self.unassigned

    def to_dict(self) -> dict[str, Any]:
        if self.refused is not None:
            return {"strategy": self.strategy, "refused": self.refused}
        return {"strategy": self.strategy, "assignment": self.assignment, **self._after_assignment()}

    def _after_assignment(self) -> dict[str, Any]:
        """The dict form's keys after ``assignment``: metrics, then what was withheld or left
        unassigned, when there is any."""
        out: dict[str, Any] = {"metrics": self.metrics}
        if self.withheld is not None:
            out["withheld"] = self.withheld
        if self.unassigned:
            out["unassigned"] = self.unassigned
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StrategyResult:
        if not isinstance(data, Mapping) or not isinstance(data.get("strategy"), str):
            raise ResultShapeError("a strategy result needs its 'strategy' name")
        if data.get("refused") is not None:
            return cls(data["strategy"], refused=str(data["refused"]))
        if data.get("metrics") is None:
            raise ResultShapeError(f"result of {data['strategy']}: needs 'metrics' or 'refused'")
        return cls(
            data["strategy"],
            data.get("assignment"),
            data["metrics"],
            data.get("withheld"),
            data.get("unassigned") or None,
        )

    def to_json(self) -> str:
        """``to_dict`` as compact JSON (the text of ``json.dumps`` with these separators)."""
        if self._layout is None or self.refused is not None:
            return _COMPACT.encode(self.to_dict())
        assignment = self._layout[0].assignment_json(self._layout[1])  # joined, not encoded
        rest = _COMPACT.encode(self._after_assignment())  # '{"metrics":...}'
        return f'{{"strategy":{encode_basestring_ascii(self.strategy)},"assignment":{assignment},{rest[1:]}'

    @classmethod
    def from_json(cls, text: str) -> StrategyResult:
        return cls.from_dict(json.loads(text))


class _PairsOnFirstRead:
    """``StrategyResult.assignment`` of a result made from a layout (``with_layout``): each
    member's ``[topic, partition]`` pairs, made from the layout's indices when first read, then
    kept in the result like any field. The in-process engine and the Spark tasks write a
    result's JSON from its layout and seldom read its pairs, so they are not made for every
    result. A result made with its pairs never reaches this (its own
    value comes first: this descriptor only answers when the instance has none)."""

    def __get__(self, result: StrategyResult | None, owner: type | None = None) -> dict[str, Pairs] | None:
        if result is None:
            return None  # the class's default, as the dataclass declares it
        layout = result._layout
        if layout is None:
            return None
        pairs = layout[0].pairs
        made = {mid: [list(pairs[i]) for i in idx] for mid, idx in layout[1].items()}
        result.__dict__["assignment"] = made
        return made


StrategyResult.assignment = _PairsOnFirstRead()  # type: ignore[assignment]  # after @dataclass read the default


#: the keys of a group's evaluation as the audit store keeps it (``GroupEvaluation.from_dict``)
EVALUATION_KEYS = (
    "group",
    "members",
    "partitions",
    "best",
    "lower_bound_max_lag",
    "results",
    "group_type",
    "assignor",
)


@dataclass(frozen=True)
class GroupEvaluation:
    """Every evaluated strategy for one group, or why the group could not be evaluated."""

    group: str
    results: tuple[StrategyResult, ...] = ()
    members: int | None = None
    partitions: int | None = None
    best: str | None = None
    lower_bound_max_lag: int | None = None
    error: str | None = None
    #: what the cluster runs for this group, from the snapshot (None when unknown, e.g. a case
    #: file): ``classic`` or ``consumer`` (KIP-848), and the assignor in use (the client's
    #: protocol name of a classic group, the broker's assignor of a consumer group)
    group_type: str | None = None
    assignor: str | None = None

    def on_cluster(self, group_type: Any, assignor: Any) -> GroupEvaluation:
        """This evaluation with what the cluster runs for the group (empty values: unknown)."""
        return replace(self, group_type=_opt_text(group_type), assignor=_opt_text(assignor))

    def result(self, strategy: str) -> StrategyResult | None:
        return next((r for r in self.results if r.strategy == strategy), None)

    def to_dict(self) -> dict[str, Any]:
        """The dict form; ``group_type`` and ``assignor`` only when known."""
        kafka = {k: v for k, v in (("group_type", self.group_type), ("assignor", self.assignor)) if v}
        if self.error is not None:
            return {"group": self.group, "error": self.error, **kafka}
        return {
            "group": self.group,
            "members": self.members,
            "partitions": self.partitions,
            "best": self.best,
            "lower_bound_max_lag": self.lower_bound_max_lag,
            "results": [r.to_dict() for r in self.results],
            **kafka,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupEvaluation:
        if not isinstance(data, Mapping) or not isinstance(data.get("group"), str):
            raise ResultShapeError("an evaluation needs its 'group' name and 'results'")
        kafka = (data.get("group_type"), data.get("assignor"))
        if data.get("error") is not None:
            return cls(data["group"], error=str(data["error"])).on_cluster(*kafka)
        results = data.get("results")
        if not isinstance(results, list):
            raise ResultShapeError(
                f"group {data['group']}: evaluation 'results' must be a list of strategy results"
            )
        return cls(
            data["group"],
            tuple(StrategyResult.from_dict(r) for r in results),
            data.get("members"),
            data.get("partitions"),
            data.get("best"),
            data.get("lower_bound_max_lag"),
        ).on_cluster(*kafka)

    @classmethod
    def of(cls, value: GroupEvaluation | Mapping[str, Any]) -> GroupEvaluation:
        """``value`` as a GroupEvaluation (a dict, e.g. from JSON, is decoded)."""
        return value if isinstance(value, GroupEvaluation) else cls.from_dict(value)


def _opt_text(value: Any) -> str | None:
    """A text value, or None for an empty or missing one (null, "", NaN from pandas)."""
    return str(value) if value and value == value else None


def rank(result: StrategyResult, order: int) -> tuple[Any, ...]:
    """The order of "better": in a group planned in time (its metrics have ``max_catch_up_s``),
    the sooner the slowest member catches up (never is last); then lower max lag, fewer moves,
    smaller spreads, earlier."""
    m = result.metrics or {}
    return (
        catch_up_of(m),
        m.get("max_lag"),
        m.get("moves"),
        m.get("lag_spread", 0),
        m.get("count_spread", 0),
        order,
    )


def catch_up_of(metrics: Mapping[str, Any]) -> float:
    """The largest catch-up seconds of these metrics: infinite for never (None), 0 when the
    group is not planned in time (no ``max_catch_up_s`` at all)."""
    if "max_catch_up_s" not in metrics:
        return 0.0
    value = metrics["max_catch_up_s"]
    return math.inf if value is None else float(value)


def best_of(
    results: Sequence[StrategyResult], keep: Callable[[StrategyResult], bool] = lambda r: r.complete
) -> StrategyResult | None:
    """The best of ``results`` that ``keep`` accepts (complete ones by default), or None."""
    ranked = [(rank(r, i), r) for i, r in enumerate(results) if keep(r)]
    return min(ranked, key=lambda pair: pair[0])[1] if ranked else None
