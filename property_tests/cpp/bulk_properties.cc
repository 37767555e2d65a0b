// Properties of the span walker, the strided copy kernel and the range entry
// points for any generated layout and offset (spec/carrier-storage).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstring>

#include "layout_generators.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/layout/runs.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace strideweave::proptest {
namespace {

// A carrier of class CPU or Generic holding `slots` distinct Int32 values.
std::shared_ptr<Carrier> distinct_carrier(bool cpu, int64_t slots) {
  std::vector<Value> values;
  for (int64_t i = 0; i < slots; ++i) values.emplace_back(i * 7 + 1);
  if (cpu) return std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
  return std::make_shared<Generic>(DType::Int32(), std::nullopt, values);
}

RC_GTEST_PROP(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
              clause3__runs_cover_the_image_in_order, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 9);
  const std::vector<Run> found = runs(layout, offset);
  std::vector<int64_t> covered;
  for (std::size_t k = 0; k < found.size(); ++k) {
    RC_ASSERT(found[k].count > 0);
    if (k > 0) RC_ASSERT(found[k - 1].first + found[k - 1].count != found[k].first);
    for (int64_t i = 0; i < found[k].count; ++i) covered.push_back(found[k].first + i);
  }
  std::vector<int64_t> expected;
  if (layout.size() > 0) {
    for (int64_t index : all_indices(without_broadcast_modes(layout))) {
      expected.push_back(offset + index);
    }
  }
  RC_ASSERT(covered == expected);
  const RunPlan plan(layout, offset);
  RC_ASSERT(plan.size() == static_cast<int64_t>(expected.size()));
  if (plan.is_one_run()) {  // told without the walk: [offset, offset + size())
    RC_ASSERT(found.size() == 1u);
    RC_ASSERT(found[0].first == offset && found[0].count == plan.size());
  }
  for (int64_t i = 0; i < layout.size(); ++i) {
    RC_ASSERT(covered[static_cast<std::size_t>(plan.image_layout()(i))] == offset + layout(i));
  }
}

RC_GTEST_PROP(StorageOrder, reaches_the_same_indices_as_often, ()) {
  const Layout layout = *gen_layout();
  const Layout footprint = storage_order(layout);
  if (layout.size() == 0) {
    RC_ASSERT(footprint == layout);
    return;
  }
  std::vector<int64_t> expected = all_indices(without_broadcast_modes(layout));
  std::vector<int64_t> found = all_indices(footprint);
  std::sort(expected.begin(), expected.end());
  std::sort(found.begin(), found.end());
  RC_ASSERT(found == expected);
  const std::vector<LeafMode>& modes = footprint.leaf_modes();
  for (std::size_t k = 0; k < modes.size(); ++k) {
    RC_ASSERT(modes[k].stride != 0);
    RC_ASSERT(modes[k].extent > 1);
    if (k > 0) RC_ASSERT(modes[k - 1].stride <= modes[k].stride);
  }
  RC_ASSERT(footprint == layout || footprint.depth() <= 1);
  // In storage order an injective layout's walk is one run exactly when the plan says so
  // without walking it (a move's copy relies on it: copy_staged).
  if (layout.is_injective()) {
    RC_ASSERT(RunPlan(footprint, 3).is_one_run() == (runs(footprint, 3).size() == 1u));
  }
}

RC_GTEST_PROP(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
              clause2__the_strided_copy_equals_the_element_wise_copy, ()) {
  // Into a generated injective layout of the same leaf extents, into the
  // compact column-major one, or into the source's own layout (a move's
  // footprint on both sides); parallel_copy_strided, which copies one run of
  // consecutive items on both sides with one memcpy, writes the same bytes.
  const Layout src = *gen_layout();
  const int target = *rc::gen::inRange(0, 3);
  Layout dst =
      target == 0 ? src
                  : Layout(src.shape(), unflatten(pick_strides(src.shape().leaves()), src.shape()));
  if (target == 2 || !dst.is_injective()) dst = compact_col_major(src.shape());
  const std::size_t itemsize = *rc::gen::element<std::size_t>(1, 2, 4, 8, 12);
  const int64_t src_offset = *rc::gen::inRange<int64_t>(0, 5);
  const int64_t dst_offset = *rc::gen::inRange<int64_t>(0, 5);
  std::vector<std::byte> from(static_cast<std::size_t>(src_offset + src.cosize()) * itemsize);
  for (std::size_t b = 0; b < from.size(); ++b) from[b] = static_cast<std::byte>(b * 31 + 7);
  const std::size_t to_bytes = static_cast<std::size_t>(dst_offset + dst.cosize()) * itemsize;
  std::vector<std::byte> to(to_bytes, std::byte{0xEE});
  std::vector<std::byte> expected = to;
  for (int64_t i = 0; i < src.size(); ++i) {
    std::memcpy(expected.data() + static_cast<std::size_t>(dst_offset + dst(i)) * itemsize,
                from.data() + static_cast<std::size_t>(src_offset + src(i)) * itemsize, itemsize);
  }
  std::vector<std::byte> split = to;
  copy_strided(from.data(), src, src_offset, to.data(), dst, dst_offset, itemsize);
  RC_ASSERT(to == expected);
  parallel_copy_strided(from.data(), src, src_offset, split.data(), dst, dst_offset, itemsize);
  RC_ASSERT(split == expected);
}

