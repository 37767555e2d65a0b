#include "strideweave/profiling/chrome_trace.h"

#include <unistd.h>

#include <cstdio>
#include <string_view>

namespace strideweave::profiling {

namespace {

void append_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Nanoseconds as microseconds with three decimals.
void append_microseconds(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  char digits[32];
  std::snprintf(digits, sizeof digits, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  out += digits;
}

void append_args(std::string& out, const Event& event) {
  out += R"("args":{"kind":)";
  append_string(out, kind_name(event.kind));
  out += R"(,"correlation_id":)" + std::to_string(event.correlation_id);
  if (!event.request.empty()) {
    out += R"(,"request":)";
    append_string(out, event.request);
  }
  out += R"(,"carrier_classes":[)";
  for (std::size_t i = 0; i < event.carrier_classes.size(); ++i) {
    if (i != 0) out += ',';
    append_string(out, event.carrier_classes[i]);
  }
  out += R"(],"shapes":[)";
  for (std::size_t i = 0; i < event.shapes.size(); ++i) {
    if (i != 0) out += ',';
    append_string(out, event.shapes[i].to_string());
  }
  out += R"(],"dtype":)";
  append_string(out, event.dtype);
  out += '}';
}

// One trace event, without its closing brace.
void open_event(std::string& out, const Event& event, char phase, int64_t ts_ns, int64_t pid) {
  out += R"({"name":)";
  append_string(out, event.name);
  out += R"(,"cat":)";
  append_string(out, category_name(event.kind));
  out += R"(,"ph":")";
  out += phase;
  out += R"(","ts":)";
  append_microseconds(out, ts_ns);
  out += R"(,"pid":)" + std::to_string(pid) + R"(,"tid":)" + std::to_string(event.thread_id);
}

}  // namespace

std::string chrome_trace_json(const std::vector<Event>& events, int64_t pid) {
  std::string out = R"({"traceEvents":[)";
  bool first = true;
  const auto separate = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const Event& event : events) {
    separate();
    if (event.kind == EventKind::kCompletion) {
      const std::string id = R"(,"id":)" + std::to_string(event.correlation_id);
      open_event(out, event, 'b', event.start_ns, pid);
      out += id + ',';
      append_args(out, event);
      out += "},\n";
      open_event(out, event, 'e', event.end_ns, pid);
      out += id + '}';
    } else {
      open_event(out, event, 'X', event.start_ns, pid);
      out += R"(,"dur":)";
      append_microseconds(out, event.end_ns - event.start_ns);
      out += ',';
      append_args(out, event);
      out += '}';
    }
  }
  out += R"(],"displayTimeUnit":"ns"})";
  out += '\n';
  return out;
}

int64_t process_id() noexcept { return static_cast<int64_t>(getpid()); }

}  // namespace strideweave::profiling
