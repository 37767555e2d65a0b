#include "strideweave/move/faults.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

struct ArmedFaults {
  std::mutex mu;
  std::array<std::exception_ptr, kMoveStages> errors;
};

ArmedFaults& armed_faults() {
  static ArmedFaults* faults = new ArmedFaults();  // never destroyed: workers may check it at exit
  return *faults;
}

std::atomic<int> armed_count{0};

}  // namespace

void move_fault_point(MoveStage stage) {
  if (armed_count.load(std::memory_order_relaxed) == 0) return;
  std::exception_ptr error;
  {
    ArmedFaults& faults = armed_faults();
    std::lock_guard lock(faults.mu);
    error = std::exchange(faults.errors[static_cast<std::size_t>(stage)], nullptr);
    if (error != nullptr) --armed_count;
  }
  if (error != nullptr) std::rethrow_exception(error);
}

const char* move_stage_name(MoveStage stage) noexcept {
  switch (stage) {
    case MoveStage::kValidation:
      return "validation";
    case MoveStage::kRoutePreparation:
      return "route preparation";
    case MoveStage::kAllocation:
      return "allocation";
    case MoveStage::kSubmission:
      return "submission";
    case MoveStage::kCopy:
      return "copy";
    case MoveStage::kCompletion:
      return "completion";
    case MoveStage::kResultValidation:
      return "result validation";
  }
  return "unknown";
}

void inject_move_fault(MoveStage stage, std::exception_ptr error) {
  if (error == nullptr) throw ValueError("inject_move_fault: the fault needs an exception");
  ArmedFaults& faults = armed_faults();
  std::lock_guard lock(faults.mu);
  std::exception_ptr& slot = faults.errors[static_cast<std::size_t>(stage)];
  if (slot == nullptr) ++armed_count;
  slot = std::move(error);
}

int clear_move_faults() noexcept {
  ArmedFaults& faults = armed_faults();
  std::lock_guard lock(faults.mu);
  int unfired = 0;
  for (std::exception_ptr& slot : faults.errors) {
    if (slot != nullptr) ++unfired;
    slot = nullptr;
  }
  armed_count = 0;
  return unfired;
}

}  // namespace strideweave
