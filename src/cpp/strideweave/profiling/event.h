// Event: one record of operation profiling (spec/operation-profiling).
//
// An operation records one event spanning its host execution. A move records
// two events with one correlation id (spec/interop-movement, "Profiling
// distinguishes submission from completion"): its submission, spanning
// move_async's host work up to submitting the transfer, and its completion,
// spanning submission through the terminal commit (provider time included).
//
// This component sits below move/ and ops/ (both record events), so it reads
// Tensors and carriers only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strideweave/layout/int_tuple.h"

namespace strideweave::profiling {

enum class EventKind {
  kOperation,   // category "operation"
  kSubmission,  // category "move"
  kCompletion,  // category "move"
};

// "operation", "submission", "completion".
const char* kind_name(EventKind kind) noexcept;
// "operation" for an operation, "move" for both events of a move.
const char* category_name(EventKind kind) noexcept;

struct Event {
  EventKind kind = EventKind::kOperation;
  // The operation's name; for a move, its move operation class or route id.
  std::string name;
  // For a move, its request name ("move #N"); empty for an operation.
  std::string request;
  // The exact classes of the input carriers (a move: source, destination).
  std::vector<std::string> carrier_classes;
  // The shapes of the input Tensors (a move: the moved Tensor's).
  std::vector<IntTuple> shapes;
  // The first input Tensor's dtype name; empty without one.
  std::string dtype;
  int64_t start_ns = 0;  // host monotonic clock (now_ns)
  int64_t end_ns = 0;
  uint64_t thread_id = 0;  // the recording thread (thread_id())
  uint64_t correlation_id = 0;
};

// The host monotonic clock (std::chrono::steady_clock) in nanoseconds.
int64_t now_ns() noexcept;

// The operating system's id of the calling thread (Python's
// threading.get_native_id()).
uint64_t thread_id() noexcept;

}  // namespace strideweave::profiling
