#include "strideweave/dtype/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strideweave/dtype/value.h"
#include "strideweave/util/error.h"

namespace strideweave {
namespace {

TEST(
    core_tensor_representation__logical_dtypes_are_concrete_scalars_abstract_families_or_compound_records,
    describe_the_scalar_dtypes) {
  EXPECT_EQ(DType::Bool().itemsize(), 1u);
  EXPECT_EQ(DType::Int32().itemsize(), 4u);
  EXPECT_EQ(DType::Float32().itemsize(), 4u);
  EXPECT_FALSE(DType::Floating().itemsize().has_value());
  EXPECT_FALSE(DType::Any().itemsize().has_value());
  EXPECT_TRUE(DType::Float32().is_concrete());
  EXPECT_TRUE(DType::Any().is_abstract());
  EXPECT_NE(DType::Float32(), DType::Floating());
}

TEST(
    core_tensor_representation__logical_dtypes_are_concrete_scalars_abstract_families_or_compound_records,
    build_a_compound_dtype) {
  const DType d = DType::compound({{"x", DType::Float32()}, {"n", DType::Int32()}});
  EXPECT_EQ(d.itemsize(), 8u);
  EXPECT_EQ(d.fields().size(), 2u);
  EXPECT_EQ(d.name(), "compound(x=Float32, n=Int32)");
  EXPECT_EQ(d, DType::compound({{"x", DType::Float32()}, {"n", DType::Int32()}}));
  EXPECT_EQ(d.hash(), DType::compound({{"x", DType::Float32()}, {"n", DType::Int32()}}).hash());
  EXPECT_NE(d, DType::compound({{"n", DType::Int32()}, {"x", DType::Float32()}}));
}

TEST(
    core_tensor_representation__logical_dtypes_are_concrete_scalars_abstract_families_or_compound_records,
    reject_a_malformed_compound_dtype) {
  EXPECT_THROW(DType::compound({{"x", DType::Floating()}}), TypeError);
  EXPECT_THROW(DType::compound({}), ValueError);
  EXPECT_THROW(DType::compound({{"x", DType::Int32()}, {"x", DType::Bool()}}), ValueError);
  EXPECT_THROW(DType::compound({{"", DType::Int32()}}), ValueError);
}

TEST(carrier_storage__entry_points_read_and_write_slots_and_count_mutations,
     round_a_float32_value) {
  EXPECT_EQ(std::get<double>(coerce(DType::Float32(), 0.1)), static_cast<double>(0.1f));
  EXPECT_EQ(std::get<double>(coerce(DType::Floating(), 0.1)), 0.1);
  EXPECT_THROW(coerce(DType::Float32(), 1e300), ValueError);
}

TEST(Value, CoercionRejectsWrongKindsAndRanges) {
  EXPECT_THROW(coerce(DType::Int32(), true), TypeError);
  EXPECT_THROW(coerce(DType::Int32(), 1.5), TypeError);
  EXPECT_THROW(coerce(DType::Int32(), int64_t{1} << 31), ValueError);
  EXPECT_THROW(coerce(DType::Bool(), int64_t{1}), TypeError);
  EXPECT_THROW(coerce(DType::Float32(), false), TypeError);
  EXPECT_EQ(std::get<bool>(coerce(DType::Any(), true)), true);
  const DType rec = DType::compound({{"x", DType::Float32()}, {"n", DType::Int32()}});
  EXPECT_THROW(coerce(rec, Record{{1.0}}), ValueError);
  EXPECT_THROW(coerce(rec, 1.0), TypeError);
}

TEST(Value, EncodeDecodeRoundTrips) {
  const DType rec = DType::compound({{"x", DType::Float32()}, {"b", DType::Bool()}});
  std::byte buffer[8] = {};
  const Value v = coerce(rec, Record{{2.5, true}});
  encode(rec, v, buffer);
  EXPECT_EQ(decode(rec, buffer), v);
  encode(DType::Int32(), int64_t{-7}, buffer);
  EXPECT_EQ(std::get<int64_t>(decode(DType::Int32(), buffer)), -7);
}

}  // namespace
}  // namespace strideweave
