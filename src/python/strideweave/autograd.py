"""Autograd (spec/autograd): grad mode and the recorded graph.

Grad mode is per thread and on by default. ``no_grad()`` and ``enable_grad()``
set it for a ``with`` block (or a decorated function) and restore it after.
A result's ``autograd_ctx`` is the :class:`Node` that produced it;
``backward()`` runs the engine synchronously on the calling thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from strideweave._core import AccumulateGrad, MoveNode, Node, _set_grad_enabled, is_grad_enabled

__all__ = ["AccumulateGrad", "MoveNode", "Node", "enable_grad", "is_grad_enabled", "no_grad"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _GradMode:
    """Sets the calling thread's grad mode to ``enabled`` inside a ``with`` block, or around
    each call of a function it decorates, and restores the previous mode after."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(is_grad_enabled())
        _set_grad_enabled(self._enabled)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _set_grad_enabled(self._previous.pop())

    def __call__(self, function: _F) -> _F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _GradMode(self._enabled):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def no_grad() -> _GradMode:
    """A context manager (and decorator) under which operations record no autograd nodes.

    It sets the calling thread's grad mode off inside a ``with`` block, or around
    each call of a function it decorates, and restores the previous mode after;
    other threads are not affected.

    Returns
    -------
    context manager
        Use it as ``with sw.no_grad():`` or as ``@sw.no_grad()``.
    """
    return _GradMode(False)


def enable_grad() -> _GradMode:
    """A context manager (and decorator) under which operations record autograd nodes.

    It sets the calling thread's grad mode on inside a ``with`` block, or around
    each call of a function it decorates (inside ``no_grad`` too), and restores
    the previous mode after; other threads are not affected.

    Returns
    -------
    context manager
        Use it as ``with sw.enable_grad():`` or as ``@sw.enable_grad()``.
    """
    return _GradMode(True)
