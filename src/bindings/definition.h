// Binding of definition-owned movement (spec/interop-movement, "Move routes
// are exact and definition-owned"): CarrierDefinition, TransferRoute,
// TransferProvider (subclassable), TransferRequest and define_carrier.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_definitions(pybind11::module_& m);

}  // namespace strideweave::bindings
