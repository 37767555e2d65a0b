#include "strideweave/exec/core_mutex.h"

namespace strideweave {

namespace {
thread_local int locks_held = 0;
}  // namespace

void CoreMutex::lock() {
  mu_.lock();
  ++locks_held;
}

bool CoreMutex::try_lock() {
  if (!mu_.try_lock()) return false;
  ++locks_held;
  return true;
}

void CoreMutex::unlock() {
  --locks_held;
  mu_.unlock();
}

int core_locks_held() noexcept { return locks_held; }

}  // namespace strideweave
