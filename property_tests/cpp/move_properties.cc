// Properties of moves through the built-in operations for any generated
// layout, offset and ordered pair of CPU, Generic and FileBacked carriers
// (spec/interop-movement, "move relocates values into a caller-supplied
// carrier"): host memory to host memory, either side host memory, neither.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "layout_generators.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::proptest {
namespace {

enum class Kind { kCPU, kGeneric, kFileBacked };

// A carrier of class `kind` holding `slots` Int32 values, first, first + 1, ...
std::shared_ptr<Carrier> carrier_of(Kind kind, int64_t slots, int64_t first) {
  std::vector<Value> values;
  for (int64_t i = 0; i < slots; ++i) values.emplace_back(first + i);
  switch (kind) {
    case Kind::kCPU:
      return std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
    case Kind::kGeneric:
      return std::make_shared<Generic>(DType::Int32(), std::nullopt, values);
    case Kind::kFileBacked:
      return std::make_shared<FileBacked>(DType::Int32(), std::nullopt, std::nullopt, values);
  }
  return nullptr;
}

RC_GTEST_PROP(interop_movement__move_relocates_values_into_a_caller_supplied_carrier,
              clause6__logical_values_are_identical_whichever_route_runs, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 5);
  const auto kinds = rc::gen::element(Kind::kCPU, Kind::kGeneric, Kind::kFileBacked);
  const Kind from = *kinds;
  const Kind to = *kinds;
  const int64_t cosize = layout.size() == 0 ? 0 : layout.cosize();
  auto source = carrier_of(from, offset + cosize + *rc::gen::inRange<int64_t>(0, 3), 1);
  // A destination already holding cosize slots, so the holes have prior values.
  auto destination = carrier_of(to, cosize, -1000);
  const std::vector<Value> prior = destination->read_range_values(0, cosize);
  const auto tensor = Tensor::make(source, layout, offset);
  const std::vector<Value> expected = tensor->values();
  const uint64_t version = destination->version();

  const auto request = MoveRequest::initiate(tensor, destination);
  RC_ASSERT(core_locks_held() == 0);
  const std::shared_ptr<const Tensor> result = request->completion().wait();

  RC_ASSERT(result->values() == expected);
  RC_ASSERT(destination->version() == version);  // a move is no in-place mutation
  RC_ASSERT(destination->moves_received() == 1u);
  RC_ASSERT(destination->pinned_by() == std::nullopt);
  RC_ASSERT(source->is_released());
  RC_ASSERT(source->version() == 0u);
  // Holes: the elementwise fallback leaves them; the bulk routes carry the span.
  const bool bulk = (from == Kind::kCPU && to == Kind::kFileBacked) ||
                    (from == Kind::kFileBacked && to == Kind::kCPU);
  std::vector<bool> reached(static_cast<std::size_t>(cosize), false);
  for (int64_t i = 0; i < layout.size(); ++i) reached[static_cast<std::size_t>(layout(i))] = true;
  const std::vector<Value> slots = destination->read_range_values(0, cosize);
  for (int64_t s = 0; s < cosize; ++s) {
    const auto k = static_cast<std::size_t>(s);
    if (reached[k]) continue;
    RC_ASSERT(slots[k] == (bulk ? Value{offset + s + 1} : prior[k]));
  }
}

}  // namespace
}  // namespace strideweave::proptest
