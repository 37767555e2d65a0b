#include "strideweave/ops/math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/ops/kernels.h"
#include "strideweave/ops/operation.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave::ops {
namespace {

using testing_util::message_of;

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out;
  for (const Value& v : t.values()) out.push_back(std::get<double>(v));
  return out;
}

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (const Value& v : t.values()) out.push_back(std::get<int64_t>(v));
  return out;
}

std::vector<Value> iota_values(int64_t n) {
  std::vector<Value> values;
  for (int64_t i = 0; i < n; ++i) values.emplace_back(static_cast<double>(i));
  return values;
}

// A tensor of shape (2, 3) over `carrier` holding 1..6 at the odd slots
// 1, 3, ..., 11 of a row-major view with offset 1 (holes at the even slots).
std::shared_ptr<Tensor> holey(std::shared_ptr<Carrier> carrier) {
  return Tensor::make(std::move(carrier), Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({6, 2})),
                      1);
}

bool fresh_canonical(const Tensor& t) {
  const Subtensor& s = t.subtensor("test");
  return s.carrier->carrier_class().name() == "CPU" && s.offset == 0 &&
         s.layout == compact_col_major(t.shape()) && t.is_mutable();
}

TEST(autograd__elementwise_operations_take_operands_of_equal_shape_and_dtype,
     combine_two_tensors_of_any_layout) {
  const std::vector<Value> values = iota_values(12);
  const auto generic = std::make_shared<Generic>(DType::Float32(), std::nullopt, values);
  const auto cpu = std::make_shared<CPU>(DType::Float32(), std::nullopt, values);
  const auto a = holey(generic);
  const auto b = holey(cpu);
  EXPECT_EQ(doubles(*a), (std::vector<double>{1, 7, 3, 9, 5, 11}));
  EXPECT_EQ(doubles(*add(a, b)), (std::vector<double>{2, 14, 6, 18, 10, 22}));
  EXPECT_EQ(doubles(*sub(a, add(b, 1.0))), (std::vector<double>{-1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(doubles(*mul(a, b)), (std::vector<double>{1, 49, 9, 81, 25, 121}));
  EXPECT_EQ(doubles(*neg(b)), (std::vector<double>{-1, -7, -3, -9, -5, -11}));
  EXPECT_EQ(doubles(*sub(a, Value{10.0}, true)), (std::vector<double>{9, 3, 7, 1, 5, -1}));
  EXPECT_TRUE(fresh_canonical(*add(a, b)));
  EXPECT_EQ(generic->version(), 0U);
  EXPECT_EQ(cpu->version(), 0U);
}

TEST(autograd__elementwise_operations_take_operands_of_equal_shape_and_dtype,
     wrap_int32_arithmetic) {
  const auto big =
      tensor_from_values(IntTuple(2), {int64_t{2147483647}, int64_t{-2147483648}}, DType::Int32());
  EXPECT_EQ(ints(*add(big, Value{int64_t{1}})), (std::vector<int64_t>{-2147483648, -2147483647}));
  EXPECT_EQ(ints(*mul(big, big)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(*neg(big)), (std::vector<int64_t>{-2147483647, -2147483648}));
  EXPECT_EQ(ints(*sum(big, std::nullopt)), (std::vector<int64_t>{-1}));
}

TEST(autograd__elementwise_operations_take_operands_of_equal_shape_and_dtype,
     refuse_mismatched_operands) {
  const auto f2 = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  const auto f3 = tensor_from_values(IntTuple(3), {1.0, 2.0, 3.0}, DType::Float32());
  const auto i2 = tensor_from_values(IntTuple(2), {int64_t{1}, int64_t{2}}, DType::Int32());
  const auto b2 = tensor_from_values(IntTuple(2), {true, false}, DType::Bool());
  EXPECT_NE(message_of<ValueError>([&] { add(f2, f3); }).find("2 and 3"), std::string::npos);
  EXPECT_NE(message_of<TypeError>([&] { mul(f2, i2); }).find("Float32 and Int32"),
            std::string::npos);
  EXPECT_NE(message_of<TypeError>([&] { neg(b2); }).find("neg: dtype Bool"), std::string::npos);
  EXPECT_NE(message_of<TypeError>([&] { add(i2, Value{2.5}); }).find("2.5"), std::string::npos);
  const auto planar = Tensor::from_planes(
      DType::compound({{"x", DType::Float32()}, {"y", DType::Float32()}}), {f2, f2});
  EXPECT_NE(message_of<NotImplementedError>([&] { sub(planar, f2); }).find("sub"),
            std::string::npos);
}

TEST(autograd__elementwise_operations_take_operands_of_equal_shape_and_dtype,
     refuse_a_released_operand) {
  const auto t = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  const auto other = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  t->subtensor("t").carrier->release();
  EXPECT_NE(message_of<RuntimeError>([&] { add(other, t); }).find("CPU carrier #"),
            std::string::npos);
}

TEST(autograd__sum_reduces_over_top_level_modes, requirement) {
  // Shape ((2, 3), 2) over a FileBacked carrier: element (i, j, k) is i + 2j + 6k.
  const auto file =
      std::make_shared<FileBacked>(DType::Float32(), std::nullopt, std::nullopt, iota_values(12));
  const auto t = Tensor::make(file, Layout(IntTuple::tuple({IntTuple::tuple({2, 3}), 2})), 0);
  const auto total = sum(t, std::nullopt);
  EXPECT_EQ(total->shape(), IntTuple::tuple({}));
  EXPECT_EQ(doubles(*total), (std::vector<double>{66}));
  const auto over_k = sum(t, std::vector<int64_t>{1});
  EXPECT_EQ(over_k->shape(), IntTuple::tuple({IntTuple::tuple({2, 3})}));
  EXPECT_EQ(doubles(*over_k), (std::vector<double>{6, 8, 10, 12, 14, 16}));
  const auto over_ij = sum(t, std::vector<int64_t>{-2});
  EXPECT_EQ(over_ij->shape(), IntTuple::tuple({2}));
  EXPECT_EQ(doubles(*over_ij), (std::vector<double>{15, 51}));
  EXPECT_TRUE(fresh_canonical(*over_ij));
  EXPECT_EQ(sum(t, std::vector<int64_t>{})->shape(), t->shape());
  EXPECT_NE(message_of<ValueError>([&] { sum(t, std::vector<int64_t>{1, 1}); }).find("mode 1"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] { sum(t, std::vector<int64_t>{2}); }).find("mode 2"),
            std::string::npos);
}

TEST(autograd__broadcast_and_indexing_are_recorded_views, requirement) {
  auto x = tensor_from_values(IntTuple::tuple({2, 1}), {1.0, 2.0}, DType::Float32());
  x->set_requires_grad(true);
  const auto view = broadcast_to(x, IntTuple::tuple({2, 3, 4}));
  EXPECT_EQ(view->subtensor("t").carrier, x->subtensor("t").carrier);
  EXPECT_EQ(view->grad_fn()->name(), "broadcast_to");
  autograd::backward(sum(view, std::nullopt), nullptr, false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{12, 12}));

  auto y = tensor_from_values(IntTuple::tuple({2, 3}), iota_values(6), DType::Float32());
  y->set_requires_grad(true);
  const auto picked = index(y, {IndexItem{int64_t{1}}, IndexItem{Slice{0, 2, 1}}});
  EXPECT_EQ(picked->grad_fn()->name(), "index");
  autograd::backward(sum(picked, std::nullopt), nullptr, false);
  EXPECT_EQ(doubles(*y->grad()), (std::vector<double>{0, 1, 0, 1, 0, 0}));
  EXPECT_NE(message_of<RuntimeError>([&] { relayout(y, Layout(6), 0); }).find("relayout"),
            std::string::npos);
}

TEST(autograd__every_operation_is_an_operation_with_a_name, requirement) {
  const auto x = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  x->set_requires_grad(true);
  EXPECT_EQ(add(x, x)->grad_fn()->name(), "add");
  EXPECT_EQ(sub(x, 1.0)->grad_fn()->name(), "sub");
  EXPECT_EQ(mul(x, 2.0)->grad_fn()->name(), "mul");
  EXPECT_EQ(neg(x)->grad_fn()->name(), "neg");
  EXPECT_EQ(sum(x, std::nullopt)->grad_fn()->name(), "sum");
}

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors, requirement) {
  EXPECT_TRUE(
      is_canonical_contiguous(Layout(IntTuple::tuple({2, 1, 3}), IntTuple::tuple({1, 7, 2}))));
  EXPECT_FALSE(is_canonical_contiguous(Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({3, 1}))));
  const auto values = iota_values(6);
  const auto t = Tensor::make(std::make_shared<Generic>(DType::Float32(), std::nullopt, values),
                              Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({3, 1})), 0);
  const auto copied = copy(*t);
  EXPECT_TRUE(fresh_canonical(*copied));
  EXPECT_EQ(doubles(*copied), doubles(*t));
}

