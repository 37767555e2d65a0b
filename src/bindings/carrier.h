// Binding of the carrier contract and the built-in carriers.
#pragma once

#include <pybind11/pybind11.h>

#include "strideweave/carrier/carrier.h"

namespace strideweave::bindings {

void bind_carriers(pybind11::module_& m);

// The descriptor of a carrier class object: the static descriptor of a C++
// built-in, or the one descriptor created for a Python subclass (whose parent
// is the descriptor of its nearest carrier base). Requires the GIL.
const CarrierClass& descriptor_for_type(pybind11::handle type);

}  // namespace strideweave::bindings
