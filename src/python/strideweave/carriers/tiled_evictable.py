"""TiledEvictable and its completion handles (spec/carrier-composition, "TiledEvictable";
spec/interop-movement, "Await results share one completion contract").

A TiledEvictable splits its slots into tiles, each resident in a fast carrier or evicted
to a slow one. ``project(layout, offset=0)`` returns an AwaitProjection, completing with
one compact ordinary Tensor of the window's values; ``make_resident(tiles)`` and
``evict(tiles)`` return an AwaitResidency, completing with None. Both are AwaitResult
subclasses: ``done``, and ``wait()`` returning the identical object or raising the
identical exception on every call; no coroutine protocol.
"""

from strideweave._core import AwaitProjection, AwaitResidency, TiledEvictable

__all__ = ["AwaitProjection", "AwaitResidency", "TiledEvictable"]
