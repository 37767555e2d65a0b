#include "strideweave/carrier/carrier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/util/error.h"
#include "strideweave/util/mapped_memory.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

TEST(carrier_storage__a_carrier_holds_slots_of_one_dtype, allocate_slots_at_construction) {
  auto c = std::make_shared<CPU>(DType::Float32(), 6);
  EXPECT_EQ(c->slots(), 6);
  EXPECT_EQ(c->version(), 0u);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(std::get<double>(c->read(i)), 0.0);
}

TEST(carrier_storage__a_carrier_holds_slots_of_one_dtype, reject_a_malformed_construction) {
  EXPECT_THROW(Generic(DType::Int32(), -1), ValueError);
  const std::string m =
      message_of<ValueError>([] { Generic(DType::Int32(), 2, std::vector<Value>{int64_t{1}}); });
  EXPECT_NE(m.find("n=2"), std::string::npos) << m;
}

TEST(carrier_storage__entry_points_read_and_write_slots_and_count_mutations, count_a_write) {
  auto c = std::make_shared<Generic>(DType::Int32(), 3);
  c->write(1, int64_t{42});
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(std::get<int64_t>(c->read(1)), 42);
  c->read(1);
  EXPECT_EQ(c->version(), 1u);
}

TEST(carrier_storage__entry_points_read_and_write_slots_and_count_mutations,
     keep_the_version_on_a_failed_write) {
  auto c = std::make_shared<CPU>(DType::Int32(), 3);
  const std::string m = message_of<IndexError>([&] { c->write(3, int64_t{1}); });
  EXPECT_NE(m.find("slot 3"), std::string::npos) << m;
  EXPECT_NE(m.find("3 slots"), std::string::npos) << m;
  EXPECT_THROW(c->write(0, 1.5), TypeError);
  EXPECT_EQ(c->version(), 0u);
  EXPECT_EQ(std::get<int64_t>(c->read(0)), 0);
}

TEST(carrier_storage__version_tokens_compare_equal_while_nothing_changed,
     compare_tokens_across_a_write) {
  auto c = std::make_shared<CPU>(DType::Float32(), 2);
  const VersionToken a = c->version_token();
  c->read(0);
  const VersionToken b = c->version_token();
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a.is_current());
  c->write(0, 1.0);
  EXPECT_FALSE(a.is_current());
  EXPECT_FALSE(a == c->version_token());
}

TEST(carrier_storage__version_tokens_compare_equal_while_nothing_changed, tell_carriers_apart) {
  auto a = std::make_shared<CPU>(DType::Float32(), 2);
  auto b = std::make_shared<CPU>(DType::Float32(), 2);
  EXPECT_FALSE(a->version_token() == b->version_token());
}

TEST(carrier_storage__an_empty_carrier_can_be_allocated_once, allocate_an_empty_carrier) {
  auto c = std::make_shared<CPU>(DType::Int32());
  EXPECT_EQ(c->slots(), 0);
  c->allocate(4);
  EXPECT_EQ(c->slots(), 4);
  EXPECT_EQ(c->version(), 1u);
}

TEST(carrier_storage__an_empty_carrier_can_be_allocated_once, refuse_to_reallocate) {
  auto c = std::make_shared<Generic>(DType::Int32(), 2);
  EXPECT_THROW(c->allocate(4), RuntimeError);
  EXPECT_EQ(c->slots(), 2);
  EXPECT_EQ(c->version(), 0u);
}

TEST(carrier_storage__release_relinquishes_storage_once, release_twice) {
  auto c = std::make_shared<CPU>(DType::Float32(), 2);
  c->write(0, 1.0);
  c->release();
  c->release();
  EXPECT_TRUE(c->is_released());
  EXPECT_EQ(c->slots(), 0);
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(c->dlpack_info().pointer, 0u);
  const std::string m = message_of<RuntimeError>([&] { c->read(0); });
  EXPECT_NE(m.find("released"), std::string::npos) << m;
  EXPECT_THROW(c->data(), RuntimeError);
}

TEST(carrier_storage__public_mutability_follows_construction_and_ownership,
     own_and_relinquish_a_carrier) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32(), 1);
  owner->take_ownership(*owned);
  EXPECT_FALSE(owned->is_mutable());
  EXPECT_EQ(owned->owner(), owner);
  const std::string m = message_of<RuntimeError>([&] { owned->write(0, int64_t{1}); });
  EXPECT_NE(m.find("owned by"), std::string::npos) << m;
  owner->relinquish(*owned);
  EXPECT_TRUE(owned->is_mutable());
  EXPECT_THROW(owner->relinquish(*owned), ValueError);
  EXPECT_THROW(owner->take_ownership(*owner), ValueError);
}

