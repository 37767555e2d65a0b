#include "strideweave/autograd/grad_mode.h"

namespace strideweave::autograd {

namespace {
thread_local bool grad_enabled = true;
}  // namespace

bool is_grad_enabled() noexcept { return grad_enabled; }

void set_grad_enabled(bool enabled) noexcept { grad_enabled = enabled; }

GradModeGuard::GradModeGuard(bool enabled) noexcept : previous_(grad_enabled) {
  grad_enabled = enabled;
}

GradModeGuard::~GradModeGuard() { grad_enabled = previous_; }

}  // namespace strideweave::autograd
