#include "strideweave/tensor/tensor.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/tensor/format.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

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

TEST(core_tensor_representation__a_tensors_text_shows_its_values_and_its_representation,
     show_a_small_tensors_values_and_representation) {
  auto c = iota(6);
  const auto t = Tensor::make(c, Layout(tup({2, 3})));
  EXPECT_EQ(format_tensor(*t), "Tensor([[0, 2, 4],\n        [1, 3, 5]], dtype=Int32, " +
                                   std::string("layout=(2,3):(1,2), offset=0, carrier=") +
                                   c->label() + ")");
  EXPECT_EQ(c->version(), 0u);
}

TEST(core_tensor_representation__a_tensors_text_shows_its_values_and_its_representation,
     clause2__values_read_as_specified) {
  EXPECT_EQ(format_value(DType::Float32(), 0.1f), "0.1");
  EXPECT_EQ(format_value(DType::Floating(), 0.1), "0.1");
  EXPECT_EQ(format_value(DType::Float32(), 2.0), "2.0");
  EXPECT_EQ(format_value(DType::Float32(), -1.0 / 0.0), "-inf");
  EXPECT_EQ(format_value(DType::Bool(), true), "True");
  EXPECT_EQ(format_value(DType::Int32(), int64_t{-3}), "-3");
  const DType record = DType::compound({{"x", DType::Float32()}, {"n", DType::Int32()}});
  EXPECT_EQ(format_value(record, Record{{0.5, int64_t{2}}}), "(0.5, 2)");
}

TEST(core_tensor_representation__a_tensors_text_shows_its_values_and_its_representation,
     summarize_a_large_tensor) {
  auto c = std::make_shared<CPU>(DType::Int32(), 10000);
  const auto t = Tensor::make(c, Layout(tup({10000, 100000000}), tup({1, 0})));
  const std::string text = format_tensor(*t);
  EXPECT_EQ(text.rfind("Tensor([[0, 0, 0, ..., 0, 0, 0],\n", 0), 0u) << text;
  EXPECT_NE(text.find("\n        ...,\n"), std::string::npos) << text;
}

TEST(core_tensor_representation__a_tensors_text_shows_its_values_and_its_representation,
     show_a_released_carrier) {
  auto c = iota(3);
  const auto t = Tensor::make(c, Layout(3));
  c->release();
  EXPECT_EQ(format_tensor(*t), "Tensor(<released>, dtype=Int32, layout=3:1, offset=0, carrier=" +
                                   c->label() + " (released))");
}

TEST(core_tensor_representation__len_and_iteration_follow_the_first_mode, clause1__len) {
  auto c = iota(24);
  EXPECT_EQ(Tensor::make(c, Layout(5))->length(), 5);
  EXPECT_EQ(Tensor::make(c, Layout(tup({tup({2, 3}), 4})))->length(), 6);
  const auto scalar = Tensor::make(c, Layout(tup({})), 3);
  EXPECT_THROW(scalar->length(), TypeError);
}

TEST(core_tensor_representation__numpy_reads_a_tensor_through_the_array_protocol,
     clause7__read_encoded_packs_values_and_records) {
  auto c = iota(12);
  const auto t = Tensor::make(c, Layout(tup({2, 3}), tup({1, 4})), 1);
  std::vector<int32_t> out(6);
  t->read_encoded(reinterpret_cast<std::byte*>(out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 5, 6, 9, 10}));
  auto flags =
      std::make_shared<Generic>(DType::Bool(), std::nullopt, std::vector<Value>{true, false, true});
  const DType record = DType::compound({{"n", DType::Int32()}, {"b", DType::Bool()}});
  const auto planes = Tensor::from_planes(
      record, {Tensor::make(c, Layout(3, 2), 1), Tensor::make(flags, Layout(3))});
  std::vector<std::byte> packed(3 * 5);
  planes->read_encoded(packed.data());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(decode(record, packed.data() + 5 * i), planes->values()[i]);
  }
  EXPECT_EQ(c->version(), 0u);
  EXPECT_EQ(flags->version(), 0u);
}

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TEST(core_tensor_representation__views_share_their_carrier, slice_a_mode__with_a_step) {
  // Offset and length of stepped slices: t[1:8:3] of 0..9 at offset 2 of a gapped mode.
  auto t = Tensor::make(iota(40), Layout(T(10), T(3)), 2);
  auto s = t->index({Slice{1, 8, 3}});
  EXPECT_EQ(s->subtensor("test").offset, 2 + 3);
  EXPECT_EQ(s->subtensor("test").layout, Layout(T(3), T(9)));
  EXPECT_EQ(ints(s->values()), (std::vector<int64_t>{5, 14, 23}));
  auto tail = t->index({Slice{7, std::nullopt, 2}});
  EXPECT_EQ(tail->subtensor("test").offset, 2 + 21);
  EXPECT_EQ(tail->subtensor("test").layout.size(), 2);
  auto none = t->index({Slice{8, 3, 2}});
  EXPECT_EQ(none->subtensor("test").layout.size(), 0);
  EXPECT_EQ(none->subtensor("test").offset, 2);
}

