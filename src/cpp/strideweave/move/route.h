// Route resolution (spec/interop-movement, "Move dispatches on the exact
// carrier class pair", "Move routes are exact and definition-owned"): what
// transfers a move from one exact carrier class to another.
#pragma once

#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/move/carrier_definition.h"

namespace strideweave {

// How a move of a Tensor on a carrier of exact class `source` into one of
// exact class `destination` transfers (spec/interop-movement, "Move
// dispatches on the exact carrier class pair", "Move routes are exact and
// definition-owned"). Seals both classes first (an open class becomes
// definition-free), then:
//   neither class definition-backed: the legacy registry's operation class
//     for the exact pair (ElementwiseMoveOperation when it has none);
//   otherwise the exact source definition's route to exactly `destination`
//     when it declares one; else ElementwiseMoveOperation when both classes
//     permit the fallback (a definition-free class permits it, as the legacy
//     contract does; a definition-backed one when its definition says so);
//     else NotImplementedError naming both classes.
struct MoveRoute {
  const TransferRoute* route = nullptr;        // a definition's route, or
  const ClassDescriptor* operation = nullptr;  // a move operation class
};
MoveRoute resolve_move_route(const ClassDescriptor& source, const ClassDescriptor& destination);

}  // namespace strideweave
