// Lowered execution (spec/carrier-composition): the framework moving values
// between carriers it owns (an Evictable's tiers, a TiledEvictable's tiles)
// through the legacy exact-pair registry, outside any public move. A lowered
// transfer has no request, no handle, no autograd node and no profiling event,
// and releases nothing: the composite decides what happens to its parts.
//
// Thread safety: every function may be called from any thread holding no core
// lock and not the GIL (a Python move operation's hook takes it itself).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strideweave/carrier/carrier.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"

namespace strideweave {

// The operation of the edge source_class -> destination_class for `dtype`,
// checked: both classes definition-free (TypeError naming a definition-backed
// class, whose movement belongs to its TransferRoutes), then the legacy
// registry's operation class for the exact pair (ElementwiseMoveOperation
// when it has none), made by its descriptor, its pins accepting the pair (TypeError
// naming the operation) and supporting `dtype` (TypeError naming the
// operation and the dtype). `purpose` ("Evictable") begins every message. Seals
// both classes, as every dispatch does.
std::shared_ptr<MoveOperation> lowered_operation(const char* purpose,
                                                 const ClassDescriptor& source_class,
                                                 const ClassDescriptor& destination_class,
                                                 const DType& dtype);

// Copies slots [first, first + count) of `source` into slots [0, count) of
// `destination` with `operation`'s copy hook (run_copy_hook) on the calling
// thread. Pins the source (readable) and the destination (for writing) for
// `name`, allocates an empty destination to `count` slots through its lease
// (Lease::allocate_for_overwrite: the hook fills them all),
// runs the hook, makes the destination durable (Lease::sync, as a move's
// commit does) and ends both pins: the destination's version increments by
// one when anything wrote it (an allocation or the hook), the source's never. Passes the fault
// stages kAllocation and kCopy (inject_move_fault). Throws ValueError when the carriers' dtypes
// differ, the source window leaves its slots, or a destination with slots
// holds fewer than `count`; RuntimeError when either carrier is released or
// already pinned; and whatever the hook throws. On failure both pins end, the
// source keeps its values and version, and the destination's slots are
// unspecified (its version incremented once when anything wrote it).
void lowered_transfer(MoveOperation& operation, const std::string& name,
                      const std::shared_ptr<Carrier>& source, int64_t first, int64_t count,
                      const std::shared_ptr<Carrier>& destination);

}  // namespace strideweave
