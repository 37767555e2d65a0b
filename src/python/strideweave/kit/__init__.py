"""The carrier conformance kit: the carrier-storage and movement contracts, checked for
any carrier class.

``python -m strideweave.kit MODULE:NAME`` runs the checks (``strideweave.kit.checks``)
against the carrier factory ``NAME`` of ``MODULE`` and prints a requirement-coverage
summary in the specs' own ids; ``-p strideweave.kit.plugin`` gives the same checks in a
team's own pytest suite. docs/carrier-kit.md describes both.

A carrier factory is a Carrier subclass whose constructor follows the built-ins'
``(dtype, n=None, *, values=None)``, or a callable with that signature returning a
Carrier. The spec text the checks cite is read at run time from the spec files the wheel
ships (``strideweave/spec/<capability>/spec.md``) or, in the source tree, from the
repository's ``spec/``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strideweave._harness.catalog import Catalog
from strideweave._harness.openspec import Spec, parse_spec

# The capabilities whose contracts the kit checks.
CAPABILITIES = ("carrier-storage", "interop-movement")

CarrierFactory = Callable[..., Any]


class FactoryError(ValueError):
    """``MODULE:NAME`` names no callable carrier factory."""


def load_factory(reference: str) -> CarrierFactory:
    """The callable that ``MODULE:NAME`` names (``NAME`` may be dotted: ``mod:Outer.Inner``).

    Raises ``FactoryError`` naming the reference when it is malformed, the module does not
    import, the attribute is missing, or it is not callable.
    """
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise FactoryError(f"carrier factory {reference!r} is not of the form MODULE:NAME")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise FactoryError(f"carrier factory {reference!r}: {error}") from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise FactoryError(
                f"carrier factory {reference!r}: {module_name} has no attribute {attribute!r}"
            ) from error
    if not callable(target):
        raise FactoryError(f"carrier factory {reference!r} is not callable")
    return target


def spec_path(capability: str) -> Path:
    """The spec file of ``capability``: shipped in the wheel, else the source tree's."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "spec" / capability / "spec.md"
    if shipped.is_file():
        return shipped
    source = package.parents[2] / "spec" / capability / "spec.md"
    if source.is_file():
        return source
    raise FileNotFoundError(
        f"spec of {capability} found neither in the package ({shipped}) "
        f"nor in the source tree ({source})"
    )


_parsed: dict[str, Spec] = {}


def kit_specs() -> tuple[Spec, ...]:
    """The parsed specs of ``CAPABILITIES``, in that order (parsed once)."""
    for capability in CAPABILITIES:
        if capability not in _parsed:
            _parsed[capability] = parse_spec(spec_path(capability), capability=capability)
    return tuple(_parsed[c] for c in CAPABILITIES)


def clause_text(clause_id: str) -> str:
    """The SHALL sentence ``clause_id`` names (``capability/requirement#N``)."""
    texts = {
        clause.id: clause.text
        for spec in kit_specs()
        for requirement in spec.requirements
        for clause in requirement.clauses
    }
    try:
        return texts[clause_id]
    except KeyError:
        raise KeyError(f"no spec clause {clause_id!r} in {', '.join(CAPABILITIES)}") from None


def catalog() -> Catalog:
    """The kit's specs as a harness catalog."""
    return Catalog(kit_specs())


class ClauseViolation(AssertionError):
    """A carrier broke a spec clause: the message names the clause, its text and what was
    observed."""


def violation(clause_id: str, observed: str) -> ClauseViolation:
    """The failure of a check: ``clause_id`` broken, ``observed`` what the carrier did."""
    return ClauseViolation(f"{clause_id}: {clause_text(clause_id)}\n  observed: {observed}")


def expect(condition: object, clause_id: str, observed: str | Callable[[], str]) -> None:
    """Raise ``violation(clause_id, observed)`` unless ``condition`` holds."""
    if not condition:
        raise violation(clause_id, observed() if callable(observed) else observed)


def expect_raises(
    expected: type[BaseException] | tuple[type[BaseException], ...],
    clause_id: str,
    call: Callable[[], object],
    *,
    naming: tuple[str, ...] = (),
) -> BaseException:
    """Call ``call``, which must raise ``expected`` with a message containing every string
    of ``naming``; return the exception, else raise the clause's violation."""
    names = (
        expected.__name__
        if isinstance(expected, type)
        else " or ".join(e.__name__ for e in expected)
    )
    try:
        result = call()
    except expected as error:
        message = str(error)
        missing = [n for n in naming if n not in message]
        expect(
            not missing,
            clause_id,
            f"{type(error).__name__}({message!r}) does not name {', '.join(map(repr, missing))}",
        )
        return error
    except Exception as error:  # any other exception is what the carrier did
        raise violation(
            clause_id, f"raised {type(error).__name__}({error}) instead of {names}"
        ) from error
    raise violation(clause_id, f"returned {result!r} instead of raising {names}")
