// Allocation failures as the core's MemoryError.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "strideweave/util/error.h"

namespace strideweave {

// Returns allocate(). A failed allocation inside it (std::bad_alloc, or
// std::length_error from a container asked for more than it can hold) throws
// MemoryError "<subject>: cannot allocate <count> <unit>" instead.
template <typename F>
decltype(auto) allocating(std::string_view subject, int64_t count, std::string_view unit,
                          F&& allocate) {
  try {
    return std::forward<F>(allocate)();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  throw MemoryError(std::string(subject) + ": cannot allocate " + std::to_string(count) + " " +
                    std::string(unit));
}

}  // namespace strideweave
