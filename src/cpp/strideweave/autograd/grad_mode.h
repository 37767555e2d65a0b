// Grad mode (spec/autograd): whether operations record autograd nodes.
//
// Grad mode is per thread and on by default on every thread, worker threads
// included. Reading it is one thread-local load.
#pragma once

namespace strideweave::autograd {

// Whether operations on the calling thread record nodes now.
bool is_grad_enabled() noexcept;

// Sets the calling thread's grad mode.
void set_grad_enabled(bool enabled) noexcept;

// Sets the calling thread's grad mode for its lifetime and restores the
// previous mode when destroyed (no_grad() and enable_grad() are these).
// Must be destroyed on the thread that created it.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) noexcept;
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace strideweave::autograd
