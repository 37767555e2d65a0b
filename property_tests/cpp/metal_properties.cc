// Moves through the Metal device queue for any generated layout and offset
// (spec/interop-movement, "move relocates values into a caller-supplied
// carrier"): CPU -> Metal -> CPU keeps the layout, the logical values and the
// whole physical span, holes included.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "layout_generators.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::proptest {
namespace {

std::shared_ptr<const Tensor> move_to(const std::shared_ptr<const Tensor>& tensor,
                                      const std::shared_ptr<Carrier>& destination) {
  const auto request = MoveRequest::initiate(tensor, destination);
  RC_ASSERT(core_locks_held() == 0);
  return request->completion().wait();
}

RC_GTEST_PROP(interop_movement__metal_movement_preserves_the_complete_tensor_value_boundary,
              move_a_hierarchical_physical_span_to_metal, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 5);
  const int64_t cosize = layout.size() == 0 ? 0 : layout.cosize();
  std::vector<Value> values;
  const int64_t slots = offset + cosize + *rc::gen::inRange<int64_t>(0, 3);
  for (int64_t i = 0; i < slots; ++i) values.emplace_back(i + 1);
  auto source = std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
  const auto tensor = Tensor::make(source, layout, offset);
  const std::vector<Value> expected = tensor->values();

  auto metal = std::make_shared<Metal>(DType::Int32());
  const auto on_device = move_to(tensor, metal);
  RC_ASSERT(metal->slots() == cosize);
  RC_ASSERT(on_device->subtensor("property").layout == layout);
  RC_ASSERT(on_device->values() == expected);
  RC_ASSERT(source->is_released());

  auto back = std::make_shared<CPU>(DType::Int32());
  const auto on_host = move_to(on_device, back);
  RC_ASSERT(on_host->subtensor("property").layout == layout);
  RC_ASSERT(on_host->subtensor("property").offset == 0);
  RC_ASSERT(on_host->values() == expected);
  RC_ASSERT(metal->is_released());
  const std::vector<Value> span = back->read_range_values(0, cosize);
  for (int64_t s = 0; s < cosize; ++s) {
    RC_ASSERT(span[static_cast<std::size_t>(s)] == Value{offset + s + 1});
  }
}

}  // namespace
}  // namespace strideweave::proptest
