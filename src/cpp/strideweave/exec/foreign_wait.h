// Waiting for code the library does not control (docs/threading.md, "Python
// storage").
//
// A carrier whose storage hooks run foreign code (a Python subclass of
// PythonStorageCarrier: its hooks take the GIL) locks a gate, not a core lock,
// while a hook runs. A thread that waits for such a gate must not hold the GIL
// while it waits, or the hook it waits for could never finish. The core knows
// nothing of Python: the binding installs, at import, the functions that
// release the GIL for a wait and take it back after, and ForeignWait calls
// them.
#pragma once

#include "strideweave/exec/thread_pool.h"

namespace strideweave {

// What the binding installs. All three are called with no core lock held and
// must not throw; `release` returns what `restore` takes (null: nothing was
// released, the calling thread did not hold the GIL).
struct ForeignWaitHooks {
  bool (*holds)() noexcept = nullptr;               // whether the calling thread holds the GIL
  void* (*release)() noexcept = nullptr;            // releases it, when held
  void (*restore)(void* saved) noexcept = nullptr;  // takes it back
};

// Installs the hooks (once, before any foreign code runs; never concurrently
// with a ForeignWait).
void set_foreign_wait_hooks(const ForeignWaitHooks& hooks) noexcept;

// Whether the calling thread holds the GIL (false before the hooks are installed).
bool foreign_wait_holds_gil() noexcept;

// For the scope of one wait for foreign code: the GIL released (when the
// calling thread held it), and on a pool worker a ThreadPool::BlockingRegion,
// so the pool keeps workers ready for the work the foreign code may submit.
// The destructor takes the GIL back: the caller must hold no core lock then.
class ForeignWait {
 public:
  ForeignWait() noexcept;
  ~ForeignWait();
  ForeignWait(const ForeignWait&) = delete;
  ForeignWait& operator=(const ForeignWait&) = delete;

 private:
  ThreadPool::BlockingRegion blocking_;
  void* saved_ = nullptr;
};

}  // namespace strideweave
