// Range entry points and consistent bulk reads (spec/carrier-storage).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::vector<std::byte> floats(std::initializer_list<float> xs) {
  std::vector<std::byte> out(xs.size() * sizeof(float));
  std::memcpy(out.data(), std::data(xs), out.size());
  return out;
}

TEST(carrier_storage__range_entry_points_read_and_write_consecutive_slots, write_and_read_a_range) {
  for (const std::shared_ptr<Carrier>& c :
       {std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Float32(), 6)),
        std::shared_ptr<Carrier>(std::make_shared<Generic>(DType::Float32(), 6))}) {
    c->write_range(1, floats({1.5f, 2.0f, 3.0f}));
    EXPECT_EQ(c->version(), 1u);
    EXPECT_EQ(c->read_range(0, 6), floats({0, 1.5f, 2, 3, 0, 0}));
    std::vector<std::byte> out(8);
    c->read_range(2, 2, out);
    EXPECT_EQ(out, floats({2, 3}));
    EXPECT_EQ(std::get<double>(c->read_range_values(1, 1)[0]), 1.5);
    EXPECT_EQ(c->version(), 1u);
  }
}

TEST(carrier_storage__range_entry_points_read_and_write_consecutive_slots,
     clause3__refuse_encoded_ranges_of_an_abstract_dtype) {
  auto g = std::make_shared<Generic>(DType::Floating(), 2);
  const std::string m = message_of<TypeError>([&] { g->read_range(0, 2); });
  EXPECT_NE(m.find(g->label()), std::string::npos) << m;
  EXPECT_NE(m.find("Floating"), std::string::npos) << m;
  EXPECT_THROW(g->write_range(0, floats({1})), TypeError);
  EXPECT_EQ(g->version(), 0u);
  const std::vector<Value> values{0.1, 0.2};
  g->write_range_values(0, values);
  EXPECT_EQ(g->read_range_values(0, 2), values);
}

TEST(carrier_storage__range_entry_points_read_and_write_consecutive_slots,
     refuse_a_range_out_of_bounds) {
  auto c = std::make_shared<CPU>(DType::Float32(), 6);
  const std::string m = message_of<IndexError>([&] { c->write_range(4, floats({1, 2, 3})); });
  EXPECT_NE(m.find("[4, 4 + 3)"), std::string::npos) << m;
  EXPECT_NE(m.find("6 slots"), std::string::npos) << m;
  EXPECT_THROW(c->read_range(0, -1), ValueError);
  EXPECT_THROW(c->write_range(0, std::vector<std::byte>(3)), ValueError);
  EXPECT_EQ(c->version(), 0u);
  EXPECT_EQ(c->read_range(0, 6), floats({0, 0, 0, 0, 0, 0}));
}

TEST(carrier_storage__range_entry_points_read_and_write_consecutive_slots,
     refuse_values_without_changing_a_slot) {
  auto b = std::make_shared<CPU>(DType::Bool(), 3);
  const std::vector<std::byte> bad{std::byte{1}, std::byte{0}, std::byte{2}};
  const std::string m = message_of<ValueError>([&] { b->write_range(0, bad); });
  EXPECT_NE(m.find("item 2"), std::string::npos) << m;
  auto i = std::make_shared<Generic>(DType::Int32(), 2);
  const std::vector<Value> values{int64_t{1}, 2.5};
  EXPECT_THROW(i->write_range_values(0, values), TypeError);
  EXPECT_EQ(b->version() + i->version(), 0u);
  EXPECT_EQ(std::get<int64_t>(i->read(0)), 0);
  EXPECT_FALSE(std::get<bool>(b->read(0)));
}

TEST(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
     read_a_consistent_snapshot) {
  constexpr int64_t kSlots = 4096;
  auto c = std::make_shared<CPU>(DType::Int32(), kSlots);
  const auto tensor = Tensor::make(c, Layout(IntTuple::tuple({64, 64}), IntTuple::tuple({64, 1})));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::vector<int32_t> fill(kSlots);
    for (int32_t round = 1; !stop; ++round) {
      std::fill(fill.begin(), fill.end(), round);
      c->write_range(0, std::as_bytes(std::span<const int32_t>(fill)));
    }
  });
  for (int k = 0; k < 200; ++k) {
    std::vector<std::byte> out(kSlots * 4);
    tensor->read_into(out, Layout(IntTuple::tuple({64, 64})));
    std::vector<int32_t> seen(kSlots);
    std::memcpy(seen.data(), out.data(), out.size());
    ASSERT_EQ(std::count(seen.begin(), seen.end(), seen.front()), kSlots) << "torn read " << k;
    const std::vector<Value> values = tensor->values();
    ASSERT_EQ(std::count(values.begin(), values.end(), values.front()), kSlots)
        << "torn values " << k;
  }
  stop = true;
  writer.join();
}

// A Generic that counts the slots its range hooks read.
class CountingGeneric : public Generic {
 public:
  using Generic::Generic;
  mutable std::vector<int64_t> reads;

 protected:
  void do_read_values(int64_t first, int64_t count, Value* out) const override {
    for (int64_t i = 0; i < count; ++i) reads.push_back(first + i);
    Generic::do_read_values(first, count, out);
  }
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override {
    for (int64_t i = 0; i < count; ++i) reads.push_back(first + i);
    Generic::do_read_range(first, count, out);
  }
};

TEST(carrier_storage__bulk_reads_take_one_snapshot_through_the_span_walker,
     read_a_broadcast_once_per_stored_slot) {
  auto c = std::make_shared<CountingGeneric>(
      DType::Int32(), std::nullopt, std::vector<Value>{int64_t{9}, int64_t{1}, int64_t{2}});
  // (3, 4):(1, 0) at offset 1 broadcasts slots 1 and 2... over 4 columns.
  const auto t = Tensor::make(c, Layout(IntTuple::tuple({2, 4}), IntTuple::tuple({1, 0})), 1);
  const std::vector<Value> values = t->values();
  EXPECT_EQ(c->reads, (std::vector<int64_t>{1, 2}));
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(std::get<int64_t>(values[static_cast<std::size_t>(2 * k)]), 1);
    EXPECT_EQ(std::get<int64_t>(values[static_cast<std::size_t>(2 * k + 1)]), 2);
  }
  c->reads.clear();
  std::vector<std::byte> out(8 * 4);
  t->read_into(out, Layout(IntTuple::tuple({2, 4}), IntTuple::tuple({4, 1})));
  EXPECT_EQ(c->reads, (std::vector<int64_t>{1, 2}));
  std::vector<int32_t> items(8);
  std::memcpy(items.data(), out.data(), out.size());
  EXPECT_EQ(items, (std::vector<int32_t>{1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(c->version(), 0u);
}

}  // namespace
}  // namespace strideweave
