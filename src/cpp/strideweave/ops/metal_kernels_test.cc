// The math kernels on Metal operands (ops/kernels.h "Where results live"):
// all-Metal operands run as one asynchronous device command buffer with a
// Metal result; mixed operands run on the host with a CPU result.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/device/emulated.h"
#include "strideweave/ops/kernels.h"
#include "strideweave/ops/math.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave::ops {
namespace {

using testing_util::message_of;

// Sets the emulated latency for a scope; restores 0 and drains the queue.
class Latency {
 public:
  explicit Latency(std::chrono::microseconds latency) { device::set_emulated_latency(latency); }
  ~Latency() {
    device::set_emulated_latency(std::chrono::microseconds(0));
    device::metal_queue().synchronize();
  }
  Latency(const Latency&) = delete;
  Latency& operator=(const Latency&) = delete;
};

std::vector<Value> slot_values(const DType& dtype, int64_t n, int64_t salt) {
  std::vector<Value> values;
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::Float32()) {
      values.emplace_back(0.25 * static_cast<double>(i + 1) * ((i + salt) % 2 == 0 ? 1 : -1));
    } else {
      values.emplace_back(int64_t{2147483647} - 7 * i * (salt + 1));
    }
  }
  return values;
}

struct Twins {
  std::shared_ptr<Tensor> metal;
  std::shared_ptr<Tensor> cpu;
};

// The same slots and view over a Metal and a CPU carrier.
Twins twins(const DType& dtype, const Layout& layout, int64_t offset, int64_t salt) {
  const std::vector<Value> values = slot_values(dtype, offset + layout.cosize() + 2, salt);
  return {Tensor::make(std::make_shared<Metal>(dtype, std::nullopt, values), layout, offset),
          Tensor::make(std::make_shared<CPU>(dtype, std::nullopt, values), layout, offset)};
}

bool on(const Tensor& t, const ClassDescriptor& cls) {
  return &t.subtensor("test").carrier->carrier_class() == &cls;
}

bool fresh_metal(const Tensor& t) {
  const Subtensor& s = t.subtensor("test");
  return on(t, Metal::static_class()) && s.offset == 0 && s.layout == compact_col_major(t.shape());
}

// ((2, 2), 3) with holes, at offset 3.
const Layout kHoley(IntTuple::tuple({IntTuple::tuple({2, 2}), 3}),
                    IntTuple::tuple({IntTuple::tuple({1, 5}), 11}));
// (3, 4) with stride 0, at offset 1.
const Layout kBroadcast(IntTuple::tuple({3, 4}), IntTuple::tuple({0, 2}));

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors,
     compute_on_metal_without_synchronizing__MetalKernelsEqualCpu) {
  for (const DType& dtype : {DType::Float32(), DType::Int32()}) {
    for (const auto& [layout, offset] : {std::pair{kHoley, int64_t{3}}, {kBroadcast, 1}}) {
      const Twins a = twins(dtype, layout, offset, 0);
      const Twins b = twins(dtype, layout, offset, 1);
      const Value c = dtype == DType::Float32() ? Value(2.5) : Value(int64_t{3});
      const std::vector<std::pair<std::shared_ptr<Tensor>, std::shared_ptr<Tensor>>> cases = {
          {add(a.metal, b.metal), add(a.cpu, b.cpu)},
          {sub(a.metal, b.metal), sub(a.cpu, b.cpu)},
          {mul(a.metal, b.metal), mul(a.cpu, b.cpu)},
          {mul(a.metal, c), mul(a.cpu, c)},
          {sub(a.metal, c, true), sub(a.cpu, c, true)},
          {neg(a.metal), neg(a.cpu)},
          {sum(a.metal, std::nullopt), sum(a.cpu, std::nullopt)},
          {sum(a.metal, std::vector<int64_t>{1}), sum(a.cpu, std::vector<int64_t>{1})},
          {copy(*a.metal), copy(*a.cpu)},
      };
      for (const auto& [metal, cpu] : cases) {
        EXPECT_TRUE(fresh_metal(*metal));
        EXPECT_TRUE(on(*cpu, CPU::static_class()));
        EXPECT_EQ(metal->shape(), cpu->shape());
        EXPECT_EQ(metal->values(), cpu->values());
      }
    }
  }
}

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors,
     compute_on_metal_without_synchronizing__MetalKernelOneAsynchronousCommandBuffer) {
  const Twins a = twins(DType::Float32(), kHoley, 3, 0);
  const Twins b = twins(DType::Float32(), kHoley, 3, 1);
  device::metal_queue().synchronize();
  const Latency latency(std::chrono::milliseconds(50));
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<Tensor> metal = a.metal;
  std::shared_ptr<Tensor> cpu = a.cpu;
  for (int i = 0; i < 10; ++i) {
    const int64_t before = device::emulated_pending();
    metal = i % 2 == 0 ? mul(metal, b.metal) : add(metal, Value(1.0));
    // One command buffer per operation, and nothing waited for it.
    EXPECT_EQ(device::emulated_pending(), before + 1);
    cpu = i % 2 == 0 ? mul(cpu, b.cpu) : add(cpu, Value(1.0));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_GT(device::emulated_pending(), 0);
  EXPECT_EQ(metal->values(), cpu->values());  // reading waits for the chain
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
}

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors,
     mix_metal_with_another_carrier__MetalKernelHostPath) {
  const Twins a = twins(DType::Int32(), kBroadcast, 1, 0);
  const auto result = add(a.metal, a.cpu);
  EXPECT_TRUE(on(*result, CPU::static_class()));
  EXPECT_EQ(result->values(), add(a.cpu, a.cpu)->values());
}

