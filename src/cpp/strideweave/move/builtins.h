// The built-in move-operation classes, enumerated once: the binding registers a
// Python class for each and checks that none is missing.
#pragma once

#include <span>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

// The static descriptors of every built-in move-operation class, the root
// MoveOperation first. Each makes its own instances (ClassDescriptor::
// make_operation); the root's copy hook throws NotImplementedError.
std::span<const ClassDescriptor* const> builtin_move_operation_classes();

}  // namespace strideweave
