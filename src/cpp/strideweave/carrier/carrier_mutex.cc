#include "strideweave/carrier/carrier_mutex.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "strideweave/carrier/carrier.h"
#include "strideweave/exec/foreign_wait.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

thread_local int gates_held_by_thread = 0;

}  // namespace

int CarrierMutex::gates_held() noexcept { return gates_held_by_thread; }

struct CarrierMutex::Gate {
  std::condition_variable_any released;
  bool held = false;
  std::thread::id holder;
  uint64_t generation = 0;  // fork_generation() of the holder

  void take() {
    ++gates_held_by_thread;
    held = true;
    holder = std::this_thread::get_id();
    generation = fork_generation();
  }
};

CarrierMutex::CarrierMutex(const Carrier& carrier, Kind kind)
    : carrier_(carrier), gate_(kind == Kind::kForeignGate ? std::make_unique<Gate>() : nullptr) {}

CarrierMutex::~CarrierMutex() = default;

bool CarrierMutex::try_lock_gate() {
  const std::lock_guard state(core_);
  if (gate_->held) return false;
  gate_->take();
  return true;
}

void CarrierMutex::unlock_gate() {
  {
    const std::lock_guard state(core_);
    gate_->held = false;
  }
  --gates_held_by_thread;
  gate_->released.notify_all();
}

void CarrierMutex::check_waitable_locked() const {
  if (gate_->generation != fork_generation()) {
    throw RuntimeError(carrier_.label() +
                       " was in use by a thread that this process, a fork() child, does not "
                       "have: its storage hooks were running when the process forked");
  }
  if (gate_->holder == std::this_thread::get_id()) {
    throw RuntimeError(carrier_.label() +
                       " is used by its own storage hook: a hook must not call back into its "
                       "carrier");
  }
}

void CarrierMutex::lock_gate() {
  {
    const std::lock_guard state(core_);
    if (!gate_->held) {
      gate_->take();
      return;
    }
    check_waitable_locked();
  }
  if (core_locks_held() > 0 && foreign_wait_holds_gil()) {
    throw RuntimeError("waiting for " + carrier_.label() +
                       ", whose storage hook runs Python, while holding another carrier's lock "
                       "and the GIL would deadlock");
  }
  // Declared before the state lock, so the GIL comes back after it is unlocked.
  const ForeignWait wait;
  std::unique_lock state(core_);
  gate_->released.wait(state, [&] { return !gate_->held; });
  gate_->take();
}

}  // namespace strideweave
