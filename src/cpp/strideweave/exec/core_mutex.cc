#include "strideweave/exec/core_mutex.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>

namespace strideweave {

namespace {

thread_local int locks_held = 0;

// The fork gate (core_mutex.h). Never destroyed; a fork child replaces it.
struct ForkGate {
  std::atomic<int64_t> holders{0};  // threads holding at least one core lock
  std::atomic<bool> forking{false};
  std::mutex mu;  // held by fork()'s prepare handler until the fork is done
  std::condition_variable changed;
};

ForkGate*& gate_slot() {
  static ForkGate* gate = new ForkGate();
  return gate;
}

// The calling thread stops holding core locks.
void leave_gate() {
  ForkGate& gate = *gate_slot();
  if (gate.holders.fetch_sub(1) == 1 && gate.forking.load()) {
    // The last holder of a fork being prepared: the prepare handler waits on
    // `changed` with gate.mu released.
    std::lock_guard lock(gate.mu);
    gate.changed.notify_all();
  }
}

// The calling thread, which holds no core lock, is about to take one: it
// counts itself a holder unless a fork is being prepared, in which case it
// waits for the fork to end (`wait`) or gives up (false).
bool enter_gate(bool wait) {
  for (;;) {
    ForkGate& gate = *gate_slot();
    gate.holders.fetch_add(1);
    if (!gate.forking.load()) return true;
    leave_gate();
    if (!wait) return false;
    std::unique_lock lock(gate.mu);
    gate.changed.wait(lock, [&] { return !gate.forking.load(); });
  }
}

void prepare_fork() {
  ForkGate& gate = *gate_slot();
  gate.forking.store(true);
  gate.mu.lock();  // until the parent or child handler: no thread is inside the gate's lock
  const int64_t own = locks_held > 0 ? 1 : 0;
  while (gate.holders.load() != own) {
    // Releases gate.mu while it waits, so the last holder can notify.
    std::unique_lock lock(gate.mu, std::adopt_lock);
    gate.changed.wait(lock, [&] { return gate.holders.load() == own; });
    lock.release();
  }
}

void parent_after_fork() {
  ForkGate& gate = *gate_slot();
  gate.forking.store(false);
  gate.changed.notify_all();
  gate.mu.unlock();
}

// The child's only thread is the one that forked: a fresh gate, counting it
// when it holds core locks (the old gate, whose lock the handler holds, leaks).
std::atomic<uint64_t> generation{0};

void child_after_fork() {
  generation.fetch_add(1);
  auto* fresh = new ForkGate();
  fresh->holders.store(locks_held > 0 ? 1 : 0);
  gate_slot() = fresh;
}

// Registered when the library is loaded, before any other handler of the
// library: pthread_atfork runs prepare handlers in reverse order of
// registration and child handlers in order, so this prepare runs last (after
// the others stopped their threads' work) and this child handler first (the
// others may take core locks).
const int registered = pthread_atfork(&prepare_fork, &parent_after_fork, &child_after_fork);

}  // namespace

void CoreMutex::lock() {
  if (locks_held == 0) enter_gate(true);
  mu_.lock();
  ++locks_held;
}

bool CoreMutex::try_lock() {
  const bool first = locks_held == 0;
  if (first && !enter_gate(false)) return false;
  if (!mu_.try_lock()) {
    if (first) leave_gate();
    return false;
  }
  ++locks_held;
  return true;
}

void CoreMutex::unlock() {
  mu_.unlock();
  if (--locks_held == 0) leave_gate();
}

int core_locks_held() noexcept { return locks_held; }

uint64_t fork_generation() noexcept { return generation.load(); }

int threads_holding_core_locks() noexcept {
  static_cast<void>(registered);
  return static_cast<int>(gate_slot()->holders.load());
}

}  // namespace strideweave
