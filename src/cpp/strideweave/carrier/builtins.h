// The built-in carrier classes, enumerated once: the binding registers a
// Python class for each and checks that none is missing.
#pragma once

#include <span>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

// The static descriptors of every built-in carrier class, the root Carrier
// first.
std::span<const ClassDescriptor* const> builtin_carrier_classes();

}  // namespace strideweave
