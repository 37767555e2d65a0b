// Test-only helper shared by the C++ unit tests (never installed).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace strideweave::testing_util {

// Runs `f`, expects it to throw E, and returns the exception's message (empty,
// with a recorded failure, when nothing or something else was thrown).
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

}  // namespace strideweave::testing_util
