// The built-in composite carrier classes (spec/carrier-composition),
// enumerated once, like carrier/builtins.h enumerates carrier-storage's: the
// binding registers a Python class for each and checks that none is missing.
#pragma once

#include <span>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

// The static descriptors of every built-in composite carrier class.
std::span<const ClassDescriptor* const> builtin_composite_carrier_classes();

}  // namespace strideweave
