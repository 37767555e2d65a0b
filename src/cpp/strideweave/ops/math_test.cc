#include "strideweave/ops/math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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

std::vector<bool> bools(const Tensor& t) {
  std::vector<bool> out;
  for (const Value& v : t.values()) out.push_back(std::get<bool>(v));
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

TEST(autograd__true_division_takes_float32_operands, divide_tensors_and_constants) {
  const std::vector<Value> values = iota_values(12);
  const auto a = holey(std::make_shared<Generic>(DType::Float32(), std::nullopt, values));
  const auto b = holey(std::make_shared<CPU>(DType::Float32(), std::nullopt, values));
  const auto quotient = div(a, add(b, 1.0));
  EXPECT_TRUE(fresh_canonical(*quotient));
  const auto f = [](float x, float y) { return static_cast<double>(x / y); };
  EXPECT_EQ(doubles(*quotient),
            (std::vector<double>{f(1, 2), f(7, 8), f(3, 4), f(9, 10), f(5, 6), f(11, 12)}));
  EXPECT_EQ(doubles(*div(a, Value{4.0})),
            (std::vector<double>{0.25, 1.75, 0.75, 2.25, 1.25, 2.75}));
  EXPECT_EQ(doubles(*div(a, Value{int64_t{1}}, true))[0], 1.0);
  EXPECT_EQ(doubles(*div(a, Value{int64_t{1}}, true))[2], static_cast<double>(1.0F / 3.0F));
}

TEST(autograd__true_division_takes_float32_operands, divide_by_zero) {
  const auto t = tensor_from_values(IntTuple(3), {1.0, -1.0, 0.0}, DType::Float32());
  const auto zeros = tensor_from_values(IntTuple(3), {0.0, 0.0, 0.0}, DType::Float32());
  for (const auto& quotient : {div(t, zeros), div(t, Value{0.0})}) {
    const std::vector<double> q = doubles(*quotient);
    EXPECT_EQ(q[0], std::numeric_limits<double>::infinity());
    EXPECT_EQ(q[1], -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isnan(q[2]));
  }
}

TEST(autograd__true_division_takes_float32_operands, refuse_int32_division) {
  const auto i = tensor_from_values(IntTuple(2), {int64_t{4}, int64_t{2}}, DType::Int32());
  for (const auto& call :
       std::vector<std::function<void()>>{[&] { div(i, i); }, [&] { div(i, Value{int64_t{2}}); },
                                          [&] { div(i, Value{int64_t{2}}, true); }}) {
    const std::string message = message_of<TypeError>(call);
    EXPECT_NE(message.find("div: dtype Int32"), std::string::npos) << message;
  }
  EXPECT_EQ(i->subtensor("t").carrier->version(), 0U);
}

TEST(autograd__true_division_takes_float32_operands, requirement) {
  auto a = tensor_from_values(IntTuple(3), {1.0, 2.0, 3.0}, DType::Float32());
  auto b = tensor_from_values(IntTuple(3), {2.0, 4.0, 8.0}, DType::Float32());
  a->set_requires_grad(true);
  b->set_requires_grad(true);
  const auto quotient = div(a, b);
  EXPECT_EQ(quotient->grad_fn()->name(), "div");
  autograd::backward(sum(quotient, std::nullopt), nullptr, false);
  EXPECT_EQ(doubles(*a->grad()), (std::vector<double>{0.5, 0.25, 0.125}));
  EXPECT_EQ(doubles(*b->grad()), (std::vector<double>{-0.25, -0.125, -3.0 / 64}));
  // 2 / a: -2 / a^2; a / 4: 1 / 4.
  auto x = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  x->set_requires_grad(true);
  autograd::backward(sum(add(div(x, Value{2.0}, true), div(x, Value{4.0})), std::nullopt), nullptr,
                     false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{-2.0 + 0.25, -0.5 + 0.25}));
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient,
     compare_two_tensors_of_any_layout) {
  // In flat (column-major) order a holds 1, 7, 3, 9, 5, 11 (holey over
  // Generic) and b 3, 7, 1, 9, 11, 5 (given row by row).
  const auto generic = std::make_shared<Generic>(DType::Float32(), std::nullopt, iota_values(12));
  const auto a = holey(generic);
  const auto b = tensor_from_values(IntTuple::tuple({2, 3}), {3.0, 1.0, 11.0, 7.0, 9.0, 5.0},
                                    DType::Float32());
  const std::vector<std::pair<Comparison, std::vector<bool>>> expected = {
      {Comparison::kEq, {false, true, false, true, false, false}},
      {Comparison::kNe, {true, false, true, false, true, true}},
      {Comparison::kLt, {true, false, false, false, true, false}},
      {Comparison::kLe, {true, true, false, true, true, false}},
      {Comparison::kGt, {false, false, true, false, false, true}},
      {Comparison::kGe, {false, true, true, true, false, true}},
  };
  for (const auto& [comparison, truth] : expected) {
    const auto result = compare(comparison, a, b);
    EXPECT_EQ(result->dtype(), DType::Bool());
    EXPECT_EQ(result->shape(), a->shape());
    EXPECT_TRUE(fresh_canonical(*result));
    EXPECT_EQ(bools(*result), truth) << comparison_name(comparison);
  }
  // Int32 compares signed: -1 < 1.
  const auto i = tensor_from_values(IntTuple(2), {int64_t{-1}, int64_t{1}}, DType::Int32());
  const auto j = tensor_from_values(IntTuple(2), {int64_t{1}, int64_t{-1}}, DType::Int32());
  EXPECT_EQ(bools(*compare(Comparison::kLt, i, j)), (std::vector<bool>{true, false}));
  EXPECT_EQ(generic->version(), 0U);
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient,
     compare_with_a_constant_on_either_side) {
  const auto t = tensor_from_values(IntTuple(3), {1.0, 2.0, 3.0}, DType::Float32());
  EXPECT_EQ(bools(*compare(Comparison::kLt, t, Value{2.0})),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(bools(*compare(Comparison::kLt, t, Value{2.0}, true)),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(bools(*compare(Comparison::kGe, t, Value{int64_t{3}}, true)),
            (std::vector<bool>{true, true, true}));
  EXPECT_EQ(bools(*compare(Comparison::kLe, t, Value{int64_t{2}}, true)),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(bools(*compare(Comparison::kGt, t, Value{int64_t{2}}, true)),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(bools(*compare(Comparison::kEq, t, Value{1.0}, true)),
            (std::vector<bool>{true, false, false}));
  const auto i = tensor_from_values(IntTuple(2), {int64_t{-5}, int64_t{5}}, DType::Int32());
  EXPECT_EQ(bools(*compare(Comparison::kGt, i, Value{int64_t{0}})),
            (std::vector<bool>{false, true}));
  EXPECT_NE(message_of<TypeError>([&] { compare(Comparison::kLt, i, Value{0.5}); }).find("0.5"),
            std::string::npos);
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient, compare_nan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto t = tensor_from_values(IntTuple(2), {nan, 1.0}, DType::Float32());
  EXPECT_EQ(bools(*compare(Comparison::kEq, t, t)), (std::vector<bool>{false, true}));
  EXPECT_EQ(bools(*compare(Comparison::kNe, t, t)), (std::vector<bool>{true, false}));
  for (Comparison c : {Comparison::kLt, Comparison::kLe, Comparison::kGt, Comparison::kGe}) {
    EXPECT_FALSE(bools(*compare(c, t, t))[0]) << comparison_name(c);
    EXPECT_FALSE(bools(*compare(c, t, Value{0.0}))[0]) << comparison_name(c);
    EXPECT_FALSE(bools(*compare(c, t, Value{0.0}, true))[0]) << comparison_name(c);
  }
  EXPECT_TRUE(bools(*compare(Comparison::kNe, t, Value{nan}))[1]);
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient,
     compare_bool_tensors_for_equality_only) {
  const auto p = tensor_from_values(IntTuple(3), {true, false, true}, DType::Bool());
  const auto q = tensor_from_values(IntTuple(3), {true, true, false}, DType::Bool());
  EXPECT_EQ(bools(*compare(Comparison::kEq, p, q)), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(bools(*compare(Comparison::kNe, p, q)), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(bools(*compare(Comparison::kEq, p, Value{true}, true)),
            (std::vector<bool>{true, false, true}));
  const std::string message = message_of<TypeError>([&] { compare(Comparison::kLt, p, q); });
  EXPECT_NE(message.find("lt: dtype Bool"), std::string::npos) << message;
  EXPECT_NE(
      message_of<TypeError>([&] { compare(Comparison::kEq, p, Value{int64_t{1}}); }).find("Bool"),
      std::string::npos);
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient,
     refuse_mismatched_comparands) {
  const auto f2 = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  const auto f3 = tensor_from_values(IntTuple(3), {1.0, 2.0, 3.0}, DType::Float32());
  const auto i2 = tensor_from_values(IntTuple(2), {int64_t{1}, int64_t{2}}, DType::Int32());
  const auto b2 = tensor_from_values(IntTuple(2), {true, false}, DType::Bool());
  EXPECT_NE(message_of<ValueError>([&] { compare(Comparison::kEq, f2, f3); }).find("2 and 3"),
            std::string::npos);
  EXPECT_NE(
      message_of<TypeError>([&] { compare(Comparison::kNe, f2, i2); }).find("Float32 and Int32"),
      std::string::npos);
  EXPECT_NE(message_of<TypeError>([&] { compare(Comparison::kEq, b2, i2); }).find("Bool and Int32"),
            std::string::npos);
  const auto planar = Tensor::from_planes(
      DType::compound({{"x", DType::Float32()}, {"y", DType::Float32()}}), {f2, f2});
  EXPECT_NE(
      message_of<NotImplementedError>([&] { compare(Comparison::kGe, f2, planar); }).find("ge"),
      std::string::npos);
  EXPECT_EQ(f2->subtensor("t").carrier->version(), 0U);
}

TEST(autograd__comparisons_return_bool_tensors_and_record_no_gradient,
     record_no_gradient_through_a_comparison) {
  auto x = tensor_from_values(IntTuple(2), {1.0, 2.0}, DType::Float32());
  x->set_requires_grad(true);
  for (const auto& result : {compare(Comparison::kLt, x, x), compare(Comparison::kEq, x, 1.0),
                             compare(Comparison::kGe, x, Value{1.0}, true)}) {
    EXPECT_EQ(result->grad_fn(), nullptr);
    EXPECT_FALSE(result->requires_grad());
  }
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
  const std::vector<double> quotient = doubles(*div(x, add(y, Value{0.5})));
  const std::vector<bool> less = bools(*compare(Comparison::kLt, x, y));
  const std::vector<bool> equal = bools(*compare(Comparison::kEq, y, Value{0.0}, true));
  const std::vector<bool> greater = bools(*compare(Comparison::kGt, p, q));
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
    ASSERT_EQ(quotient[k], static_cast<double>(a / (b + 0.5F))) << i;
    ASSERT_EQ(less[k], a < b) << i;
    ASSERT_EQ(equal[k], b == 0.0F) << i;
    ASSERT_EQ(greater[k], static_cast<int32_t>(u) > static_cast<int32_t>(v)) << i;
  }
}

}  // namespace
}  // namespace strideweave::ops
