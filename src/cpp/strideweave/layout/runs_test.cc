#include "strideweave/layout/runs.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

using Runs = std::vector<strideweave::Run>;

IntTuple T(std::vector<IntTuple> e) { return IntTuple::tuple(std::move(e)); }

TEST(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
     clause3__runs_of_example_layouts) {
  // Compact: one run.
  EXPECT_EQ(runs(Layout(T({2, 3})), 5), (Runs{{5, 6}}));
  // Row-major over a column-major walk: one slot per run.
  EXPECT_EQ(runs(Layout(T({2, 2}), T({2, 1})), 0), (Runs{{0, 1}, {2, 1}, {1, 1}, {3, 1}}));
  // Holes: runs of the contiguous first mode.
  EXPECT_EQ(runs(Layout(T({2, 3}), T({1, 3})), 1), (Runs{{1, 2}, {4, 2}, {7, 2}}));
  // Broadcast modes are dropped: each stored slot once.
  EXPECT_EQ(runs(Layout(T({4, 3}), T({0, 1})), 2), (Runs{{2, 3}}));
  EXPECT_EQ(runs(Layout(T({3, 4}), T({1, 0})), 0), (Runs{{0, 3}}));
  // Runs adjacent across a carry of the odometer merge.
  EXPECT_EQ(runs(Layout(T({2, 2, 2}), T({1, 4, 6})), 0), (Runs{{0, 2}, {4, 4}, {10, 2}}));
  // Empty layouts have no runs; a rank-0 layout has one slot.
  EXPECT_TRUE(runs(Layout(T({0, 3})), 0).empty());
  EXPECT_TRUE(runs(Layout(T({3, 0}), T({0, 1})), 0).empty());
  EXPECT_EQ(runs(Layout(T({})), 4), (Runs{{4, 1}}));
}

TEST(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
     clause2__the_kernel_transposes_and_broadcasts) {
  std::array<int32_t, 6> src{0, 1, 2, 3, 4, 5};
  std::array<int32_t, 6> dst{};
  // (2,3) row-major source into a column-major destination.
  copy_strided(reinterpret_cast<const std::byte*>(src.data()), Layout(T({2, 3}), T({3, 1})), 0,
               reinterpret_cast<std::byte*>(dst.data()), Layout(T({2, 3})), 0, sizeof(int32_t));
  EXPECT_EQ(dst, (std::array<int32_t, 6>{0, 3, 1, 4, 2, 5}));
  // One stored item broadcast to every destination item.
  copy_strided(reinterpret_cast<const std::byte*>(src.data() + 5), Layout(T({2, 3}), T({0, 0})), 0,
               reinterpret_cast<std::byte*>(dst.data()), Layout(T({2, 3})), 0, sizeof(int32_t));
  EXPECT_EQ(dst, (std::array<int32_t, 6>{5, 5, 5, 5, 5, 5}));
  // Nesting may differ when the leaf extents agree.
  copy_strided(reinterpret_cast<const std::byte*>(src.data()), Layout(T({2, T({3})})), 0,
               reinterpret_cast<std::byte*>(dst.data()), Layout(T({2, 3}), T({1, 2})), 0,
               sizeof(int32_t));
  EXPECT_EQ(dst, src);
}

TEST(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
     clause2__the_kernel_refuses_other_leaf_extents) {
  std::array<std::byte, 24> src{};
  std::array<std::byte, 24> dst{};
  const std::string m = message_of<ValueError>(
      [&] { copy_strided(src.data(), Layout(T({2, 3})), 0, dst.data(), Layout(T({3, 2})), 0, 4); });
  EXPECT_NE(m.find("(2,3):(1,2)"), std::string::npos) << m;
  EXPECT_NE(m.find("(3,2):(1,3)"), std::string::npos) << m;
}

TEST(StorageOrder, sorts_the_reaching_modes_by_stride) {
  // A transposed compact layout is one run in storage order.
  const Layout transposed = storage_order(Layout(T({4, 8}), T({8, 1})));
  EXPECT_EQ(transposed.to_string(), "(8,4):(1,8)");
  EXPECT_EQ(runs(transposed, 3), (Runs{{3, 32}}));
  EXPECT_TRUE(RunPlan(transposed, 3).is_one_run());                     // told without walking
  EXPECT_FALSE(RunPlan(Layout(T({2, 3}), T({1, 3})), 0).is_one_run());  // holes
  EXPECT_FALSE(RunPlan(Layout(T({2, 0})), 0).is_one_run());             // empty
  // Nesting flattens; stride-0 and extent-1 modes drop; equal strides keep tree order.
  EXPECT_EQ(storage_order(Layout(T({2, T({3, 1, 5})}), T({6, T({0, 4, 1})}))).to_string(),
            "(5,2):(1,6)");
  EXPECT_EQ(storage_order(Layout(T({2, 3}), T({2, 2}))).to_string(), "(2,3):(2,2)");
  // Every mode dropped: the one slot a rank-0 layout reaches; empty layouts unchanged.
  EXPECT_EQ(storage_order(Layout(T({3, 4}), T({0, 0}))).to_string(), "():()");
  EXPECT_EQ(runs(storage_order(Layout(T({3, 4}), T({0, 0}))), 2), (Runs{{2, 1}}));
  const Layout empty(T({2, 0}), T({5, 1}));
  EXPECT_EQ(storage_order(empty), empty);
  // Already in storage order: the layout itself, nesting kept.
  const Layout nested(T({2, T({3, 4})}));
  EXPECT_EQ(storage_order(nested), nested);
}

TEST(CompactRowMajor, nested_list_order) {
  EXPECT_EQ(compact_row_major(T({2, T({3, 4})})).to_string(), "(2,(3,4)):(12,(4,1))");
  EXPECT_EQ(compact_row_major(IntTuple(5)).to_string(), "5:1");
}

}  // namespace
}  // namespace strideweave
