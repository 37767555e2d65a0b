// Fault injection for movement (a test hook behind one interface): a test
// arms a fault for one stage of a move, and the next move to reach that stage
// throws it there, once. The fault-stage tests and properties use it to show
// what a failure at each stage leaves behind (spec/interop-movement, "One
// asynchronous move publishes at one terminal boundary").
//
// Thread safety: every function may be called from any thread. A move checks
// one relaxed atomic counter per stage when nothing is armed.
#pragma once

#include <exception>

namespace strideweave {

// The stages of a move, in order. A fault at
// kValidation .. kSubmission is raised by initiate(); one at kCopy ..
// kResultValidation becomes the terminal failure. A lowered transfer
// (move/lowered.h) passes kAllocation and kCopy and raises their faults.
enum class MoveStage {
  kValidation,        // after the validation table passed
  kRoutePreparation,  // after the route resolved and its provider prepared
  kAllocation,        // in place of the destination's allocation (always reached)
  kSubmission,        // in place of submitting the transfer
  kCopy,              // as the transfer starts, on the thread running it
  kCompletion,        // as a successful transfer's outcome is committed
  kResultValidation,  // after the result passed its validation
};
inline constexpr int kMoveStages = 7;

// "validation", "route preparation", ...: the stage's name in messages.
const char* move_stage_name(MoveStage stage) noexcept;

// Arms a fault: the next move to reach `stage` throws `error` (non-null)
// there, once. Arming a stage again replaces its fault. For tests; every
// move checks one atomic counter when nothing is armed.
void inject_move_fault(MoveStage stage, std::exception_ptr error);
// Throws the fault armed for `stage`, if any, disarming it. Each stage has
// one call, in one place: move/request.cc, whose functions both public moves
// and lowered transfers (move/lowered.cc) run their stages through.
void move_fault_point(MoveStage stage);
// Disarms every stage; returns how many faults were armed and never fired.
int clear_move_faults() noexcept;

}  // namespace strideweave
