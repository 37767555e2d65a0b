// The parser of integer environment variables (util/env.h), under the rules
// of each of its callers: the thread count (bounded, blanks may follow), the
// cache budget and the emulated latency (a value above the bound reads as the
// bound). The thread count's own test is in exec/thread_pool_test.cc.
#include "strideweave/util/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <optional>

namespace strideweave {
namespace {

TEST(Env, ReadsADecimalIntegerAsStrtollDoes) {
  const IntegerBounds any;
  EXPECT_EQ(parse_bounded_integer("0", any), 0u);
  EXPECT_EQ(parse_bounded_integer("42", any), 42u);
  EXPECT_EQ(parse_bounded_integer(" \t\n+42", any), 42u);
  EXPECT_EQ(parse_bounded_integer("-0", any), 0u);
  EXPECT_EQ(parse_bounded_integer("007", any), 7u);
  EXPECT_EQ(parse_bounded_integer("18446744073709551615", any), UINT64_MAX);
  for (const char* bad : {"", " ", "+", "-", "- 1", "x", "4x", "4 ", "0x10", "1e3", "-1",
                          "18446744073709551616", "99999999999999999999999"}) {
    EXPECT_EQ(parse_bounded_integer(bad, any), std::nullopt) << "'" << bad << "'";
  }
}

TEST(Env, BlanksMayFollowTheDigitsOnlyWhenAllowed) {
  const IntegerBounds blanks{.trailing_blanks = true};
  EXPECT_EQ(parse_bounded_integer("12 \t ", blanks), 12u);
  EXPECT_EQ(parse_bounded_integer("12 \t ", IntegerBounds{}), std::nullopt);
  EXPECT_EQ(parse_bounded_integer("12\n", blanks), std::nullopt);
  EXPECT_EQ(parse_bounded_integer("12 3", blanks), std::nullopt);
}

TEST(Env, AValueAboveTheBoundIsInvalidOrTheBound) {
  const IntegerBounds refuse{.max = 1024};
  EXPECT_EQ(parse_bounded_integer("1024", refuse), 1024u);
  EXPECT_EQ(parse_bounded_integer("1025", refuse), std::nullopt);
  EXPECT_EQ(parse_bounded_integer("99999999999999999999999", refuse), std::nullopt);
  const IntegerBounds clamp{.max = INT64_MAX, .clamp_above = true};
  EXPECT_EQ(parse_bounded_integer("9223372036854775808", clamp), uint64_t{INT64_MAX});
  EXPECT_EQ(parse_bounded_integer("99999999999999999999999", clamp), uint64_t{INT64_MAX});
  EXPECT_EQ(parse_bounded_integer("-5", clamp), std::nullopt);
}

TEST(Env, ReadsTheVariableWhenSet) {
  const char* name = "STRIDEWEAVE_ENV_TEST_INTEGER";
  ::unsetenv(name);
  EXPECT_EQ(env_integer(name, IntegerBounds{}), std::nullopt);
  ::setenv(name, "250", 1);
  EXPECT_EQ(env_integer(name, IntegerBounds{}), 250u);
  ::setenv(name, "lots", 1);
  EXPECT_EQ(env_integer(name, IntegerBounds{}), std::nullopt);
  ::unsetenv(name);
}

}  // namespace
}  // namespace strideweave
