#include "strideweave/tensor/factories.h"

#include <cmath>
#include <limits>

#include "strideweave/carrier/cpu.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/allocation.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

double as_double(const Value& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw TypeError("arange needs integer or float bounds, not " + describe(v));
}

// The largest byte count of a buffer: the greatest signed 64-bit integer.
constexpr double kMaxBufferBytes = 9223372036854775807.0;

// Throws ValueError when `count` elements of `dtype` need more bytes than a
// buffer can hold (NumPy's "maximum allowed size"); `what` names the request.
void require_allowed_size(uint64_t count, const DType& dtype, const std::string& what) {
  const auto itemsize = static_cast<uint64_t>(dtype.itemsize().value_or(1));
  if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / itemsize) {
    throw ValueError(what + " needs " + std::to_string(count) + " elements of " + dtype.name() +
                     ", more than the maximum allowed size of a buffer (2**63 - 1 bytes)");
  }
}

// The same for a count computed in floating point (finite, non-negative).
void require_allowed_size(double count, const DType& dtype, const std::string& what) {
  if (count >= 0x1p63) {
    throw ValueError(what + " needs " + describe(Value(count)) + " elements of " + dtype.name() +
                     ", more than the maximum allowed size of a buffer (2**63 - 1 bytes)");
  }
  require_allowed_size(static_cast<uint64_t>(count), dtype, what);
}

}  // namespace

DType infer_dtype(const std::vector<Value>& values) {
  bool any_bool = false;
  bool any_number = false;
  bool any_float = false;
  for (const Value& v : values) {
    if (std::holds_alternative<Record>(v)) {
      throw TypeError("cannot infer a dtype for the record " + describe(v) + "; pass dtype=");
    }
    any_bool |= std::holds_alternative<bool>(v);
    any_number |= !std::holds_alternative<bool>(v);
    any_float |= std::holds_alternative<double>(v);
  }
  if (any_bool && any_number) {
    throw TypeError("cannot infer a dtype for a mix of bools and numbers; pass dtype=");
  }
  if (any_bool) return DType::Bool();
  if (any_number && !any_float) return DType::Int32();
  return DType::Float32();
}

std::shared_ptr<Tensor> tensor_from_values(const IntTuple& shape, const std::vector<Value>& values,
                                           std::optional<DType> dtype) {
  const Layout layout = compact_col_major(shape);
  if (static_cast<int64_t>(values.size()) != layout.size()) {
    throw ValueError("shape " + shape.to_string() + " has " + std::to_string(layout.size()) +
                     " elements but " + std::to_string(values.size()) + " values were given");
  }
  const DType resolved = dtype ? *dtype : infer_dtype(values);
  require_allowed_size(static_cast<uint64_t>(layout.size()), resolved,
                       "a tensor of shape " + shape.to_string());
  auto carrier = std::make_shared<CPU>(resolved, layout.size());
  // Nested lists enumerate the first leaf outermost: encode them in that
  // order, then let the kernel lay them out column-major.
  const std::size_t itemsize = carrier->itemsize();
  std::vector<std::byte> nested = allocating("tensor", layout.size(), "elements", [&] {
    return std::vector<std::byte>(values.size() * itemsize);
  });
  for (std::size_t n = 0; n < values.size(); ++n) {
    encode(resolved, coerce(resolved, values[n]), nested.data() + n * itemsize);
  }
  copy_strided(nested.data(), compact_row_major(shape), 0, carrier->data(), layout, 0, itemsize);
  return Tensor::make(std::move(carrier), layout, 0);
}

std::shared_ptr<Tensor> tensor_from_tensor(const Tensor& source) {
  const std::vector<int64_t> extents = source.shape().leaves();
  const IntTuple shape =
      extents.size() == 1 ? IntTuple(extents.front())
                          : IntTuple::tuple(std::vector<IntTuple>(extents.begin(), extents.end()));
  const Layout layout = compact_col_major(shape);
  auto carrier = std::make_shared<CPU>(source.dtype(), layout.size());
  if (source.is_multi_subtensor()) {
    // Its records, packed field by field in flat order: the compact layout's.
    source.read_encoded(carrier->data());
  } else {
    source.read_into(
        {carrier->data(), static_cast<std::size_t>(layout.size()) * carrier->itemsize()}, layout);
  }
  return Tensor::make(std::move(carrier), layout, 0);
}

