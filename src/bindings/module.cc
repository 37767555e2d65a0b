// strideweave._core: the pybind11 module. Each feature binds itself in its
// own file; this one only assembles them.
#include <pybind11/pybind11.h>

#include "autograd.h"
#include "carrier.h"
#include "compose.h"
#include "definition.h"
#include "dlpack.h"
#include "dtype.h"
#include "errors.h"
#include "gil.h"
#include "layout.h"
#include "layout_views.h"
#include "move.h"
#include "move_request.h"
#include "ops.h"
#include "profiling.h"
#include "tensor.h"
#include "testing.h"
#include "tiled_evictable.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "StrideWeave's C++ core (layouts, tensors, carriers, DLPack export).";
  strideweave::bindings::register_error_translation(m);
  strideweave::bindings::bind_layout(m);
  strideweave::bindings::bind_dtype(m);
  strideweave::bindings::bind_carriers(m);
  strideweave::bindings::bind_compose(m);
  strideweave::bindings::bind_move(m);
  strideweave::bindings::bind_definitions(m);
  strideweave::bindings::bind_move_request(m);
  strideweave::bindings::bind_tiled_evictable(m);
  strideweave::bindings::bind_tensor(m);
  strideweave::bindings::bind_ops(m);
  strideweave::bindings::bind_layout_views(m);
  strideweave::bindings::bind_autograd(m);
  strideweave::bindings::bind_move_node(m);
  strideweave::bindings::bind_profiling(m);
  strideweave::bindings::bind_dlpack(m);
  strideweave::bindings::bind_testing(m);
  strideweave::bindings::register_exit_hook();
}
