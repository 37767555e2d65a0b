#include "strideweave/exec/foreign_wait.h"

#include <atomic>

namespace strideweave {

namespace {

// Written once at import, before any foreign code can run; read by every wait.
std::atomic<const ForeignWaitHooks*> installed{nullptr};

}  // namespace

void set_foreign_wait_hooks(const ForeignWaitHooks& hooks) noexcept {
  static ForeignWaitHooks stored;  // never destroyed before the waits that read it
  stored = hooks;
  installed.store(&stored, std::memory_order_release);
}

bool foreign_wait_holds_gil() noexcept {
  const ForeignWaitHooks* hooks = installed.load(std::memory_order_acquire);
  return hooks != nullptr && hooks->holds();
}

ForeignWait::ForeignWait() noexcept {
  if (const ForeignWaitHooks* hooks = installed.load(std::memory_order_acquire)) {
    saved_ = hooks->release();
  }
}

ForeignWait::~ForeignWait() {
  if (saved_ != nullptr) installed.load(std::memory_order_acquire)->restore(saved_);
}

}  // namespace strideweave