TEST(core_tensor_representation__views_share_their_carrier, slice_like_a_python_sequence) {
  auto t = Tensor::make(iota(5), Layout(T(5)), 0);
  const auto read = [&](Slice s) { return ints(t->index({s})->values()); };
  EXPECT_EQ(read(Slice{-2, std::nullopt, 1}), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(read(Slice{std::nullopt, std::nullopt, kInt64Max}), (std::vector<int64_t>{0}));
  EXPECT_EQ(read(Slice{0, 2, kInt64Max}), (std::vector<int64_t>{0}));
  EXPECT_EQ(read(Slice{kInt64Max, std::nullopt, 1}), (std::vector<int64_t>{}));
  EXPECT_EQ(read(Slice{kInt64Min, 2, 1}), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(read(Slice{-3, kInt64Max, 2}), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(read(Slice{1, -1, kInt64Max - 1}), (std::vector<int64_t>{1}));
  EXPECT_EQ(ints(t->index({int64_t{-1}})->values()), (std::vector<int64_t>{4}));
  EXPECT_EQ(ints(t->index({int64_t{-5}})->values()), (std::vector<int64_t>{0}));
  EXPECT_THROW(t->index({int64_t{-6}}), IndexError);
  EXPECT_THROW(t->index({kInt64Min}), IndexError);
}

TEST(core_tensor_representation__views_share_their_carrier, refuse_a_reversing_slice) {
  auto t = Tensor::make(iota(5), Layout(T(5)), 0);
  for (int64_t step : {int64_t{-1}, kInt64Min}) {
    const std::string message =
        testing_util::message_of<ValueError>([&] { t->index({Slice{{}, {}, step}}); });
    EXPECT_NE(message.find("strides are non-negative"), std::string::npos) << message;
  }
  EXPECT_THROW(t->index({Slice{{}, {}, 0}}), ValueError);
  EXPECT_EQ(t->subtensor("test").carrier->version(), 0u);
}

TEST(core_tensor_representation__factories_copy_into_fresh_cpu_storage,
     reject_an_impossible_length) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto fails = [](const Value& a, const Value& b, const Value& s, const char* subject) {
    const std::string message =
        testing_util::message_of<ValueError>([&] { arange(a, b, s, std::nullopt); });
    EXPECT_NE(message.find(subject), std::string::npos) << message;
  };
  fails(0.0, inf, 1.0, "infinite length");
  fails(0.0, -inf, 1.0, "infinite length");
  fails(0.0, 1.0, nan, "cannot compute the length");
  fails(nan, 1.0, 1.0, "cannot compute the length");
  fails(0.0, 1e30, 1e-30, "maximum allowed size");
  fails(int64_t{0}, kInt64Max, int64_t{1}, "9223372036854775807 elements of Int32");
  fails(kInt64Min, kInt64Max, int64_t{1}, "18446744073709551615 elements");
  const std::string zeros_message =
      testing_util::message_of<ValueError>([] { zeros(T(int64_t{1} << 62), DType::Float32()); });
  EXPECT_NE(zeros_message.find("4611686018427387904 elements of Float32"), std::string::npos)
      << zeros_message;
  EXPECT_THROW(full(T(int64_t{1} << 62), true, std::nullopt), MemoryError);
  // Exact counts at the int64 extremes, without overflow.
  // (Powers of two, so Float32 holds them exactly.)
  EXPECT_EQ(arange(kInt64Min, kInt64Max, int64_t{1} << 62, DType::Float32())->values(),
            (std::vector<Value>{-0x1p63, -0x1p62, 0.0, 0x1p62}));
}

TEST(core_tensor_representation__factories_copy_into_fresh_cpu_storage, clause3__int32_bounds) {
  const std::vector<Value> bounds{int64_t{-2147483648}, int64_t{2147483647}};
  auto t = tensor_from_values(T(2), bounds, DType::Int32());
  EXPECT_EQ(ints(t->values()), (std::vector<int64_t>{-2147483648, 2147483647}));
  EXPECT_THROW(tensor_from_values(T(1), {int64_t{2147483648}}, DType::Int32()), ValueError);
  EXPECT_THROW(tensor_from_values(T(1), {int64_t{-2147483649}}, DType::Int32()), ValueError);
}

}  // namespace
}  // namespace strideweave
