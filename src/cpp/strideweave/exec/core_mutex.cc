#include "strideweave/exec/core_mutex.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

namespace strideweave {

namespace {

thread_local int locks_held = 0;

// The fork gate (core_mutex.h). Each thread that takes core locks has a
// record saying whether it holds one now, written only by that thread, so an
// outermost lock costs the thread one atomic exchange on a cache line of its
// own and its release one plain store: no count that every thread's locks
// would share (and pass between cores). fork()'s prepare handler reads the
// records.
struct alignas(64) ThreadRecord {
  std::atomic<bool> holding{false};
  ThreadRecord* next = nullptr;  // in the registry's list, under its mu
  ThreadRecord* prev = nullptr;
};

// The records of the threads that took a core lock and have not ended, and
// the gate's state. Never destroyed; a fork child replaces it.
struct ForkGate {
  // Guards the list. Held by fork()'s prepare handler until the fork is done,
  // so a thread registering or ending meanwhile waits for the fork, and so does
  // a thread that found the gate closed (enter_gate).
  std::mutex mu;
  ThreadRecord* records = nullptr;
  std::atomic<bool> forking{false};

  void add_locked(ThreadRecord* r) noexcept {
    r->prev = nullptr;
    r->next = records;
    if (records != nullptr) records->prev = r;
    records = r;
  }
  void remove_locked(ThreadRecord* r) noexcept {
    if (r->prev != nullptr) {
      r->prev->next = r->next;
    } else {
      records = r->next;
    }
    if (r->next != nullptr) r->next->prev = r->prev;
  }
};

ForkGate*& gate_slot() {
  static ForkGate* gate = new ForkGate();
  return gate;
}

// The calling thread's record, made and registered by its first core lock.
// A thread-specific key's destructor unregisters and frees it as the thread
// ends (pthread keys, unlike C++ thread_local objects, may be set again by a
// core lock taken during the thread's own teardown, and are never destroyed
// on the main thread, which may take core locks until the process ends).
thread_local ThreadRecord* this_thread = nullptr;

void end_thread_record(void* record) {
  auto* r = static_cast<ThreadRecord*>(record);
  {
    ForkGate& gate = *gate_slot();
    std::lock_guard lock(gate.mu);
    gate.remove_locked(r);
  }
  if (this_thread == r) this_thread = nullptr;
  delete r;
}

pthread_key_t record_key() {
  static const pthread_key_t key = [] {
    pthread_key_t made{};
    pthread_key_create(&made, &end_thread_record);
    return made;
  }();
  return key;
}

ThreadRecord& thread_record() {
  if (this_thread != nullptr) [[likely]] {
    return *this_thread;
  }
  auto* r = new ThreadRecord();
  {
    ForkGate& gate = *gate_slot();
    std::lock_guard lock(gate.mu);  // waits while a fork is being prepared
    gate.add_locked(r);
  }
  pthread_setspecific(record_key(), r);
  this_thread = r;
  return *r;
}

// The calling thread stops holding core locks: it has left every critical
// section, which the prepare handler, reading false, may rely on (release).
void leave_gate() noexcept { this_thread->holding.store(false, std::memory_order_release); }

// The calling thread, which holds no core lock, is about to take one: it
// marks itself a holder unless a fork is being prepared, in which case it
// waits for the fork to end (`wait`) or gives up (false). The mark and the
// prepare handler's `forking` are both sequentially consistent, so either
// the handler sees this thread holding or this thread sees the gate closed.
bool enter_gate(bool wait) {
  ThreadRecord& self = thread_record();
  for (;;) {
    self.holding.store(true, std::memory_order_seq_cst);
    ForkGate& gate = *gate_slot();
    if (!gate.forking.load(std::memory_order_seq_cst)) return true;
    self.holding.store(false, std::memory_order_release);
    if (!wait) return false;
    // The prepare handler holds gate.mu until the fork is done.
    std::lock_guard lock(gate.mu);
  }
}

void prepare_fork() {
  ForkGate& gate = *gate_slot();
  gate.forking.store(true, std::memory_order_seq_cst);
  gate.mu.lock();  // until the parent or child handler
  // Every other thread leaves its critical sections: no thread waits for the
  // GIL, for Python or for a gated thread while it holds a core lock, so the
  // wait is bounded by the longest one (a copy, a file write). A short sleep
  // between looks: a fork is rare, and a holder is never woken from here.
  for (ThreadRecord* r = gate.records; r != nullptr; r = r->next) {
    if (r == this_thread) continue;
    while (r->holding.load(std::memory_order_seq_cst)) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

void parent_after_fork() {
  ForkGate& gate = *gate_slot();
  gate.forking.store(false, std::memory_order_seq_cst);
  gate.mu.unlock();
}

// The child's only thread is the one that forked: a fresh gate listing its
// record alone (the old gate, whose lock the handler holds, leaks with the
// records of the threads the child does not have).
std::atomic<uint64_t> generation{0};

void child_after_fork() {
  generation.fetch_add(1);
  auto* fresh = new ForkGate();
  if (this_thread != nullptr) fresh->add_locked(this_thread);
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
  ForkGate& gate = *gate_slot();
  std::lock_guard lock(gate.mu);
  int holders = 0;
  for (ThreadRecord* r = gate.records; r != nullptr; r = r->next) {
    holders += r->holding.load(std::memory_order_acquire) ? 1 : 0;
  }
  return holders;
}

}  // namespace strideweave
