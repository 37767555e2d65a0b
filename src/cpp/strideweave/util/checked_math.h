// Overflow-checked int64 arithmetic for extents, strides and indices.
#pragma once

#include <cstdint>
#include <string_view>

#include "strideweave/util/error.h"

namespace strideweave {

// Returns a * b; throws ValueError naming `what` if the product overflows int64.
inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    throw ValueError(std::string(what) + " overflows a signed 64-bit integer");
  }
  return result;
}

// Returns a + b; throws ValueError naming `what` if the sum overflows int64.
inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) {
    throw ValueError(std::string(what) + " overflows a signed 64-bit integer");
  }
  return result;
}

// Ceiling division of non-negative a by positive b.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace strideweave
