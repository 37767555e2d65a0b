// Binding of spec/carrier-composition "TiledEvictable": TiledEvictable,
// AwaitProjection and AwaitResidency; after bind_move_request (their base
// AwaitResult) and bind_carriers.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_tiled_evictable(pybind11::module_& m);

}  // namespace strideweave::bindings
