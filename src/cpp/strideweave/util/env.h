// Environment variables read as integers: the one parser behind StrideWeave's
// integer settings (STRIDEWEAVE_NUM_THREADS in exec/thread_pool.cc,
// STRIDEWEAVE_HOST_CACHE_BYTES in util/mapped_memory.cc,
// STRIDEWEAVE_METAL_LATENCY_US in device/emulated.cc).
//
// The parser only says whether the text is a valid value; each caller keeps
// its own answer to one that is not: the thread count throws ValueError
// naming the variable, the cache budget and the latency keep their defaults.
// The rules (the bound, what a value above it does, whether blanks may follow
// the digits) are each caller's, as they were before the parsers were one.
//
// Thread safety: parse_bounded_integer has no state; env_integer reads the
// environment (std::getenv), which no thread may change meanwhile.
#pragma once

#include <cstdint>
#include <optional>

namespace strideweave {

// How parse_bounded_integer reads a value.
struct IntegerBounds {
  // The largest valid value.
  uint64_t max = UINT64_MAX;
  // A value above `max` (however many digits) reads as `max`; otherwise it is
  // not valid.
  bool clamp_above = false;
  // Spaces and tabs may follow the digits.
  bool trailing_blanks = false;
};

// `text` read as a decimal integer in [0, bounds.max]: leading white space
// (as std::isspace says) and a sign are allowed, as strtoll reads them, then
// one or more digits, then nothing (or only spaces and tabs, with
// bounds.trailing_blanks). A negative value is not valid ("-0" is 0). nullopt
// when the text is not valid.
std::optional<uint64_t> parse_bounded_integer(const char* text, const IntegerBounds& bounds);

// The environment variable `name` read by parse_bounded_integer: nullopt when
// it is not set, and when its text is not valid.
std::optional<uint64_t> env_integer(const char* name, const IntegerBounds& bounds);

}  // namespace strideweave
