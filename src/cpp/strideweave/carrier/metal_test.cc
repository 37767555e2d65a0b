// The Metal carrier over the emulated device queue (carrier/metal.h).
#include "strideweave/carrier/metal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/device/emulated.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

class MetalCarrier : public ::testing::Test {
 protected:
  void SetUp() override {
    device::set_emulated_latency(std::chrono::microseconds(0));
    device::clear_emulated_faults();
  }
  void TearDown() override {
    device::set_emulated_latency(std::chrono::microseconds(0));
    EXPECT_EQ(device::clear_emulated_faults(), 0) << "a fault was left armed";
  }
};

std::vector<Value> floats(std::initializer_list<double> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

// Every command and callback submitted so far has finished (the device thread
// dropped its buffers, the completion thread ran what was queued).
void drain() {
  device::metal_queue().synchronize();
  std::promise<void> ran;
  device::metal_queue().dispatch([&] { ran.set_value(); });
  ran.get_future().wait();
}

TEST_F(MetalCarrier, refuses_dtypes_the_device_lacks) {
  for (const DType& dtype : {DType::Floating(), DType::Any()}) {
    const std::string message = message_of<TypeError>([&] { Metal carrier(dtype, 2); });
    EXPECT_NE(message.find("Metal"), std::string::npos) << message;
    EXPECT_NE(message.find(dtype.name()), std::string::npos) << message;
  }
  EXPECT_TRUE(Metal::supports(DType::Float32()));
  EXPECT_TRUE(Metal::supports(DType::Int32()));
  EXPECT_TRUE(Metal::supports(DType::Bool()));
  EXPECT_FALSE(Metal::supports(DType::Any()));
  EXPECT_THROW(Metal::require_supported(DType::Floating(), "here"), TypeError);
}

TEST_F(MetalCarrier, values_round_trip_for_every_supported_dtype) {
  const Metal f32(DType::Float32(), std::nullopt, floats({1.5, -2, 0, 65536.25}));
  EXPECT_EQ(f32.read_range_values(0, 4), floats({1.5, -2, 0, 65536.25}));
  const std::vector<Value> ints{Value(int64_t{-7}), Value(int64_t{0}), Value(int64_t{2147483647})};
  const Metal i32(DType::Int32(), std::nullopt, ints);
  EXPECT_EQ(i32.read_range_values(0, 3), ints);
  const std::vector<Value> bools{Value(true), Value(false), Value(true)};
  const Metal b(DType::Bool(), std::nullopt, bools);
  EXPECT_EQ(b.read_range_values(0, 3), bools);
  EXPECT_EQ(b.itemsize(), 1u);
  EXPECT_EQ(&f32.carrier_class(), &Metal::static_class());
  EXPECT_EQ(f32.carrier_class().name(), "Metal");
  const Metal zeros(DType::Float32(), 3);
  EXPECT_EQ(zeros.read_range_values(0, 3), floats({0, 0, 0}));
  const Metal empty(DType::Int32());
  EXPECT_EQ(empty.slots(), 0);
  EXPECT_EQ(empty.buffer("test")->bytes(), 0);
}

TEST_F(MetalCarrier, reads_and_writes_single_slots_ranges_and_values) {
  auto metal = std::make_shared<Metal>(DType::Float32(), 5);
  metal->write(1, 2.5);
  EXPECT_EQ(metal->read(1), Value(2.5));
  EXPECT_EQ(metal->version(), 1u);
  const float items[2] = {7.0F, 8.0F};
  std::vector<std::byte> bytes(sizeof items);
  std::memcpy(bytes.data(), items, sizeof items);
  metal->write_range(3, bytes);
  EXPECT_EQ(metal->version(), 2u);
  EXPECT_EQ(metal->read_range(3, 2), bytes);
  metal->write_range_values(0, floats({-1, -2}));
  EXPECT_EQ(metal->version(), 3u);
  EXPECT_EQ(metal->read_range_values(0, 5), floats({-1, -2, 0, 7, 8}));
  EXPECT_THROW(metal->read(5), IndexError);
  EXPECT_THROW(metal->write_range_values(4, floats({1, 2})), IndexError);
  EXPECT_EQ(metal->version(), 3u);
  // The buffer holds the encoded slots.
  const device::BufferRef buffer = metal->buffer("test");
  EXPECT_EQ(buffer->bytes(), 20);
  std::vector<std::byte> raw(20);
  device::download(metal->queue(), buffer, 0, 20, raw.data(), "raw")->wait();
  float decoded[5];
  std::memcpy(decoded, raw.data(), sizeof decoded);
  EXPECT_EQ(decoded[4], 8.0F);
  EXPECT_EQ(decoded[0], -1.0F);
}

TEST_F(MetalCarrier, observes_earlier_device_work_on_read) {
  auto metal = std::make_shared<Metal>(DType::Int32(), 2);
  device::set_emulated_latency(std::chrono::milliseconds(20));
  const int32_t item = 42;
  // A copy submitted without waiting; the read queues behind it.
  device::upload(metal->queue(), reinterpret_cast<const std::byte*>(&item), metal->buffer("test"),
                 4, 4, "pending write");
  EXPECT_EQ(metal->read(1), Value(int64_t{42}));
}

TEST_F(MetalCarrier, allocates_an_empty_carrier) {
  auto metal = std::make_shared<Metal>(DType::Float32());
  metal->allocate(4);
  EXPECT_EQ(metal->slots(), 4);
  EXPECT_EQ(metal->buffer("test")->bytes(), 16);
  EXPECT_EQ(metal->read_range_values(0, 4), floats({0, 0, 0, 0}));
  EXPECT_THROW(metal->allocate(2), RuntimeError);
  const auto like = metal->new_like();
  EXPECT_EQ(&like->carrier_class(), &Metal::static_class());
  EXPECT_EQ(like->slots(), 0);
  EXPECT_EQ(like->dtype(), DType::Float32());
}

TEST_F(MetalCarrier, release_waits_for_pending_work_on_its_buffer) {
  auto metal = std::make_shared<Metal>(DType::Int32(), 4);
  std::atomic<bool> finished{false};
  const device::BufferRef buffer = metal->buffer("test");
  std::promise<void> started;
  metal->queue().submit(device::CommandBuffer{"slow",
                                              device::CommandKind::kKernel,
                                              {buffer},
                                              {[&](const device::Access&) {
                                                started.set_value();
                                                std::this_thread::sleep_for(
                                                    std::chrono::milliseconds(30));
                                                finished = true;
                                              }},
                                              {}});
  started.get_future().wait();
  metal->release();
  EXPECT_TRUE(finished);
  EXPECT_TRUE(metal->is_released());
  const device::EventRef last = buffer->last_use();  // forgotten once complete and dropped
  EXPECT_TRUE(last == nullptr || last->is_complete());
}

TEST_F(MetalCarrier, release_frees_the_device_bytes) {
  drain();
  const int64_t before = device::emulated_allocated_bytes();
  auto metal = std::make_shared<Metal>(DType::Float32(), 8);
  EXPECT_EQ(device::emulated_allocated_bytes(), before + 32);
  metal->release();
  drain();
  EXPECT_EQ(device::emulated_allocated_bytes(), before);
}

TEST_F(MetalCarrier, a_released_carrier_refuses) {
  auto metal = std::make_shared<Metal>(DType::Float32(), std::nullopt, floats({1, 2}));
  metal->release();
  metal->release();  // idempotent
  EXPECT_EQ(metal->slots(), 0);
  EXPECT_THROW(metal->read(0), RuntimeError);
  EXPECT_THROW(metal->write(0, 1.0), RuntimeError);
  EXPECT_THROW(metal->read_range_values(0, 1), RuntimeError);
  const std::string message = message_of<RuntimeError>([&] { metal->buffer("encode"); });
  EXPECT_NE(message.find("encode"), std::string::npos) << message;
  EXPECT_EQ(metal->new_like()->slots(), 0);  // valid on a released carrier
}

TEST_F(MetalCarrier, refuses_buffers_it_cannot_hold) {
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  const std::string message =
      message_of<ValueError>([&] { std::make_shared<Metal>(DType::Float32(), huge); });
  EXPECT_NE(message.find("Metal"), std::string::npos) << message;
  drain();
  const int64_t before = device::emulated_allocated_bytes();
  EXPECT_THROW(std::make_shared<Metal>(DType::Float32(), int64_t{1} << 60), MemoryError);
  EXPECT_EQ(device::emulated_allocated_bytes(), before);
}

TEST_F(MetalCarrier, does_not_export_through_dlpack) {
  const Metal metal(DType::Float32(), 2);
  EXPECT_THROW(metal.dlpack_info(), BufferError);
}

TEST_F(MetalCarrier, an_allocation_fault_leaves_the_carrier_unchanged) {
  auto metal = std::make_shared<Metal>(DType::Float32());
  const device::BufferRef buffer = metal->buffer("test");
  device::inject_emulated_fault(device::Fault::kAllocation,
                                std::make_exception_ptr(MemoryError("device full")));
  EXPECT_THROW(metal->allocate(4), MemoryError);
  EXPECT_EQ(metal->slots(), 0);
  EXPECT_EQ(metal->version(), 0u);
  EXPECT_EQ(metal->buffer("test"), buffer);
  EXPECT_TRUE(metal->is_mutable());
  metal->allocate(4);  // the fault fired once
  EXPECT_EQ(metal->slots(), 4);
  EXPECT_EQ(metal->version(), 1u);

  device::inject_emulated_fault(device::Fault::kAllocation,
                                std::make_exception_ptr(MemoryError("device full")));
  EXPECT_THROW(std::make_shared<Metal>(DType::Int32(), 3), MemoryError);
}

TEST_F(MetalCarrier, a_write_whose_upload_fails_changes_nothing) {
  auto metal = std::make_shared<Metal>(DType::Float32(), std::nullopt, floats({1, 2, 3}));
  for (int kind = 0; kind < 3; ++kind) {
    device::inject_emulated_fault(device::Fault::kCopy,
                                  std::make_exception_ptr(RuntimeError("copy fault")));
    switch (kind) {
      case 0:
        EXPECT_THROW(metal->write(1, 9.0), RuntimeError);
        break;
      case 1:
        EXPECT_THROW(metal->write_range_values(0, floats({7, 8})), RuntimeError);
        break;
      default: {
        std::vector<std::byte> bytes(4);
        EXPECT_THROW(metal->write_range(2, bytes), RuntimeError);
      }
    }
    EXPECT_EQ(device::clear_emulated_faults(), 0);  // it fired
    EXPECT_EQ(metal->version(), 0u);
    EXPECT_EQ(metal->read_range_values(0, 3), floats({1, 2, 3}));
  }
  // A failed read reports the fault too and changes nothing.
  device::inject_emulated_fault(device::Fault::kCopy,
                                std::make_exception_ptr(RuntimeError("copy fault")));
  EXPECT_THROW(metal->read(0), RuntimeError);
  EXPECT_EQ(metal->read(0), Value(1.0));
}

TEST_F(MetalCarrier, concurrent_readers_and_writers_stay_consistent) {
  auto metal = std::make_shared<Metal>(DType::Int32(), 16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        metal->write(t, Value(int64_t{i}));
        EXPECT_EQ(metal->read_range_values(t, 1)[0], Value(int64_t{i}));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(metal->version(), 100u);
}

}  // namespace
}  // namespace strideweave
