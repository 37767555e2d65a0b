// Binding of the carrier contract and the built-in carriers.
#pragma once

#include <pybind11/pybind11.h>

#include "strideweave/carrier/carrier.h"

namespace strideweave::bindings {

void bind_carriers(pybind11::module_& m);

}  // namespace strideweave::bindings
