"""Fixtures of the kit's checks: the carrier factory under test, wrapped so that every
carrier it makes is checked to be a Carrier, and the dtypes its class holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import strideweave as sw
from strideweave.kit import expect
from strideweave.kit.checks.support import HOLDS, Make, allocatable, held_dtypes


@pytest.fixture(scope="session")
def make(carrier_factory: Callable[..., Any]) -> Make:
    """``make(dtype, n=None, *, values=None)``: a carrier from the factory under test."""

    def made(*args: Any, **kwargs: Any) -> sw.Carrier:
        carrier = carrier_factory(*args, **kwargs)
        expect(
            isinstance(carrier, sw.Carrier),
            f"{HOLDS}#1",
            lambda: f"the factory returned {type(carrier).__name__}, not a Carrier",
        )
        return carrier

    return made


@pytest.fixture(scope="session")
def dtypes(make: Make) -> tuple[sw.DType, ...]:
    """The dtypes of DTYPES the factory's class holds."""
    return held_dtypes(make)


@pytest.fixture(scope="session")
def carrier_class(make: Make, dtypes: tuple[sw.DType, ...]) -> type[sw.Carrier]:
    """The exact class of the factory's carriers."""
    return type(make(dtypes[0], 0))


@pytest.fixture(scope="session")
def numeric(dtypes: tuple[sw.DType, ...]) -> sw.DType:
    """Int32 when held, else Float32, else Bool: the dtype of checks with many values."""
    return next(d for d in (sw.Int32, sw.Float32, sw.Bool) if d in dtypes)


@pytest.fixture(scope="session")
def allocates(make: Make, numeric: sw.DType) -> bool:
    """Whether the class supports allocation of an empty carrier (moves into an empty
    carrier of the class need it)."""
    return allocatable(make(numeric), 1)
