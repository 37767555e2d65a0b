#include "strideweave/exec/core_mutex.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

namespace strideweave {

namespace {

struct ThreadRecord;

// The calling thread's count of core locks held, and its fork-gate record
// (made by its first core lock). One thread-local object, so that a lock or
// an unlock computes the thread's storage address once: in a shared library
// each access to a thread-local variable from another function is a call to
// __tls_get_addr (about 20 instructions).
struct ThreadLocks {
  int held = 0;
  ThreadRecord* record = nullptr;
};
thread_local ThreadLocks thread_locks;

// The calling thread's ThreadLocks. Not inlined on purpose: GCC derives an
// inlined thread-local's address again after every call the caller makes
// (pthread_mutex_lock, here), each time a __tls_get_addr; a reference
// returned by a call is kept in a register instead.
[[gnu::noinline]] ThreadLocks& this_thread_locks() noexcept { return thread_locks; }

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

// A thread's record is made and registered by its first core lock. A
// thread-specific key's destructor unregisters and frees it as the thread
// ends (pthread keys, unlike C++ thread_local objects, may be set again by a
// core lock taken during the thread's own teardown, and are never destroyed
// on the main thread, which may take core locks until the process ends).
void end_thread_record(void* record) {
  auto* r = static_cast<ThreadRecord*>(record);
  {
    ForkGate& gate = *gate_slot();
    std::lock_guard lock(gate.mu);
    gate.remove_locked(r);
  }
  if (thread_locks.record == r) thread_locks.record = nullptr;
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

// The record of the thread whose ThreadLocks `self` is, made on first use.
ThreadRecord& thread_record(ThreadLocks& self) {
  if (self.record != nullptr) [[likely]] {
    return *self.record;
  }
  auto* r = new ThreadRecord();
  {
    ForkGate& gate = *gate_slot();
    std::lock_guard lock(gate.mu);  // waits while a fork is being prepared
    gate.add_locked(r);
  }
  pthread_setspecific(record_key(), r);
  self.record = r;
  return *r;
}

// The calling thread (`self`) stops holding core locks: it has left every
// critical section, which the prepare handler, reading false, may rely on
// (release).
void leave_gate(ThreadLocks& self) noexcept {
  self.record->holding.store(false, std::memory_order_release);
}

// The calling thread (`self`), which holds no core lock, is about to take
// one: it marks itself a holder unless a fork is being prepared, in which case
// it waits for the fork to end (`wait`) or gives up (false). The mark and the
// prepare handler's `forking` are both sequentially consistent, so either the
// handler sees this thread holding or this thread sees the gate closed.
bool enter_gate(ThreadLocks& self, bool wait) {
  ThreadRecord& record = thread_record(self);
  for (;;) {
    record.holding.store(true, std::memory_order_seq_cst);
    ForkGate& gate = *gate_slot();
    if (!gate.forking.load(std::memory_order_seq_cst)) return true;
    record.holding.store(false, std::memory_order_release);
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
    if (r == thread_locks.record) continue;
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
  if (thread_locks.record != nullptr) fresh->add_locked(thread_locks.record);
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
  ThreadLocks& self = this_thread_locks();
  if (self.held == 0) enter_gate(self, true);
  mu_.lock();
  ++self.held;
}

bool CoreMutex::try_lock() {
  ThreadLocks& self = this_thread_locks();
  const bool first = self.held == 0;
  if (first && !enter_gate(self, false)) return false;
  if (!mu_.try_lock()) {
    if (first) leave_gate(self);
    return false;
  }
  ++self.held;
  return true;
}

void CoreMutex::unlock() {
  mu_.unlock();
  ThreadLocks& self = this_thread_locks();
  if (--self.held == 0) leave_gate(self);
}

int core_locks_held() noexcept { return thread_locks.held; }

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
