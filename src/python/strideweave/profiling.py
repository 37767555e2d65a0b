"""Operation profiling (spec/operation-profiling).

``with sw.profile() as prof:`` collects, from every thread, an event per operation and
two events per move (its submission and its terminal completion, sharing one correlation
id) while the block runs. A move submitted inside the block delivers its completion to
``prof`` even when it completes after the block. ``prof.events`` lists them,
``prof.export_chrome_trace(path)`` writes Chrome Trace Event JSON (Perfetto,
chrome://tracing) and ``prof.key_averages()`` aggregates them per name, as
torch.profiler does. See docs/profiling.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from strideweave._core import (
    KeyAverage,
    ProfileEvent,
    ProfilerSession,
    chrome_trace_json,
    key_averages,
    key_averages_table,
)

__all__ = ["KeyAverage", "KeyAverages", "Profile", "ProfileEvent", "profile"]


class KeyAverages(list[KeyAverage]):
    """The rows of ``Profile.key_averages()``: one KeyAverage per kind and name, by total
    duration descending."""

    def table(self) -> str:
        """The rows as a text table (Name, Kind, Calls, Total, Mean, Min, Max)."""
        return key_averages_table(self)


class Profile:
    """One profiling session: entered once, by ``with``; it collects while the block runs
    and keeps its events (and late move completions) afterwards."""

    def __init__(self) -> None:
        self._session: ProfilerSession | None = None

    def __enter__(self) -> Profile:
        if self._session is not None:
            raise RuntimeError("Profile: this Profile was already entered; use a new profile()")
        self._session = ProfilerSession.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._session is not None:
            self._session.stop()

    @property
    def events(self) -> list[ProfileEvent]:
        """The events delivered so far, in delivery order."""
        return [] if self._session is None else self._session.events()

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Writes the events to ``path`` as Chrome Trace Event Format JSON."""
        Path(path).write_text(chrome_trace_json(self.events), encoding="utf-8")

    def key_averages(self) -> KeyAverages:
        """The events aggregated per kind and name (count, total, mean, min, max)."""
        return KeyAverages(key_averages(self.events))


def profile() -> Profile:
    """A new profiling session, to be entered once with ``with``.

    ``with sw.profile() as prof:`` collects, from every thread, one event per
    operation and two per move (submission and completion) while the block runs;
    ``prof.events``, ``prof.key_averages()`` and ``prof.export_chrome_trace(path)``
    read them afterwards (see docs/profiling.md).

    Returns
    -------
    Profile
        The session, not yet started.
    """
    return Profile()