RC_GTEST_PROP(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
              clause2__the_split_strided_copy_equals_the_serial_kernel, ()) {
  // A generated pair of layouts under an outer mode long enough that the copy
  // moves more than parallel_copy_strided's split (512 KiB): whether it splits
  // the outer mode, splits one merged run or stays serial, it writes the bytes
  // the serial kernel writes.
  const Layout inner = *gen_layout();
  RC_PRE(inner.size() > 0);
  const Layout inner_dst = *rc::gen::element(
      compact_col_major(inner.shape()),
      Layout(inner.shape(), unflatten(pick_strides(inner.shape().leaves()), inner.shape())));
  const std::size_t itemsize = *rc::gen::element<std::size_t>(1, 4, 8);
  const int64_t bytes = inner.size() * static_cast<int64_t>(itemsize);
  const int64_t outer = (2 * kParallelCopyGrain + bytes - 1) / bytes + *rc::gen::inRange(0, 3);
  const int64_t src_step = inner.cosize() + *rc::gen::inRange<int64_t>(0, 3);
  // Step 1 overlaps the outer mode's items: a destination that is not injective.
  const int64_t dst_step =
      *rc::gen::element<int64_t>(inner_dst.cosize(), inner_dst.cosize() + 2, 1);
  const Layout src(IntTuple::tuple({inner.shape(), IntTuple(outer)}),
                   IntTuple::tuple({inner.stride(), IntTuple(src_step)}));
  const Layout dst(IntTuple::tuple({inner_dst.shape(), IntTuple(outer)}),
                   IntTuple::tuple({inner_dst.stride(), IntTuple(dst_step)}));
  const int64_t src_offset = *rc::gen::inRange<int64_t>(0, 5);
  std::vector<std::byte> from(static_cast<std::size_t>(src_offset + src.cosize()) * itemsize);
  for (std::size_t b = 0; b < from.size(); ++b) from[b] = static_cast<std::byte>(b * 31 + 7);
  const std::size_t to_bytes = static_cast<std::size_t>(dst.cosize()) * itemsize;
  std::vector<std::byte> expected(to_bytes, std::byte{0xEE});
  std::vector<std::byte> got = expected;
  copy_strided(from.data(), src, src_offset, expected.data(), dst, 0, itemsize);
  parallel_copy_strided(from.data(), src, src_offset, got.data(), dst, 0, itemsize);
  // Equal even where the destination is not injective: such a copy stays on
  // the calling thread, in the serial kernel's order.
  RC_ASSERT(got == expected);
}

RC_GTEST_PROP(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
              clause1__bulk_reads_equal_the_per_element_reads, ()) {
  const Layout layout = *gen_layout();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 9);
  const bool cpu = *rc::gen::arbitrary<bool>();
  auto carrier = distinct_carrier(cpu, offset + layout.cosize() + *rc::gen::inRange<int64_t>(0, 4));
  const auto tensor = Tensor::make(carrier, layout, offset);
  const std::vector<Value> values = tensor->values();
  const Layout nested = compact_row_major(layout.shape());
  std::vector<std::byte> items(static_cast<std::size_t>(layout.size()) * 4);
  tensor->read_into(items, nested);
  RC_ASSERT(static_cast<int64_t>(values.size()) == layout.size());
  for (int64_t i = 0; i < layout.size(); ++i) {
    const Value expected = carrier->read(offset + layout(i));
    RC_ASSERT(values[static_cast<std::size_t>(i)] == expected);
    int32_t item = 0;
    std::memcpy(&item, items.data() + static_cast<std::size_t>(nested(i)) * 4, 4);
    RC_ASSERT(static_cast<int64_t>(item) == std::get<int64_t>(expected));
  }
  RC_ASSERT(carrier->version() == 0u);
}

RC_GTEST_PROP(carrier_storage__range_entry_points_read_and_write_consecutive_slots,
              clause8__ranges_round_trip_and_count_once, ()) {
  const int64_t slots = *rc::gen::inRange<int64_t>(0, 40);
  auto carrier = distinct_carrier(*rc::gen::arbitrary<bool>(), slots);
  const int64_t first = *rc::gen::inRange<int64_t>(0, slots + 1);
  const int64_t count = *rc::gen::inRange<int64_t>(0, slots - first + 1);
  std::vector<Value> before = carrier->read_range_values(0, slots);
  std::vector<Value> written;
  for (int64_t i = 0; i < count; ++i) written.emplace_back(int64_t{-1000} - i);
  const bool encoded = *rc::gen::arbitrary<bool>();
  if (encoded) {
    std::vector<int32_t> raw;
    for (const Value& v : written) raw.push_back(static_cast<int32_t>(std::get<int64_t>(v)));
    carrier->write_range(first, std::as_bytes(std::span<const int32_t>(raw)));
  } else {
    carrier->write_range_values(first, written);
  }
  RC_ASSERT(carrier->version() == 1u);
  RC_ASSERT(carrier->read_range_values(first, count) == written);
  const std::vector<std::byte> bytes = carrier->read_range(first, count);
  RC_ASSERT(bytes.size() == static_cast<std::size_t>(count) * 4);
  std::copy(written.begin(), written.end(), before.begin() + first);
  RC_ASSERT(carrier->read_range_values(0, slots) == before);
  const std::vector<Value> too_many(static_cast<std::size_t>(slots - first + 1), Value{int64_t{0}});
  RC_ASSERT_THROWS_AS(carrier->write_range_values(first, too_many), IndexError);
  RC_ASSERT(carrier->version() == 1u);
  RC_ASSERT(carrier->read_range_values(0, slots) == before);
}

}  // namespace
}  // namespace strideweave::proptest
