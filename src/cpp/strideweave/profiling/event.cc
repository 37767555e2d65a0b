#include "strideweave/profiling/event.h"

#include <chrono>

#if defined(__APPLE__)
#include <pthread.h>
#else
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace strideweave::profiling {

const char* kind_name(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::kOperation:
      return "operation";
    case EventKind::kSubmission:
      return "submission";
    case EventKind::kCompletion:
      return "completion";
  }
  return "unknown";
}

const char* category_name(EventKind kind) noexcept {
  return kind == EventKind::kOperation ? "operation" : "move";
}

int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

uint64_t os_thread_id() noexcept {
#if defined(__APPLE__)
  uint64_t id = 0;
  pthread_threadid_np(nullptr, &id);
  return id;
#else
  return static_cast<uint64_t>(syscall(SYS_gettid));
#endif
}

}  // namespace

uint64_t thread_id() noexcept {
  thread_local const uint64_t id = os_thread_id();
  return id;
}

}  // namespace strideweave::profiling
