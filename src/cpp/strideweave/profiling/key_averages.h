// key_averages: profiling events aggregated per name, as torch.profiler's
// key_averages() does (spec/operation-profiling).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strideweave/profiling/event.h"

namespace strideweave::profiling {

// The events of one kind and name: how many, and their durations
// (end_ns - start_ns) in total, mean, least and greatest.
struct KeyAverage {
  std::string name;
  EventKind kind = EventKind::kOperation;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns() const noexcept {
    return static_cast<double>(total_ns) / static_cast<double>(count);
  }
};

// One row per (kind, name) present in `events`, by total descending, then
// name and kind ascending.
std::vector<KeyAverage> key_averages(const std::vector<Event>& events);

// The rows as a fixed-width text table: a header (Name, Kind, Calls, Total,
// Mean, Min, Max), a rule, one line per row (durations with a unit: ns, us,
// ms or s), a rule.
std::string key_averages_table(const std::vector<KeyAverage>& rows);

}  // namespace strideweave::profiling
