#include "strideweave/tensor/factories.h"

#include <cmath>

#include "strideweave/carrier/cpu.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

double as_double(const Value& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw TypeError("arange needs integer or float bounds, not " + describe(v));
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
  auto carrier = std::make_shared<CPU>(resolved, layout.size());
  // Nested lists enumerate the first leaf outermost: encode them in that
  // order, then let the kernel lay them out column-major.
  const std::size_t itemsize = carrier->itemsize();
  std::vector<std::byte> nested(values.size() * itemsize);
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
  source.read_into({carrier->data(), static_cast<std::size_t>(layout.size()) * carrier->itemsize()},
                   layout);
  return Tensor::make(std::move(carrier), layout, 0);
}

std::shared_ptr<Tensor> full(const IntTuple& shape, const Value& value,
                             std::optional<DType> dtype) {
  const Layout layout = compact_col_major(shape);
  const DType resolved = dtype ? *dtype : infer_dtype({value});
  const Value coerced = coerce(resolved, value);
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
  if (integral) {
    const int64_t a = std::get<int64_t>(start);
    const int64_t b = std::get<int64_t>(stop);
    const int64_t s = std::get<int64_t>(step);
    if (s == 0) throw ValueError("arange step must not be zero");
    int64_t span = 0;
    if (__builtin_sub_overflow(b, a, &span)) throw ValueError("arange bounds are too far apart");
    const int64_t count = std::max<int64_t>(0, span / s + ((span % s != 0) ? 1 : 0));
    values.reserve(static_cast<std::size_t>(count));  // throws when absurd
    for (int64_t k = 0; k < count; ++k) values.emplace_back(a + k * s);
  } else {
    const double a = as_double(start);
    const double b = as_double(stop);
    const double s = as_double(step);
    if (s == 0) throw ValueError("arange step must not be zero");
    const double count = std::max(0.0, std::ceil((b - a) / s));
    values.reserve(static_cast<std::size_t>(count));
    for (int64_t k = 0; k < static_cast<int64_t>(count); ++k) {
      values.emplace_back(a + static_cast<double>(k) * s);
    }
  }
  return tensor_from_values(IntTuple(static_cast<int64_t>(values.size())), values, resolved);
}

}  // namespace strideweave
