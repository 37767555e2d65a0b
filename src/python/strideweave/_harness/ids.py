"""Stable, terminal-readable identifiers for spec elements.

Guarantees:

* ``slug`` returns either the empty string or text matching ``[a-z0-9]+(-[a-z0-9]+)*``; in
  particular a slug never contains ``_``, ``/`` or ``#``, so ids can be split and mapped to
  C++ identifiers (``-`` -> ``_``) without ambiguity.
* Ids depend only on the capability name and the heading names, never on file positions.

Id shapes::

    requirement  <capability>/<requirement-slug>
    scenario     <capability>/<requirement-slug>/<scenario-slug>
    clause       <capability>/<requirement-slug>#<n>      (n counts from 1)
"""

from __future__ import annotations

import re

_APOSTROPHES = str.maketrans("", "", "'\u2019")
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_SLUG_SHAPE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def slug(text: str) -> str:
    """Lowercase ``text``, drop apostrophes, turn each run of other non ``[a-z0-9]`` into ``-``."""
    lowered = text.lower().translate(_APOSTROPHES)
    return _NON_SLUG.sub("-", lowered).strip("-")


def is_slug(text: str) -> bool:
    """True if ``text`` is a non-empty slug (``slug(text) == text``)."""
    return _SLUG_SHAPE.fullmatch(text) is not None


def requirement_id(capability: str, requirement_slug: str) -> str:
    """Id of a requirement."""
    return f"{capability}/{requirement_slug}"


def scenario_id(capability: str, requirement_slug: str, scenario_slug: str) -> str:
    """Id of a scenario."""
    return f"{capability}/{requirement_slug}/{scenario_slug}"


def clause_id(capability: str, requirement_slug: str, number: int) -> str:
    """Id of the ``number``-th (1-based) normative clause of a requirement."""
    return f"{capability}/{requirement_slug}#{number}"
