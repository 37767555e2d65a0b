#include "strideweave/util/env.h"

#include <cctype>
#include <cstdlib>

namespace strideweave {

std::optional<uint64_t> parse_bounded_integer(const char* text, const IntegerBounds& bounds) {
  const char* p = text;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  if (!std::isdigit(static_cast<unsigned char>(*p))) return std::nullopt;
  uint64_t value = 0;
  bool above = false;  // the digits exceed uint64_t
  for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) {
    const auto digit = static_cast<uint64_t>(*p - '0');
    if (value > (UINT64_MAX - digit) / 10) above = true;
    if (!above) value = value * 10 + digit;
  }
  if (bounds.trailing_blanks) {
    while (*p == ' ' || *p == '\t') ++p;
  }
  if (*p != '\0') return std::nullopt;
  if (negative && (above || value != 0)) return std::nullopt;
  if (above || value > bounds.max) {
    if (!bounds.clamp_above) return std::nullopt;
    return bounds.max;
  }
  return value;
}

std::optional<uint64_t> env_integer(const char* name, const IntegerBounds& bounds) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  return parse_bounded_integer(text, bounds);
}

}  // namespace strideweave
