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
    """The rows of ``Profile.key_averages()``: one KeyAverage per kind and name.

    A list, ordered by total duration descending, as ``torch.profiler``'s
    ``key_averages()`` is; ``table()`` renders it.
    """

    def table(self) -> str:
        """The rows as a fixed-width text table.

        Returns
        -------
        str
            One line per row under the columns Name, Kind, Calls, Total, Mean, Min and
            Max, durations in readable units.
        """
        return key_averages_table(self)


class Profile:
    """One profiling session, made by ``profile()`` and entered once with ``with``.

    While the block runs, work on every thread records events: one per operation, and a
    submission and a completion per move. Each event is delivered to every profile
    active when its work began, so a move submitted inside the block delivers its
    completion here even when it completes after the block. The Profile keeps its
    events after the block exits.
    """

    def __init__(self) -> None:
        """A Profile not yet entered; ``profile()`` is the usual way to make one."""
        self._session: ProfilerSession | None = None

    def __enter__(self) -> Profile:
        """Starts collecting.

        Returns
        -------
        Profile
            This profile, for ``with profile() as prof:``.

        Raises
        ------
        RuntimeError
            When this Profile was already entered once.
        """
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
        """Stops collecting new work; completions of moves submitted inside still arrive.

        Never suppresses the block's exception.

        Parameters
        ----------
        exc_type : type[BaseException] or None
            The type of the exception leaving the block, if any.
        exc : BaseException or None
            The exception leaving the block, if any.
        traceback : types.TracebackType or None
            Its traceback, if any.

        Raises
        ------
        None
            Exiting never raises.
        """
        if self._session is not None:
            self._session.stop()

    @property
    def events(self) -> list[ProfileEvent]:
        """list[ProfileEvent]: the events delivered so far, in delivery order.

        Empty before the profile is entered; a move's completion may be appended after the
        block exits.
        """
        return [] if self._session is None else self._session.events()

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Writes the events to ``path`` as Chrome Trace Event Format JSON.

        The file loads in Perfetto and chrome://tracing: operation and submission events
        are complete events (``ph`` ``"X"``), a completion is an asynchronous slice
        (``"b"`` and ``"e"``, ``id`` the correlation id); times are in microseconds.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (created or replaced), UTF-8.

        Raises
        ------
        OSError
            When the file cannot be written.
        """
        Path(path).write_text(chrome_trace_json(self.events), encoding="utf-8")

    def key_averages(self) -> KeyAverages:
        """The events aggregated per kind and name.

        Returns
        -------
        KeyAverages
            One KeyAverage per distinct (kind, name), with the count and the total,
            mean, min and max duration in nanoseconds, by total duration descending.
        """
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
