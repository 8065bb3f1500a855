"""Which settings are secret: one rule for logs, manifests, the audit store and error messages.

A key is secret when librdkafka documents it as one, or when its name has a word that secrets'
names have (password, secret, passphrase, token, credential, private, JAAS, API key, a PEM key):
a new SASL mechanism's secret then stays masked without a code change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"

SECRET_KEYS = frozenset(
    {
        "sasl.password",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.config",
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "sasl.oauthbearer.assertion.private.key.pem",
        "sasl.kerberos.keytab",
        "ssl.key.password",
        "ssl.key.pem",
        "ssl_key",
        "ssl.keystore.password",
        "ssl.truststore.password",
    }
)
_SECRET_WORDS = re.compile(
    r"pass(word|wd|phrase)?|secret|token|credential|private|jaas|api[._-]?key|(^|[._])key([._]pem|$)", re.I
)


def is_secret(key: str) -> bool:
    """True when the value of ``key`` must be masked."""
    k = str(key).lower()
    return k in SECRET_KEYS or bool(_SECRET_WORDS.search(k))


def redact_tree(value: Any) -> Any:
    """``value`` (JSON-like) with the values under secret keys masked, at any depth."""
    if isinstance(value, dict):
        return {k: MASK if is_secret(k) and v is not None else redact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_tree(v) for v in value]
    return value


def mask_text(text: str, conf: Mapping[str, Any]) -> str:
    """``text`` with every secret value of ``conf`` replaced by the mask (for error messages)."""
    for key, value in conf.items():
        if is_secret(key) and isinstance(value, str) and value:
            text = text.replace(value, MASK)
    return text
