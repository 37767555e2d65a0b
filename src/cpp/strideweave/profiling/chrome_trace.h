// Chrome Trace Event Format export of profiling events (spec/operation-
// profiling), the JSON that Perfetto and chrome://tracing open.
//
// The document is {"traceEvents": [...], "displayTimeUnit": "ns"}; every
// trace event has name, cat, ph, ts and pid, tid; ts and dur are
// microseconds (three decimals: the events' nanoseconds exactly):
//   an operation event: one complete event (ph "X", cat "operation", dur);
//   a move's submission event: one complete event (ph "X", cat "move") on
//     the submitting thread;
//   a move's completion event: one nestable async slice, a "b" at submission
//     and an "e" at the terminal commit, both cat "move" with the correlation
//     id as id, on the committing thread.
// args carry the kind, correlation id, request, carrier classes, shapes and
// dtype.
#pragma once

#include <string>
#include <vector>

#include "strideweave/profiling/event.h"

namespace strideweave::profiling {

// The trace of `events` for process `pid`.
std::string chrome_trace_json(const std::vector<Event>& events, int64_t pid);

// The calling process's id.
int64_t process_id() noexcept;

}  // namespace strideweave::profiling