TEST(autograd__operation_results_are_fresh_canonical_cpu_tensors,
     requirement__operands_in_either_order_from_many_threads) {
  const auto a = tensor_from_values(IntTuple(64), iota_values(64), DType::Float32());
  const auto b = tensor_from_values(IntTuple(64), iota_values(64), DType::Float32());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const auto sum = t % 2 == 0 ? add(a, b) : add(b, a);
        const std::vector<double> values = doubles(*sum);
        EXPECT_EQ(values.size(), 64U);
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 500; ++i) a->subtensor("t").carrier->write(i % 64, Value{double(i % 64)});
  });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(doubles(*add(a, b))[63], 126.0);
}

TEST(ElementwiseKernels, LongOperandsSplitAcrossThreadsGiveEveryElement) {
  // Long enough for parallel_for to split the loops (kParallelGrain), with a
  // tail that is not a multiple of the chunk: every element of every kernel,
  // Float32 and Int32 (wrapping), against the element-by-element result.
  const int64_t n = 5 * kParallelGrain + 13;
  std::vector<Value> fa;
  std::vector<Value> fb;
  std::vector<Value> ia;
  std::vector<Value> ib;
  for (int64_t i = 0; i < n; ++i) {
    fa.emplace_back(static_cast<double>(i % 1000) / 8);
    fb.emplace_back(static_cast<double>(i % 7) - 3);
    ia.emplace_back(int64_t{2147483647} - i);
    ib.emplace_back(i * 3);
  }
  const auto x = tensor_from_values(IntTuple(n), fa, DType::Float32());
  const auto y = tensor_from_values(IntTuple(n), fb, DType::Float32());
  const auto p = tensor_from_values(IntTuple(n), ia, DType::Int32());
  const auto q = tensor_from_values(IntTuple(n), ib, DType::Int32());
  const std::vector<double> sum = doubles(*add(x, y));
  const std::vector<double> product = doubles(*mul(x, Value{2.0}));
  const std::vector<double> negated = doubles(*neg(x));
  const std::vector<double> copied = doubles(*copy(*y));
  const std::vector<int64_t> difference = ints(*sub(p, q));
  const std::vector<int64_t> wrapped = ints(*add(p, Value{int64_t{1}}));
  ASSERT_EQ(sum.size(), static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const float a = static_cast<float>(std::get<double>(fa[k]));
    const float b = static_cast<float>(std::get<double>(fb[k]));
    ASSERT_EQ(sum[k], static_cast<double>(a + b)) << i;
    ASSERT_EQ(product[k], static_cast<double>(a * 2.0F)) << i;
    ASSERT_EQ(negated[k], static_cast<double>(-a)) << i;
    ASSERT_EQ(copied[k], static_cast<double>(b)) << i;
    const auto u = static_cast<uint32_t>(std::get<int64_t>(ia[k]));
    const auto v = static_cast<uint32_t>(std::get<int64_t>(ib[k]));
    ASSERT_EQ(difference[k], static_cast<int32_t>(u - v)) << i;
    ASSERT_EQ(wrapped[k], static_cast<int32_t>(u + 1U)) << i;
  }
}

}  // namespace
}  // namespace strideweave::ops
