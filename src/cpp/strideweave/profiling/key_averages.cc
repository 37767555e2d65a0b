#include "strideweave/profiling/key_averages.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

namespace strideweave::profiling {

namespace {

std::string format_duration(double ns) {
  static constexpr std::array<std::pair<double, const char*>, 3> kUnits{
      {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}}};
  char text[48];
  for (const auto& [scale, unit] : kUnits) {
    if (ns >= scale) {
      std::snprintf(text, sizeof text, "%.3f%s", ns / scale, unit);
      return text;
    }
  }
  std::snprintf(text, sizeof text, "%.0fns", ns);
  return text;
}

}  // namespace

std::vector<KeyAverage> key_averages(const std::vector<Event>& events) {
  std::map<std::pair<EventKind, std::string>, KeyAverage> groups;
  for (const Event& event : events) {
    const int64_t duration = event.end_ns - event.start_ns;
    auto [it, inserted] = groups.try_emplace({event.kind, event.name});
    KeyAverage& row = it->second;
    if (inserted) {
      row.name = event.name;
      row.kind = event.kind;
      row.min_ns = duration;
      row.max_ns = duration;
    }
    ++row.count;
    row.total_ns += duration;
    row.min_ns = std::min(row.min_ns, duration);
    row.max_ns = std::max(row.max_ns, duration);
  }
  std::vector<KeyAverage> rows;
  rows.reserve(groups.size());
  for (auto& [key, row] : groups) rows.push_back(std::move(row));
  std::stable_sort(rows.begin(), rows.end(), [](const KeyAverage& a, const KeyAverage& b) {
    return std::tie(b.total_ns, a.name, a.kind) < std::tie(a.total_ns, b.name, b.kind);
  });
  return rows;
}

std::string key_averages_table(const std::vector<KeyAverage>& rows) {
  std::vector<std::array<std::string, 7>> cells;
  cells.push_back({"Name", "Kind", "Calls", "Total", "Mean", "Min", "Max"});
  for (const KeyAverage& row : rows) {
    cells.push_back({row.name, kind_name(row.kind), std::to_string(row.count),
                     format_duration(static_cast<double>(row.total_ns)),
                     format_duration(row.mean_ns()),
                     format_duration(static_cast<double>(row.min_ns)),
                     format_duration(static_cast<double>(row.max_ns))});
  }
  std::array<std::size_t, 7> widths{};
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  std::size_t total_width = 0;
  for (const std::size_t w : widths) total_width += w + 2;
  const std::string rule(total_width - 2, '-');
  std::string out;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    const auto& line = cells[r];
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      // Names and kinds left-aligned, figures right-aligned.
      const std::string pad(widths[i] - line[i].size(), ' ');
      text += i < 2 ? line[i] + pad : pad + line[i];
      if (i + 1 < line.size()) text += "  ";
    }
    out += text + '\n';
    if (r == 0) out += rule + '\n';
  }
  out += rule + '\n';
  return out;
}

}  // namespace strideweave::profiling
