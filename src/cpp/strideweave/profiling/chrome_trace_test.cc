#include "strideweave/profiling/chrome_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strideweave::profiling {
namespace {

Event event(EventKind kind, std::string name, int64_t start_ns, int64_t end_ns) {
  Event e;
  e.kind = kind;
  e.name = std::move(name);
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.thread_id = 7;
  e.correlation_id = 42;
  e.dtype = "Float32";
  e.carrier_classes = {"CPU"};
  e.shapes = {IntTuple::tuple({2, 3})};
  return e;
}

TEST(ChromeTrace, writes_complete_events_and_async_slices) {
  const std::string json =
      chrome_trace_json({event(EventKind::kOperation, "add", 1'500, 4'250),
                         event(EventKind::kCompletion, "route \"x\"\n", 2'000'001, 3'000'000)},
                        99);
  EXPECT_EQ(json,
            R"J({"traceEvents":[{"name":"add","cat":"operation","ph":"X","ts":1.500,"pid":99,)J"
            R"J("tid":7,"dur":2.750,"args":{"kind":"operation","correlation_id":42,)J"
            R"J("carrier_classes":["CPU"],"shapes":["(2,3)"],"dtype":"Float32"}},)J"
            "\n"
            R"J({"name":"route \"x\"\n","cat":"move","ph":"b","ts":2000.001,"pid":99,"tid":7,)J"
            R"J("id":42,"args":{"kind":"completion","correlation_id":42,)J"
            R"J("carrier_classes":["CPU"],"shapes":["(2,3)"],"dtype":"Float32"}},)J"
            "\n"
            R"J({"name":"route \"x\"\n","cat":"move","ph":"e","ts":3000.000,"pid":99,"tid":7,)J"
            R"J("id":42}],"displayTimeUnit":"ns"})J"
            "\n");
}

TEST(ChromeTrace, escapes_control_characters) {
  const std::string json = chrome_trace_json({event(EventKind::kSubmission, "a\x01", 0, 0)}, 1);
  EXPECT_NE(json.find(R"("name":"a\u0001")"), std::string::npos);
  EXPECT_NE(json.find(R"("ph":"X")"), std::string::npos);
  EXPECT_NE(json.find(R"("cat":"move")"), std::string::npos);
}

}  // namespace
}  // namespace strideweave::profiling
