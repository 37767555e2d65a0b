#include "strideweave/profiling/key_averages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strideweave::profiling {
namespace {

Event event(EventKind kind, std::string name, int64_t duration_ns) {
  Event e;
  e.kind = kind;
  e.name = std::move(name);
  e.start_ns = 1000;
  e.end_ns = 1000 + duration_ns;
  return e;
}

TEST(KeyAverages, groups_by_kind_and_name_by_total_descending) {
  const std::vector<KeyAverage> rows = key_averages({
      event(EventKind::kOperation, "add", 10),
      event(EventKind::kOperation, "mul", 100),
      event(EventKind::kOperation, "add", 30),
      event(EventKind::kSubmission, "add", 5),
  });
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "mul");
  EXPECT_EQ(rows[1].name, "add");
  EXPECT_EQ(rows[1].kind, EventKind::kOperation);
  EXPECT_EQ(rows[1].count, 2);
  EXPECT_EQ(rows[1].total_ns, 40);
  EXPECT_EQ(rows[1].min_ns, 10);
  EXPECT_EQ(rows[1].max_ns, 30);
  EXPECT_DOUBLE_EQ(rows[1].mean_ns(), 20.0);
  EXPECT_EQ(rows[2].kind, EventKind::kSubmission);
  EXPECT_EQ(rows[2].count, 1);
}

TEST(KeyAverages, formats_a_table) {
  const std::string table = key_averages_table(key_averages({
      event(EventKind::kOperation, "add", 1'500),
      event(EventKind::kOperation, "add", 2'500'000),
  }));
  EXPECT_EQ(table,
            "Name  Kind       Calls    Total     Mean      Min      Max\n"
            "----------------------------------------------------------\n"
            "add   operation      2  2.502ms  1.251ms  1.500us  2.500ms\n"
            "----------------------------------------------------------\n");
}

}  // namespace
}  // namespace strideweave::profiling
