#include "gil.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "strideweave/exec/core_mutex.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// Never destroyed: worker threads may use it during and after static destruction.
struct ExitState {
  std::shared_mutex door;  // shared: a worker taking the GIL; exclusive: the exit hook
  bool exiting = false;    // guarded by door
  // The exit hook's grace period ended: only `closer`, the thread that ran
  // the hook, takes the GIL back in GilReleased. Guarded by door.
  bool closed = false;
  std::thread::id closer;
  std::mutex calls_mu;
  std::condition_variable calls_done;
  int calls = 0;  // calls in progress from threads that took the GIL here
};

ExitState*& exit_state_slot() {
  static auto* state = new ExitState();
  return state;
}

ExitState& exit_state() { return *exit_state_slot(); }

// A fork() child has only the thread that forked: a worker that held the door
// while it waited for the GIL, or a count of calls in progress, would make the
// child's exit hook wait for threads it does not have. The child starts a
// fresh state (the old one leaks: its locks may be held).
void fresh_exit_state_in_child() { exit_state_slot() = new ExitState(); }

bool python_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

void close_the_door() {
  const GilReleased unlocked;
  ExitState& state = exit_state();
  {
    const std::unique_lock lock(state.door);
    state.exiting = true;
    state.closer = std::this_thread::get_id();
  }
  {
    std::unique_lock lock(state.calls_mu);
    state.calls_done.wait_for(lock, std::chrono::duration<double>(kExitGraceSeconds),
                              [&] { return state.calls == 0; });
  }
  const std::unique_lock lock(state.door);
  state.closed = true;
}

}  // namespace

int64_t& gil_releases() noexcept {
  thread_local int64_t releases = 0;
  return releases;
}

ExitSafeGil::ExitSafeGil(const char* call) : call_(call) {
  if (const int held = core_locks_held(); held != 0) {
    throw RuntimeError(std::string(call) + ": a call into Python was refused because this thread " +
                       "holds " + std::to_string(held) +
                       " core lock(s) (a carrier or registry mutex); see docs/threading.md");
  }
  if (!Py_IsInitialized()) return;
  if (PyGILState_Check() != 0) {
    state_ = PyGILState_Ensure();
    acquired_ = true;
    return;
  }
  ExitState& state = exit_state();
  const std::shared_lock door(state.door);
  if (state.exiting || python_finalizing()) return;
  state_ = PyGILState_Ensure();
  acquired_ = true;
  counted_ = true;
  const std::lock_guard lock(state.calls_mu);
  ++state.calls;
}

ExitSafeGil::~ExitSafeGil() {
  if (!acquired_) return;
  PyGILState_Release(state_);
  if (!counted_) return;
  ExitState& state = exit_state();
  const std::lock_guard lock(state.calls_mu);
  if (--state.calls == 0) state.calls_done.notify_all();
}

GilReleased::GilReleased() noexcept : saved_(PyEval_SaveThread()) {}

GilReleased::~GilReleased() {
  ExitState& state = exit_state();
  {
    // Under the door's shared lock: the hook cannot close it while this
    // thread waits for the GIL (it gives the GIL up before it closes).
    const std::shared_lock door(state.door);
    if (!state.closed || state.closer == std::this_thread::get_id()) {
      PyEval_RestoreThread(saved_);
      return;
    }
  }
  // The process is exiting and this thread must not run Python again; it
  // holds no lock of the library's here.
  for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
}

void ExitSafeGil::require() const {
  if (!acquired_) {
    throw RuntimeError(std::string(call_) +
                       ": the Python interpreter is exiting; Python is no longer called");
  }
}

void register_exit_hook() {
  py::module_::import("atexit").attr("register")(
      py::cpp_function(&close_the_door, py::name("_close_python_door")));
  static const int registered = pthread_atfork(nullptr, nullptr, &fresh_exit_state_in_child);
  static_cast<void>(registered);
}

}  // namespace strideweave::bindings
