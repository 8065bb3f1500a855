"""librdkafka settings from a properties file, the environment and ``--config KEY=VALUE`` flags.

Precedence, lowest first: properties file, environment (``LAGASSIGN_KAFKA_SASL_PASSWORD`` ->
``sasl.password``; a double underscore stands for a literal one, ``LOG__LEVEL`` -> ``log_level``),
``--config`` flags, ``--bootstrap-server``. Settings pass through to librdkafka untouched, so
whatever a user's cluster needs (SASL, SSL, the Kafka 0.9 fallbacks) works without code here.

Secrets must never reach a log, the terminal or a manifest: ``redact`` masks every value whose
key looks secret, and ``check`` reports librdkafka's complaints with secret values masked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.secrets import MASK, is_secret, mask_text
from .errors import KafkaConfigError
from .textfiles import read_user_file

ENV_PREFIX = "LAGASSIGN_KAFKA_"
__all__ = [
    "MASK",
    "build_config",
    "check",
    "from_env",
    "is_secret",
    "load_properties",
    "mask_text",
    "parse_pairs",
    "redact",
]


def redact(conf: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``conf`` that is safe to print, log or write: secret values become ``***``.

    Values that are not plain data (a Python logger, callbacks) are shown by type name only.
    """
    out: dict[str, Any] = {}
    for key, value in conf.items():
        if is_secret(key):
            out[key] = MASK
        elif value is None or isinstance(value, str | int | float | bool):
            out[key] = value
        else:
            out[key] = f"<{type(value).__name__}>"
    return out


def parse_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` from ``--config`` flags into a dict."""
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            shown = key if key else pair.split("=", 1)[0]
            raise KafkaConfigError(f"--config {shown!r}: expected KEY=VALUE")
        conf[key] = value
    return conf


def load_properties(path: str | Path) -> dict[str, str]:
    """A Java-style properties file (``key=value`` or ``key: value``; ``#``/``!`` comments)."""
    text = read_user_file(path, "config", KafkaConfigError)
    conf: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        match = re.match(r"([^=:\s]+)\s*[=:]\s*(.*)$", line)
        if not match:
            raise KafkaConfigError(f"config file {path} line {number}: expected key=value")
        conf[match.group(1)] = match.group(2)
    return conf


def from_env(environ: Mapping[str, str] | None = None, prefix: str = ENV_PREFIX) -> dict[str, str]:
    """Settings from ``LAGASSIGN_KAFKA_*`` variables (``_`` -> ``.``, ``__`` -> ``_``)."""
    environ = os.environ if environ is None else environ
    conf: dict[str, str] = {}
    for name, value in environ.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            key = name[len(prefix) :].lower().replace("__", "\0").replace("_", ".").replace("\0", "_")
            conf[key] = value
    return conf


def build_config(
    bootstrap: str | None = None,
    pairs: Iterable[str] = (),
    properties_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The librdkafka settings of a command, merged by the precedence in the module docstring."""
    conf: dict[str, Any] = {}
    if properties_file:
        conf.update(load_properties(properties_file))
    conf.update(from_env(environ))
    conf.update(parse_pairs(pairs))
    if bootstrap:
        conf["bootstrap.servers"] = bootstrap
    if not conf.get("bootstrap.servers"):
        raise KafkaConfigError("no bootstrap server: give --bootstrap-server HOST:PORT")
    return conf


def check(conf: Mapping[str, Any]) -> None:
    """Let librdkafka validate the settings now, so a typo is one clear line, not a traceback."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    try:
        AdminClient(dict(conf))
    except KafkaException as exc:
        reason = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
        raise KafkaConfigError(f"bad Kafka setting: {mask_text(reason, conf)}") from None
    except (TypeError, ValueError) as exc:
        raise KafkaConfigError(f"bad Kafka setting: {mask_text(str(exc), conf)}") from None
