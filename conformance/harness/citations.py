"""Citations: which tests claim to verify which spec ids.

A citation binds one test to one id. Python tests cite ids through ``pytest.mark.spec``
(read from collected items, see ``evidence``); C++ tests cite them through their gtest names
(see ``cpp``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TestKind = Literal["python", "cpp"]
PYTHON: TestKind = "python"
CPP: TestKind = "cpp"


@dataclass(frozen=True)
class Citation:
    """``test`` (a pytest node id or a C++ ``Suite.Name``) of ``kind`` cites ``target``."""

    target: str
    test: str
    kind: TestKind


@dataclass(frozen=True)
class Drift:
    """A test cites something no spec defines; ``where`` locates the test."""

    where: str
    test: str
    message: str

    def __str__(self) -> str:
        prefix = self.where if self.where == self.test else f"{self.where}: {self.test}"
        return f"{prefix}: {self.message}"
