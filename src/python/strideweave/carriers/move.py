"""The legacy move registry (spec/interop-movement, "Move registration is explicit,
validated, and process-global").

One process-global registry maps exact (source carrier class, destination carrier class)
pairs to MoveOperation subclasses; it starts with the built-in entries
CpuToFileBackedMoveOperation for (CPU, FileBacked), FileBackedToCpuMoveOperation for
(FileBacked, CPU), CpuToBlockDeviceMoveOperation for (CPU, BlockDeviceCarrier) and
BlockDeviceToCpuMoveOperation for (BlockDeviceCarrier, CPU), and every pair without an
entry dispatches to ElementwiseMoveOperation. Entries match by exact class only: an entry
never applies to a subclass of either class. Every call seals the carrier classes it names
definition-free.
"""

from __future__ import annotations

from types import TracebackType

from strideweave._core import (
    AwaitMove,
    AwaitResult,
    Carrier,
    MoveOperation,
    _check_move_registration,
    dispatch_move,
    move,
    move_async,
    register_move_operation,
    unregister_move_operation,
)

__all__ = [
    "AwaitMove",
    "AwaitResult",
    "dispatch_move",
    "move",
    "move_async",
    "register_move_operation",
    "registered_move_operation",
    "unregister_move_operation",
]


class _Registration:
    """The context manager registered_move_operation returns."""

    def __init__(
        self,
        source_class: type[Carrier],
        destination_class: type[Carrier],
        operation_class: type[MoveOperation],
    ) -> None:
        self._pair = (source_class, destination_class)
        self._operation_class = operation_class

    def __enter__(self) -> type[MoveOperation]:
        register_move_operation(*self._pair, self._operation_class)
        return self._operation_class

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        unregister_move_operation(*self._pair)


def registered_move_operation(
    source_class: type[Carrier],
    destination_class: type[Carrier],
    operation_class: type[MoveOperation],
) -> _Registration:
    """A context manager registering operation_class for the exact pair while it is entered.

    The arguments are checked now, as register_move_operation checks them (TypeError for
    a non-conforming argument, RuntimeError for a definition-backed carrier class,
    ValueError when the pair already has an entry). Entering registers the pair (checking
    again: the pair may have gained an entry since) and yields operation_class; exiting
    unregisters it, whether the block returned or raised, and never suppresses the
    block's exception.
    """
    _check_move_registration(source_class, destination_class, operation_class)
    return _Registration(source_class, destination_class, operation_class)