TEST(carrier_storage__public_mutability_follows_construction_and_ownership,
     clause6__an_ownership_cycle_is_refused) {
  // a owns b, b owns c: neither b nor c may take a, nor c take b.
  auto a = std::make_shared<CPU>(DType::Int32(), 1);
  auto b = std::make_shared<Generic>(DType::Int32(), 1);
  auto c = std::make_shared<CPU>(DType::Int32(), 1);
  a->take_ownership(*b);
  b->take_ownership(*c);
  for (const auto& [taker, taken] : {std::pair<Carrier*, Carrier*>{b.get(), a.get()},
                                     std::pair<Carrier*, Carrier*>{c.get(), a.get()},
                                     std::pair<Carrier*, Carrier*>{c.get(), b.get()}}) {
    const std::string m = message_of<ValueError>([&] { taker->take_ownership(*taken); });
    EXPECT_NE(m.find(taker->label() + " cannot take ownership of " + taken->label() +
                     ", which owns " + taker->label()),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(a->owner(), nullptr);
  EXPECT_EQ(b->owner(), a);
  EXPECT_EQ(c->owner(), b);
}

TEST(carrier_storage__new_like_creates_an_empty_carrier_of_the_same_exact_class,
     create_a_like_carrier_from_a_released_carrier) {
  auto c = std::make_shared<CPU>(DType::Int32(), 3, std::nullopt, false);
  c->release();
  const std::shared_ptr<Carrier> like = c->new_like();
  EXPECT_EQ(&like->carrier_class(), &CPU::static_class());
  EXPECT_EQ(like->slots(), 0);
  EXPECT_TRUE(like->is_mutable());
  EXPECT_EQ(like->dtype(), DType::Int32());
}

TEST(carrier_storage__cpu_stores_slots_in_an_aligned_host_buffer, expose_the_aligned_buffer) {
  auto c = std::make_shared<CPU>(DType::Float32(), 4);
  c->write(1, 2.5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c->data()) % CPU::kAlignment, 0u);
  float stored = 0;
  std::memcpy(&stored, c->data() + 4, sizeof stored);
  EXPECT_EQ(stored, 2.5f);
  EXPECT_EQ(c->dlpack_info().pointer, reinterpret_cast<uint64_t>(c->data()));
  EXPECT_EQ(c->dlpack_info().device_type, kDLPackDeviceCPU);
}

TEST(carrier_storage__cpu_stores_slots_in_an_aligned_host_buffer,
     clause1__a_large_buffer_is_aligned_and_reads_zero) {
  const auto mapped = static_cast<int64_t>(kMappedBytes / sizeof(int32_t)) + 3;
  for (const int64_t n : {int64_t{5}, mapped}) {
    auto constructed = std::make_shared<CPU>(DType::Int32(), n);
    auto allocated = std::make_shared<CPU>(DType::Int32());
    allocated->allocate(n);
    for (const auto& c : {constructed, allocated}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(c->data()) % CPU::kAlignment, 0u);
      const std::vector<std::byte> bytes = c->read_range(0, n);
      EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) {
        return b == std::byte{0};
      })) << n;
      c->write(n - 1, int64_t{-7});
      EXPECT_EQ(std::get<int64_t>(c->read(n - 1)), -7);
      c->release();
      EXPECT_TRUE(c->is_released());
    }
  }
}

TEST(carrier_storage__cpu_stores_slots_in_an_aligned_host_buffer, reject_an_abstract_dtype) {
  const std::string m = message_of<TypeError>([] { CPU(DType::Floating(), 2); });
  EXPECT_NE(m.find("CPU"), std::string::npos) << m;
  EXPECT_NE(m.find("Floating"), std::string::npos) << m;
}

TEST(carrier_storage__carriers_opt_into_dlpack_through_the_dlpack_info_hook, refuse_by_default) {
  const Generic g(DType::Float32(), 1);
  const std::string m = message_of<BufferError>([&] { g.dlpack_info(); });
  EXPECT_NE(m.find("Generic"), std::string::npos) << m;
}

TEST(carrier_storage__generic_stores_elements_of_any_dtype_without_a_pointer,
     store_abstract_dtype_values) {
  auto any = std::make_shared<Generic>(DType::Any(), 3);
  any->write(0, true);
  any->write(1, int64_t{7});
  any->write(2, 2.5);
  EXPECT_EQ(std::get<bool>(any->read(0)), true);
  EXPECT_EQ(std::get<int64_t>(any->read(1)), 7);
  EXPECT_EQ(std::get<double>(any->read(2)), 2.5);
}

