"""Normative clause extraction from a requirement body.

A clause is a sentence of the requirement's prose that contains the uppercase word ``SHALL``
or ``MUST``. Guarantees:

* Markdown table lines and fenced code blocks never contribute text.
* Blank lines and list items end a sentence even without punctuation.
* Sentences end after ``.``, ``?`` or ``!`` (optionally followed by closing quotes or
  brackets) when whitespace or the end of the block follows. A period is not a boundary
  when it ends a known abbreviation (``e.g.``, ``i.e.``, ``etc.``, ``vs.``, ...) or sits
  inside a number such as ``1.0`` (no whitespace follows it).
* Clause text is the sentence with internal whitespace collapsed to single spaces.
"""

from __future__ import annotations

import re

from .markdown import FenceTracker, is_table_line

ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "cf.", "viz.", "approx.", "al."})
_BOUNDARY = re.compile(r"[.?!][\"')\]\u201d\u2019]*(?=\s|$)")
_NORMATIVE = re.compile(r"\b(?:SHALL|MUST)\b")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_OPENING_PUNCTUATION = "([{\"'`*_\u201c\u2018"


def is_normative(text: str) -> bool:
    """True if ``text`` contains the uppercase word SHALL or MUST."""
    return _NORMATIVE.search(text) is not None


def prose_blocks(body: str) -> list[str]:
    """Split ``body`` into prose blocks, dropping tables and fenced code.

    A block is a run of lines not interrupted by a blank line, a table line, a fence or the
    start of a list item; its lines are joined with single spaces.
    """
    blocks: list[list[str]] = []
    current: list[str] = []
    fences = FenceTracker()

    def flush() -> None:
        if current:
            blocks.append(current.copy())
            current.clear()

    for line in body.splitlines():
        if fences.feed(line) or is_table_line(line) or not line.strip():
            flush()
            continue
        if _LIST_ITEM.match(line):
            flush()
        current.append(line.strip())
    flush()
    return [" ".join(block) for block in blocks]


def _ends_with_abbreviation(text: str, period: int) -> bool:
    words = text[: period + 1].split()
    if not words:
        return False
    return words[-1].lstrip(_OPENING_PUNCTUATION).lower() in ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """Split one prose block into whitespace-normalised sentences."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if text[match.start()] == "." and _ends_with_abbreviation(text, match.start()):
            continue
        sentence = " ".join(text[start : match.end()].split())
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = " ".join(text[start:].split())
    if tail:
        sentences.append(tail)
    return sentences


def extract_clauses(body: str) -> list[str]:
    """Return the normative sentences of ``body`` in document order."""
    return [
        sentence
        for block in prose_blocks(body)
        for sentence in split_sentences(block)
        if is_normative(sentence)
    ]
