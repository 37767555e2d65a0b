// Binding of the carrier contract and the built-in carriers.
#pragma once

#include <pybind11/pybind11.h>

#include "strideweave/carrier/carrier.h"

namespace strideweave::bindings {

void bind_carriers(pybind11::module_& m);

// The descriptor of a carrier class object: the static descriptor of a C++
// built-in, or the one descriptor of a Python subclass (whose parent is the
// descriptor of its nearest carrier base), created when the class statement
// completes or, for a subclass whose __init_subclass__ does not chain, at its
// first instance. Throws TypeError for a class that is not a carrier class.
// Requires the GIL.
const ClassDescriptor& descriptor_for_type(pybind11::handle type);

// The descriptor registered for `type`, or nullptr; creates nothing. Requires
// the GIL.
const ClassDescriptor* registered_descriptor(pybind11::handle type);

}  // namespace strideweave::bindings
