// Properties of a move under an injected fault (spec/interop-movement, "One
// asynchronous move publishes at one terminal boundary"): for any generated
// layout and offset, ordered pair of CPU and Generic carriers, empty or sized
// destination, and stage, the fault is raised where request.h says (by
// initiate() up to submission, else as the terminal failure every wait()
// rethrows), the source is live with its values and version, no pin is left,
// and the same Tensor then moves.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "layout_generators.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/request.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace strideweave::proptest {
namespace {

// A CPU (or Generic) carrier holding `slots` Int32 values first, first + 1, ...
std::shared_ptr<Carrier> carrier_of(bool cpu, int64_t slots, int64_t first) {
  std::vector<Value> values;
  for (int64_t i = 0; i < slots; ++i) values.emplace_back(first + i);
  if (cpu) return std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
  return std::make_shared<Generic>(DType::Int32(), std::nullopt, values);
}

// What the request's wait() throws; nullptr when it returns a result.
std::exception_ptr failure_of(const MoveRequest& request) {
  try {
    request.completion().wait();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

bool at_or_after(MoveStage stage, MoveStage first) {
  return static_cast<int>(stage) >= static_cast<int>(first);
}

struct State {
  uint64_t version;
  bool released;
  std::optional<std::string> pinned_by;
  bool mutable_;
  int64_t slots;
  std::vector<Value> values;
  bool operator==(const State&) const = default;
};

State state_of(const Carrier& carrier) {
  return State{carrier.version(),   carrier.is_released(),
               carrier.pinned_by(), carrier.is_mutable(),
               carrier.slots(),     carrier.read_range_values(0, carrier.slots())};
}

RC_GTEST_PROP(interop_movement__one_asynchronous_move_publishes_at_one_terminal_boundary,
              clause3__for_any_layout_pair_and_stage_a_fault_changes_nothing, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 9);
  const int64_t cosize = layout.size() == 0 ? 0 : layout.cosize();
  const auto stage = static_cast<MoveStage>(
      *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, kMoveStages)));  // every stage alike
  RC_TAG(move_stage_name(stage));
  const bool empty = *rc::gen::arbitrary<bool>();  // else cosize and spare slots
  auto source =
      carrier_of(*rc::gen::arbitrary<bool>(), offset + cosize + *rc::gen::inRange(0, 4), 100);
  const int64_t destination_slots = empty ? 0 : cosize + *rc::gen::inRange<int64_t>(0, 5);
  auto destination = carrier_of(*rc::gen::arbitrary<bool>(), destination_slots, -1000);
  const auto tensor = Tensor::make(source, layout, offset);
  const std::vector<Value> values = tensor->values();
  const State source_before = state_of(*source);
  const State destination_before = state_of(*destination);

  RC_ASSERT(clear_move_faults() == 0);
  const auto fault =
      std::make_exception_ptr(RuntimeError(std::string("injected at ") + move_stage_name(stage)));
  inject_move_fault(stage, fault);
  std::shared_ptr<MoveRequest> request;
  std::exception_ptr raised;
  try {
    request = MoveRequest::initiate(tensor, destination);
  } catch (...) {
    raised = std::current_exception();
  }
  RC_ASSERT((request == nullptr) == !at_or_after(stage, MoveStage::kCopy));
  if (request != nullptr) {
    std::exception_ptr on_other_thread;
    std::thread waiter([&] { on_other_thread = failure_of(*request); });
    raised = failure_of(*request);
    waiter.join();
    RC_ASSERT(on_other_thread == fault);
    RC_ASSERT(failure_of(*request) == fault);  // every wait(): the identical exception
    RC_ASSERT(request->completion().done());
  }
  RC_ASSERT(raised == fault);
  RC_ASSERT(clear_move_faults() == 0);  // fired, exactly once

  RC_ASSERT(state_of(*source) == source_before);
  RC_ASSERT(tensor->values() == values);
  RC_ASSERT(destination->pinned_by() == std::nullopt);
  RC_ASSERT(destination->is_mutable());
  const State destination_after = state_of(*destination);
  if (at_or_after(stage, MoveStage::kCompletion) && cosize > 0) {
    // The transfer wrote: one mutation, slots then unspecified.
    RC_ASSERT(destination_after.slots == (empty ? cosize : destination_slots));
    RC_ASSERT(destination_after.version == destination_before.version + 1);
  } else if (at_or_after(stage, MoveStage::kCompletion)) {
    RC_ASSERT(destination_after.values == destination_before.values);  // an empty span
  } else if (empty && cosize > 0 && at_or_after(stage, MoveStage::kSubmission)) {
    // Allocated before the fault, never written.
    RC_ASSERT(destination_after.values ==
              std::vector<Value>(static_cast<std::size_t>(cosize), Value{int64_t{0}}));
    RC_ASSERT(destination_after.version == 1u);
  } else {
    RC_ASSERT(destination_after == destination_before);
  }

  // Usability restored: the same Tensor moves into the same destination.
  const auto result = MoveRequest::initiate(tensor, destination)->completion().wait();
  RC_ASSERT(result->values() == values);
  RC_ASSERT(source->is_released());
  RC_ASSERT(destination->pinned_by() == std::nullopt);
}

}  // namespace
}  // namespace strideweave::proptest