TEST(carrier_storage__every_carrier_class_has_an_exact_runtime_class_descriptor,
     requirement__builtin_descriptors) {
  EXPECT_EQ(CPU::static_class().parent(), &Carrier::static_class());
  EXPECT_EQ(Generic::static_class().parent(), &Carrier::static_class());
  EXPECT_NE(&CPU::static_class(), &Generic::static_class());
  EXPECT_TRUE(CPU::static_class().is_subclass_of(Carrier::static_class()));
  EXPECT_FALSE(CPU::static_class().is_subclass_of(Generic::static_class()));
}

// gather: the bulk read behind copies (core-tensor-representation, __array__).
TEST(core_tensor_representation__numpy_reads_a_tensor_through_the_array_protocol,
     clause7__gather_reads_a_window_under_one_call) {
  std::vector<Value> values;
  for (int64_t i = 0; i < 20; ++i) values.emplace_back(static_cast<double>(i) + 0.5);
  const Layout holes(IntTuple::tuple({2, 3, 2}), IntTuple::tuple({1, 4, 0}));
  for (std::shared_ptr<Carrier> c :
       {std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Float32(), std::nullopt, values)),
        std::shared_ptr<Carrier>(
            std::make_shared<Generic>(DType::Float32(), std::nullopt, values))}) {
    std::vector<float> out(static_cast<std::size_t>(holes.size()));
    c->gather(holes, 3, reinterpret_cast<std::byte*>(out.data()));
    for (int64_t i = 0; i < holes.size(); ++i) {
      EXPECT_EQ(out[static_cast<std::size_t>(i)], static_cast<float>(3 + holes(i)) + 0.5f);
    }
    EXPECT_EQ(c->version(), 0u);
  }
}

TEST(core_tensor_representation__numpy_reads_a_tensor_through_the_array_protocol,
     clause7__gather_refuses_what_it_cannot_read) {
  auto c = std::make_shared<CPU>(DType::Int32(), 4);
  std::vector<int32_t> out(8);
  auto* dst = reinterpret_cast<std::byte*>(out.data());
  const std::string window = message_of<IndexError>([&] { c->gather(Layout(4), 1, dst); });
  EXPECT_NE(window.find("4 slots of " + c->label()), std::string::npos) << window;
  c->gather(Layout(0), 9, dst);  // nothing to read
  auto any = std::make_shared<Generic>(DType::Any(), 2);
  const std::string abstract = message_of<TypeError>([&] { any->gather(Layout(2), 0, dst); });
  EXPECT_NE(abstract.find("Any"), std::string::npos) << abstract;
  c->release();
  const std::string released = message_of<RuntimeError>([&] { c->gather(Layout(1), 0, dst); });
  EXPECT_NE(released.find(c->label()), std::string::npos) << released;
}

TEST(carrier_storage__a_carrier_holds_slots_of_one_dtype, refuse_storage_that_cannot_exist) {
  constexpr int64_t n = int64_t{1} << 62;
  const std::string cpu = message_of<MemoryError>([&] { CPU(DType::Bool(), n); });
  EXPECT_NE(cpu.find("CPU"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("4611686018427387904 slots of Bool"), std::string::npos) << cpu;
  const std::string generic = message_of<MemoryError>([&] { Generic(DType::Float32(), n); });
  EXPECT_NE(generic.find("Generic: cannot allocate 4611686018427387904 slots"), std::string::npos)
      << generic;
  const std::string too_big = message_of<ValueError>([&] { CPU(DType::Float32(), n); });
  EXPECT_NE(too_big.find("4611686018427387904 slots of Float32"), std::string::npos) << too_big;
  Generic empty(DType::Int32());
  EXPECT_THROW(empty.allocate(n), MemoryError);
  EXPECT_EQ(empty.slots(), 0);
  EXPECT_EQ(empty.version(), 0u);
}

TEST(carrier_storage__entry_points_read_and_write_slots_and_count_mutations,
     clause3__int32_bounds) {
  for (bool cpu : {true, false}) {
    std::shared_ptr<Carrier> c =
        cpu ? std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Int32(), 2))
            : std::make_shared<Generic>(DType::Int32(), 2);
    c->write(0, int64_t{-2147483648});
    c->write(1, int64_t{2147483647});
    EXPECT_EQ(c->read(0), Value(int64_t{-2147483648}));
    EXPECT_EQ(c->read(1), Value(int64_t{2147483647}));
    EXPECT_THROW(c->write(0, int64_t{-2147483649}), ValueError);
    EXPECT_THROW(c->write(1, int64_t{2147483648}), ValueError);
    EXPECT_EQ(c->read(0), Value(int64_t{-2147483648}));
    EXPECT_EQ(c->version(), 2u);
  }
}

}  // namespace
}  // namespace strideweave
