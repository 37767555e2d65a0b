#include "strideweave/dtype/value.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::string describe_scalar(const Scalar& s) {
  if (const bool* b = std::get_if<bool>(&s)) return *b ? "True" : "False";
  if (const int64_t* i = std::get_if<int64_t>(&s)) return std::to_string(*i);
  std::ostringstream out;
  out.precision(17);
  out << std::get<double>(s);
  return out.str();
}

// d rounded to the nearest float; ValueError when it rounds past the largest float.
double round_to_float32(double d) {
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr double kRoundsToInfinity = 0x1p128 - 0x1p103;  // FLT_MAX + half an ulp
  if (std::isfinite(d) && std::fabs(d) > kMax) {
    if (std::fabs(d) >= kRoundsToInfinity) {
      std::ostringstream out;
      out.precision(17);
      out << "value " << d << " is out of range for Float32";
      throw ValueError(out.str());
    }
    return std::copysign(kMax, d);
  }
  return static_cast<double>(static_cast<float>(d));
}

Scalar coerce_scalar(const DType& dtype, const Scalar& s) {
  const auto wrong_kind = [&](const char* expected) {
    return TypeError("value " + describe_scalar(s) + " cannot be stored as " + dtype.name() +
                     ": expected " + expected);
  };
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      if (!std::holds_alternative<bool>(s)) throw wrong_kind("a bool");
      return s;
    case DTypeKind::kInt32: {
      const int64_t* i = std::get_if<int64_t>(&s);
      if (i == nullptr) throw wrong_kind("an integer");
      if (*i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max()) {
        throw ValueError("value " + std::to_string(*i) + " is out of range for Int32");
      }
      return s;
    }
    case DTypeKind::kFloat32:
    case DTypeKind::kFloating: {
      double d = 0;
      if (const int64_t* i = std::get_if<int64_t>(&s)) {
        d = static_cast<double>(*i);
      } else if (const double* x = std::get_if<double>(&s)) {
        d = *x;
      } else {
        throw wrong_kind("an integer or a float");
      }
      if (dtype.kind() == DTypeKind::kFloat32) d = round_to_float32(d);
      return d;
    }
    case DTypeKind::kAny:
      return s;
    case DTypeKind::kCompound:
      break;
  }
  throw TypeError("value " + describe_scalar(s) + " cannot be stored as " + dtype.name());
}

Scalar as_scalar(const Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  return std::get<double>(v);
}

Value as_value(const Scalar& s) {
  if (const bool* b = std::get_if<bool>(&s)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&s)) return *i;
  return std::get<double>(s);
}

template <typename T>
void store(std::byte* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}

template <typename T>
T load(const std::byte* src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

void encode_scalar(const DType& dtype, const Scalar& s, std::byte* dst) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      store<uint8_t>(dst, std::get<bool>(s) ? 1 : 0);
      return;
    case DTypeKind::kInt32:
      store<int32_t>(dst, static_cast<int32_t>(std::get<int64_t>(s)));
      return;
    case DTypeKind::kFloat32:
      store<float>(dst, static_cast<float>(std::get<double>(s)));
      return;
    default:
      throw TypeError(dtype.name() + " has no byte encoding");
  }
}

Scalar decode_scalar(const DType& dtype, const std::byte* src) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return load<uint8_t>(src) != 0;
    case DTypeKind::kInt32:
      return static_cast<int64_t>(load<int32_t>(src));
    case DTypeKind::kFloat32:
      return static_cast<double>(load<float>(src));
    default:
      throw TypeError(dtype.name() + " has no byte encoding");
  }
}

}  // namespace

std::string describe(const Value& value) {
  if (const Record* r = std::get_if<Record>(&value)) {
    std::string out = "(";
    for (std::size_t i = 0; i < r->fields.size(); ++i) {
      if (i != 0) out += ", ";
      out += describe_scalar(r->fields[i]);
    }
    return out + ")";
  }
  return describe_scalar(as_scalar(value));
}

Value coerce(const DType& dtype, const Value& value) {
  if (!dtype.is_compound()) {
    if (std::holds_alternative<Record>(value)) {
      throw TypeError("value " + describe(value) + " cannot be stored as " + dtype.name() +
                      ": expected a scalar");
    }
    return as_value(coerce_scalar(dtype, as_scalar(value)));
  }
  const Record* r = std::get_if<Record>(&value);
  if (r == nullptr) {
    throw TypeError("value " + describe(value) + " cannot be stored as " + dtype.name() +
                    ": expected a record of " + std::to_string(dtype.fields().size()) + " fields");
  }
  if (r->fields.size() != dtype.fields().size()) {
    throw ValueError("value " + describe(value) + " has " + std::to_string(r->fields.size()) +
                     " fields; " + dtype.name() + " has " + std::to_string(dtype.fields().size()));
  }
  Record out;
  for (std::size_t i = 0; i < r->fields.size(); ++i) {
    out.fields.push_back(coerce_scalar(dtype.fields()[i].dtype, r->fields[i]));
  }
  return out;
}

Value zero_of(const DType& dtype) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return false;
    case DTypeKind::kInt32:
    case DTypeKind::kAny:
      return int64_t{0};
    case DTypeKind::kFloat32:
    case DTypeKind::kFloating:
      return 0.0;
    case DTypeKind::kCompound: {
      Record r;
      for (const Field& f : dtype.fields()) r.fields.push_back(as_scalar(zero_of(f.dtype)));
      return r;
    }
  }
  return int64_t{0};
}

void encode(const DType& dtype, const Value& value, std::byte* dst) {
  if (!dtype.is_compound()) {
    encode_scalar(dtype, as_scalar(value), dst);
    return;
  }
  const Record& r = std::get<Record>(value);
  for (std::size_t i = 0; i < r.fields.size(); ++i) {
    const DType& field = dtype.fields()[i].dtype;
    encode_scalar(field, r.fields[i], dst);
    dst += *field.itemsize();
  }
}

Value decode(const DType& dtype, const std::byte* src) {
  if (!dtype.is_compound()) return as_value(decode_scalar(dtype, src));
  Record r;
  for (const Field& f : dtype.fields()) {
    r.fields.push_back(decode_scalar(f.dtype, src));
    src += *f.dtype.itemsize();
  }
  return r;
}

void validate_encoding(const DType& dtype, const std::byte* src, int64_t count) {
  std::vector<std::size_t> bool_offsets;
  if (dtype.kind() == DTypeKind::kBool) bool_offsets.push_back(0);
  std::size_t at = 0;
  for (const Field& f : dtype.fields()) {
    if (f.dtype.kind() == DTypeKind::kBool) bool_offsets.push_back(at);
    at += *f.dtype.itemsize();
  }
  if (bool_offsets.empty()) return;
  const std::size_t itemsize = *dtype.itemsize();
  for (int64_t i = 0; i < count; ++i) {
    for (std::size_t offset : bool_offsets) {
      const auto byte =
          std::to_integer<unsigned>(src[static_cast<std::size_t>(i) * itemsize + offset]);
      if (byte > 1) {
        throw ValueError("item " + std::to_string(i) + " holds the byte " + std::to_string(byte) +
                         " where " + dtype.name() + " stores a Bool (0 or 1)");
      }
    }
  }
}

}  // namespace strideweave