TEST(autograd__elementwise_operations_take_operands_of_equal_shape_and_dtype,
     refuse_a_released_operand__MetalKernel) {
  const Twins a = twins(DType::Float32(), kHoley, 3, 0);
  const Twins b = twins(DType::Float32(), kHoley, 3, 1);
  const int64_t pending = device::emulated_pending();
  b.metal->subtensor("test").carrier->release();
  EXPECT_NE(message_of<RuntimeError>([&] { add(a.metal, b.metal); }).find("Metal carrier #"),
            std::string::npos);
  EXPECT_NE(message_of<RuntimeError>([&] { neg(b.metal); }).find("Metal carrier #"),
            std::string::npos);
  EXPECT_LE(device::emulated_pending(), pending);
}

TEST(MetalKernel, RefusesAnOperandBeingWrittenByAMove) {
  const Twins a = twins(DType::Float32(), kHoley, 3, 0);
  const std::shared_ptr<Carrier> carrier = a.metal->subtensor("test").carrier;
  Lease lease = carrier->pin("a pending move", Carrier::PinAccess::kWriting);
  EXPECT_NE(message_of<RuntimeError>([&] { neg(a.metal); }).find("a pending move"),
            std::string::npos);
  lease.end();
  EXPECT_EQ(neg(a.metal)->values(), neg(a.cpu)->values());
}

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors,
     keep_the_gradients_of_metal_leaves_on_metal__MetalKernelBackward) {
  const Twins x = twins(DType::Float32(), kHoley, 3, 0);
  const Twins y = twins(DType::Float32(), kHoley, 3, 1);
  for (const auto& t : {x.metal, x.cpu, y.metal, y.cpu}) t->set_requires_grad(true);
  const auto graph = [](const std::shared_ptr<Tensor>& a, const std::shared_ptr<Tensor>& b) {
    const auto picked = index(a, {IndexItem{int64_t{1}}});
    return add(sum(sub(mul(a, b), neg(b)), std::nullopt), sum(mul(picked, 2.0), std::nullopt));
  };
  autograd::backward(graph(x.metal, y.metal), nullptr, false);
  autograd::backward(graph(x.cpu, y.cpu), nullptr, false);
  for (const auto& [metal, cpu] : {std::pair{x.metal, x.cpu}, {y.metal, y.cpu}}) {
    ASSERT_NE(metal->grad(), nullptr);
    EXPECT_TRUE(on(*metal->grad(), Metal::static_class()));
    EXPECT_EQ(metal->grad()->values(), cpu->grad()->values());
  }
}

}  // namespace
}  // namespace strideweave::ops
