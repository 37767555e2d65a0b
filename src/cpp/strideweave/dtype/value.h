// Element values: what a carrier slot holds, independent of how a carrier
// stores it (spec/carrier-storage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "strideweave/dtype/dtype.h"

namespace strideweave {

// One scalar: a bool, an integer or a floating-point number.
using Scalar = std::variant<bool, int64_t, double>;

// The value of a compound dtype: one scalar per field, in field order.
struct Record {
  std::vector<Scalar> fields;
  friend bool operator==(const Record&, const Record&) = default;
};

// A slot's value: a scalar, or a record for a compound dtype.
using Value = std::variant<bool, int64_t, double, Record>;

// `value` converted to `dtype`:
//   Bool accepts a bool; Int32 an integer in [-2^31, 2^31); Float32 an integer
//   or a float, rounded to single precision; Floating an integer or a float,
//   as a double; Any any scalar, unchanged; a compound dtype a record with one
//   convertible scalar per field.
// Throws TypeError for a value of the wrong kind (including a bool for a
// numeric dtype) and ValueError for an out-of-range integer or a record of the
// wrong length; messages name the value and the dtype.
Value coerce(const DType& dtype, const Value& value);

// The zero of `dtype`: false, 0, 0.0, or a record of field zeros.
Value zero_of(const DType& dtype);

// A short rendering of `value` for messages: `true`, `3`, `2.5`, `(1, 2.5)`.
std::string describe(const Value& value);

// Native-endian encoding of a coerced value of concrete or compound `dtype`
// into dtype.itemsize() bytes at `dst` (compound fields packed in order).
void encode(const DType& dtype, const Value& value, std::byte* dst);

// The value stored at `src` by encode.
Value decode(const DType& dtype, const std::byte* src);

// Checks `count` items of concrete or compound `dtype` encoded at `src`:
// every bit pattern is a value except a Bool byte other than 0 or 1, which
// throws ValueError naming the item.
void validate_encoding(const DType& dtype, const std::byte* src, int64_t count);

}  // namespace strideweave
