"""What the suites need to know about the sanitizer a run may load (tox -e sanitize
preloads AddressSanitizer and UndefinedBehaviorSanitizer into the interpreter)."""

from __future__ import annotations

import pytest


def running_under_asan() -> bool:
    """Whether AddressSanitizer's runtime is loaded in this process."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return "libasan" in maps.read()


# For tests of an allocation that cannot be satisfied: AddressSanitizer's operator new
# aborts the process instead of throwing std::bad_alloc.
skip_unsatisfiable_allocations_under_asan = pytest.mark.skipif(
    running_under_asan(),
    reason="AddressSanitizer's operator new aborts on an allocation it cannot satisfy "
    "(allocator_may_return_null does not apply to it) instead of throwing std::bad_alloc",
)
