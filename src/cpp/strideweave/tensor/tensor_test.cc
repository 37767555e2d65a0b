#include "strideweave/tensor/tensor.h"

#include <gtest/gtest.h>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/util/error.h"

namespace strideweave {
namespace {

using T = IntTuple;
T tup(std::initializer_list<IntTuple> e) { return IntTuple::tuple(e); }

std::shared_ptr<CPU> iota(int64_t n) {
  std::vector<Value> values;
  for (int64_t i = 0; i < n; ++i) values.emplace_back(i);
  return std::make_shared<CPU>(DType::Int32(), std::nullopt, values);
}

std::vector<int64_t> ints(const std::vector<Value>& values) {
  std::vector<int64_t> out;
  for (const Value& v : values) out.push_back(std::get<int64_t>(v));
  return out;
}

TEST(core_tensor_representation__a_tensor_addresses_a_window_of_one_carrier,
     wrap_a_carrier_window) {
  auto t = Tensor::make(iota(11), Layout(tup({2, 3}), tup({1, 4})), 1);
  EXPECT_EQ(t->dtype(), DType::Int32());
  EXPECT_EQ(t->shape(), tup({2, 3}));
  EXPECT_EQ(ints(t->values()), (std::vector<int64_t>{1, 2, 5, 6, 9, 10}));
}

TEST(core_tensor_representation__a_tensor_addresses_a_window_of_one_carrier,
     reject_a_window_beyond_the_carrier) {
  EXPECT_THROW(Tensor::make(iota(10), Layout(tup({2, 3}), tup({1, 4})), 1), ValueError);
  EXPECT_THROW(Tensor::make(iota(10), Layout(T(2)), -1), ValueError);
  EXPECT_NO_THROW(Tensor::make(iota(0), Layout(T(0)), 5));  // an empty layout addresses nothing
}

TEST(core_tensor_representation__a_tensor_addresses_a_window_of_one_carrier,
     reject_a_released_carrier) {
  auto c = iota(4);
  c->release();
  EXPECT_THROW(Tensor::make(c, Layout(T(2)), 0), RuntimeError);
}

TEST(core_tensor_representation__views_share_their_carrier, slice_a_mode) {
  auto t = Tensor::make(iota(20), Layout(tup({4, 5})), 0);
  auto row = t->index({int64_t{1}});
  EXPECT_EQ(ints(row->values()), (std::vector<int64_t>{1, 5, 9, 13, 17}));
  auto cols = t->index({Slice{}, Slice{1, 3, 1}});
  EXPECT_EQ(cols->shape(), tup({4, 2}));
  EXPECT_EQ(ints(cols->values()), (std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(cols->subtensor("test").carrier, t->subtensor("test").carrier);
  EXPECT_THROW(t->index({int64_t{4}}), IndexError);
  EXPECT_THROW(t->index({int64_t{0}, int64_t{0}, int64_t{0}}), IndexError);
}

TEST(core_tensor_representation__views_share_their_carrier, broadcast_with_stride_zero) {
  auto t = Tensor::make(iota(2), Layout(tup({2, 1})), 0);
  auto b = t->broadcast_to(tup({2, 3}));
  EXPECT_EQ(b->subtensor("test").layout, Layout(tup({2, 3}), tup({1, 0})));
  EXPECT_EQ(ints(b->values()), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
}

TEST(core_tensor_representation__views_share_their_carrier, reject_an_incompatible_broadcast) {
  auto t = Tensor::make(iota(6), Layout(tup({2, 3})), 0);
  EXPECT_THROW(t->broadcast_to(tup({2, 4})), ValueError);
}

TEST(core_tensor_representation__multi_subtensor_tensors_are_validated_planes,
     reject_mismatched_planes) {
  const DType rec = DType::compound({{"x", DType::Int32()}, {"y", DType::Int32()}});
  auto a = Tensor::make(iota(3), Layout(T(3)), 0);
  auto b = Tensor::make(iota(4), Layout(T(4)), 0);
  EXPECT_THROW(Tensor::from_planes(rec, {a}), ValueError);
  EXPECT_THROW(Tensor::from_planes(rec, {a, b}), ValueError);
  EXPECT_THROW(Tensor::from_planes(DType::Int32(), {a, a}), TypeError);
  auto ok = Tensor::from_planes(rec, {a, a});
  EXPECT_TRUE(ok->is_multi_subtensor());
  EXPECT_THROW(ok->subtensor("carrier"), NotImplementedError);
  EXPECT_EQ(std::get<Record>(ok->values()[2]), (Record{{int64_t{2}, int64_t{2}}}));
}

TEST(core_tensor_representation__factories_copy_into_fresh_cpu_storage,
     build_a_tensor_from_nested_lists) {
  const std::vector<Value> rows{int64_t{1}, int64_t{2}, int64_t{3},
                                int64_t{4}, int64_t{5}, int64_t{6}};
  auto t = tensor_from_values(tup({2, 3}), rows, std::nullopt);
  EXPECT_EQ(t->dtype(), DType::Int32());
  EXPECT_EQ(t->subtensor("test").layout, Layout(tup({2, 3}), tup({1, 2})));
  // Colexicographic reading of the nested (row-major) input.
  EXPECT_EQ(ints(t->values()), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(&t->subtensor("test").carrier->carrier_class(), &CPU::static_class());
}

TEST(core_tensor_representation__factories_copy_into_fresh_cpu_storage, build_filled_tensors) {
  EXPECT_EQ(ints(arange(int64_t{2}, int64_t{8}, int64_t{2}, std::nullopt)->values()),
            (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(ints(full(T(3), int64_t{7}, std::nullopt)->values()), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(zeros(tup({2, 2}), DType::Float32())->dtype(), DType::Float32());
  EXPECT_THROW(arange(int64_t{0}, int64_t{5}, int64_t{0}, std::nullopt), ValueError);
  EXPECT_EQ(arange(int64_t{5}, int64_t{0}, int64_t{-2}, std::nullopt)->values().size(), 3u);
}

TEST(Factories, InferDtype) {
  EXPECT_EQ(infer_dtype({true, false}), DType::Bool());
  EXPECT_EQ(infer_dtype({int64_t{1}}), DType::Int32());
  EXPECT_EQ(infer_dtype({int64_t{1}, 2.0}), DType::Float32());
  EXPECT_EQ(infer_dtype({}), DType::Float32());
  EXPECT_THROW(infer_dtype({true, int64_t{1}}), TypeError);
}

}  // namespace
}  // namespace strideweave