std::shared_ptr<Tensor> full(const IntTuple& shape, const Value& value,
                             std::optional<DType> dtype) {
  const Layout layout = compact_col_major(shape);
  const DType resolved = dtype ? *dtype : infer_dtype({value});
  const Value coerced = coerce(resolved, value);
  require_allowed_size(static_cast<uint64_t>(layout.size()), resolved,
                       "a tensor of shape " + shape.to_string());
  auto carrier = std::make_shared<CPU>(resolved, layout.size());
  std::vector<std::byte> item(carrier->itemsize());
  encode(resolved, coerced, item.data());
  const std::vector<int64_t> zeros(shape.leaf_count(), 0);
  copy_strided(item.data(), Layout(shape, unflatten(zeros, shape)), 0, carrier->data(), layout, 0,
               carrier->itemsize());
  return Tensor::make(std::move(carrier), layout, 0);
}

std::shared_ptr<Tensor> zeros(const IntTuple& shape, const DType& dtype) {
  return full(shape, zero_of(dtype), dtype);
}

std::shared_ptr<Tensor> arange(const Value& start, const Value& stop, const Value& step,
                               std::optional<DType> dtype) {
  const DType resolved = dtype ? *dtype : infer_dtype({start, stop, step});
  std::vector<Value> values;
  const bool integral = std::holds_alternative<int64_t>(start) &&
                        std::holds_alternative<int64_t>(stop) &&
                        std::holds_alternative<int64_t>(step);
  const auto request = [&] {
    return "arange(" + describe(start) + ", " + describe(stop) + ", " + describe(step) + ")";
  };
  const auto reserved = [&](int64_t count) {
    return allocating("arange", count, "elements", [&] {
      std::vector<Value> out;
      out.reserve(static_cast<std::size_t>(count));
      return out;
    });
  };
  if (integral) {
    const int64_t a = std::get<int64_t>(start);
    const int64_t b = std::get<int64_t>(stop);
    const int64_t s = std::get<int64_t>(step);
    if (s == 0) throw ValueError("arange step must not be zero");
    // Unsigned arithmetic is exact here: the span of two int64 values and the
    // magnitude of a step fit in uint64, and every value produced fits int64.
    const auto ua = static_cast<uint64_t>(a);
    const auto ub = static_cast<uint64_t>(b);
    const auto us = static_cast<uint64_t>(s);
    uint64_t n = 0;
    if (s > 0 && b > a) n = (ub - ua - 1) / us + 1;
    if (s < 0 && b < a) n = (ua - ub - 1) / (0 - us) + 1;
    require_allowed_size(n, resolved, request());
    const auto count = static_cast<int64_t>(n);
    values = reserved(count);
    for (int64_t k = 0; k < count; ++k) {
      values.emplace_back(static_cast<int64_t>(ua + static_cast<uint64_t>(k) * us));
    }
  } else {
    const double a = as_double(start);
    const double b = as_double(stop);
    const double s = as_double(step);
    if (s == 0) throw ValueError("arange step must not be zero");
    const double exact = std::ceil((b - a) / s);
    if (std::isnan(exact)) {
      throw ValueError(request() + ": cannot compute the length from a NaN bound or step");
    }
    if (std::isinf(exact)) {
      throw ValueError(request() + " has an infinite length, more than the maximum allowed size");
    }
    const double n = std::max(0.0, exact);
    require_allowed_size(n, resolved, request());
    const auto count = static_cast<int64_t>(n);
    values = reserved(count);
    for (int64_t k = 0; k < count; ++k) values.emplace_back(a + static_cast<double>(k) * s);
  }
  return tensor_from_values(IntTuple(static_cast<int64_t>(values.size())), values, resolved);
}

}  // namespace strideweave
