"""Minimal line-level Markdown helpers shared by the spec parser and clause extraction.

Only the constructs OpenSpec files rely on are recognised: ATX headings, fenced code blocks
(``` or ~~~, CommonMark closing rules) and pipe-table lines. Nothing here allocates state
beyond one open fence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_TABLE_LINE = re.compile(r"^\s*\|")


@dataclass(frozen=True)
class Heading:
    """An ATX heading: ``level`` 1-6 and ``title`` without surrounding blanks or closing #s."""

    level: int
    title: str


def parse_heading(line: str) -> Heading | None:
    """Return the heading ``line`` declares, or None if it is not an ATX heading.

    ``#title`` (no blank after the hashes) and seven or more hashes are not headings.
    """
    match = _HEADING.match(line)
    if match is None:
        return None
    title = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
    return Heading(level=len(match.group(1)), title=title)


def is_table_line(line: str) -> bool:
    """True for a pipe-table row or delimiter row (a line whose first non-blank is ``|``)."""
    return _TABLE_LINE.match(line) is not None


class FenceTracker:
    """Tracks whether consecutive lines are inside a fenced code block.

    Feed every line in order; ``feed`` returns True for the opening fence, the fenced content
    and the closing fence, False for ordinary lines. A closing fence uses the opening
    character at least as many times and carries nothing else; an unclosed fence runs to the
    end of the input.
    """

    def __init__(self) -> None:
        self._open: str | None = None

    def feed(self, line: str) -> bool:
        """Consume ``line``; return True if it belongs to a fenced block."""
        if self._open is not None:
            stripped = line.strip()
            char = self._open[0]
            if stripped and set(stripped) == {char} and len(stripped) >= len(self._open):
                if len(line) - len(line.lstrip(" ")) <= 3:
                    self._open = None
            return True
        match = _FENCE_OPEN.match(line)
        if match is None:
            return False
        marker, info = match.groups()
        if marker[0] == "`" and "`" in info:
            return False  # CommonMark: a backtick fence's info string may not contain backticks
        self._open = marker
        return True
