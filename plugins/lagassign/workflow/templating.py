"""The plugin's HTML from Jinja2 template files (``templates/``, next to this module).

One environment for every page: autoescaping on, so a value from Kafka, the store or the URL is
escaped unless the code that made it marks it as HTML (``Markup``); undefined names are errors,
not empty text, and ``None`` prints as ``-``, the pages' sign for a value that is not known.
The templates are found next to this file, so the plugin renders them wherever it is loaded
from (a clone's ``plugins/`` folder, an editable or a wheel install).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _dash_for_none(value: Any) -> Any:
    return "-" if value is None else value


environment = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=_dash_for_none,
)


def render(name: str, **context: Any) -> Markup:
    """The template ``name`` (a path under ``templates/``) rendered with ``context``."""
    return Markup(environment.get_template(name).render(**context))


def html(text: str) -> Markup:
    """HTML made by a helper of this package (already escaped), to be inserted as it is."""
    return Markup(text)
