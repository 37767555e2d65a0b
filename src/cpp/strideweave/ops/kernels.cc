#include "strideweave/ops/kernels.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"

namespace strideweave::ops {

namespace {

// A fresh result: a CPU carrier under the canonical layout of a shape.
struct Fresh {
  std::shared_ptr<CPU> carrier;
  Layout layout;
  int64_t size;

  Fresh(const DType& dtype, const IntTuple& shape)
      : carrier(std::make_shared<CPU>(dtype, shape_size(shape))),
        layout(compact_col_major(shape)),
        size(layout.size()) {}

  template <class T>
  T* items() const {
    return reinterpret_cast<T*>(carrier->data());
  }

  std::shared_ptr<Tensor> finish() && {
    return Tensor::make(std::move(carrier), std::move(layout), 0);
  }
};

// Calls fn(const std::byte* items) under t's carrier lock with t's elements in
// canonical order: in place when the storage is host memory and the view is
// canonical-contiguous, else gathered into `scratch`. fn is not called for an
// empty tensor (the liveness check still is).
template <class F>
void with_canonical(const Tensor& t, const Layout& canonical, const char* op,
                    std::vector<std::byte>& scratch, F&& fn) {
  const Subtensor& s = t.subtensor(op);
  s.carrier->read_locked(op, [&](const SlotReader& reader) {
    const int64_t n = s.layout.size();
    if (n == 0) return;
    if (is_canonical_contiguous(s.layout)) {
      if (const std::byte* host = reader.host_range(s.offset, n)) {
        fn(host);
        return;
      }
    }
    scratch.resize(static_cast<std::size_t>(n) * *t.dtype().itemsize());
    reader.gather(s.layout, s.offset, scratch.data(), canonical);
    fn(static_cast<const std::byte*>(scratch.data()));
  });
}

// The element type of a dtype's arithmetic: float, or uint32_t for Int32 so
// that overflow wraps (two's complement, the same bits as int32).
template <class F>
void by_dtype(const DType& dtype, F&& f) {
  if (dtype == DType::Float32()) {
    f(float{});
  } else {
    f(uint32_t{});
  }
}

struct Add {
  template <class T>
  static T f(T x, T y) {
    return static_cast<T>(x + y);
  }
};
struct Sub {
  template <class T>
  static T f(T x, T y) {
    return static_cast<T>(x - y);
  }
};
struct Mul {
  template <class T>
  static T f(T x, T y) {
    return static_cast<T>(x * y);
  }
};

template <class F>
void by_arith(Arith arith, F&& f) {
  switch (arith) {
    case Arith::kAdd:
      f(Add{});
      return;
    case Arith::kSub:
      f(Sub{});
      return;
    case Arith::kMul:
      f(Mul{});
      return;
  }
}

template <class T>
T item(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}

// The constant as the element type T of its (already converted) dtype.
template <class T>
T constant_as(const Value& c) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(std::get<double>(c));
  } else {
    return static_cast<uint32_t>(std::get<int64_t>(c));
  }
}

// One top-level mode per entry: the mode sizes of `shape`.
std::vector<int64_t> mode_sizes(const IntTuple& shape) {
  if (shape.is_leaf()) return {shape.value()};
  std::vector<int64_t> sizes;
  sizes.reserve(shape.rank());
  for (const IntTuple& mode : shape.elements()) sizes.push_back(shape_size(mode));
  return sizes;
}

}  // namespace

bool is_canonical_contiguous(const Layout& layout) noexcept {
  int64_t expected = 1;
  for (const LeafMode& m : layout.leaf_modes()) {
    if (m.extent != 1 && m.stride != expected) return false;
    expected *= m.extent;
  }
  return true;
}

std::shared_ptr<Tensor> binary_kernel(Arith arith, const Tensor& a, const Tensor& b,
                                      const char* op) {
  Fresh out(a.dtype(), a.shape());
  std::vector<std::byte> scratch;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.items<T>();
    const auto n = static_cast<std::size_t>(out.size);
    with_canonical(a, out.layout, op, scratch,
                   [&](const std::byte* pa) { std::memcpy(o, pa, n * sizeof(T)); });
    by_arith(arith, [&](auto k) {
      using K = decltype(k);
      with_canonical(b, out.layout, op, scratch, [&](const std::byte* pb) {
        for (std::size_t i = 0; i < n; ++i) o[i] = K::f(o[i], item<T>(pb, int64_t(i)));
      });
    });
  });
  return std::move(out).finish();
}

std::shared_ptr<Tensor> scalar_kernel(Arith arith, const Tensor& a, const Value& c,
                                      bool constant_first, const char* op) {
  Fresh out(a.dtype(), a.shape());
  std::vector<std::byte> scratch;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.items<T>();
    const T k_c = constant_as<T>(c);
    const auto n = out.size;
    by_arith(arith, [&](auto k) {
      using K = decltype(k);
      with_canonical(a, out.layout, op, scratch, [&](const std::byte* pa) {
        if (constant_first) {
          for (int64_t i = 0; i < n; ++i) o[i] = K::f(k_c, item<T>(pa, i));
        } else {
          for (int64_t i = 0; i < n; ++i) o[i] = K::f(item<T>(pa, i), k_c);
        }
      });
    });
  });
  return std::move(out).finish();
}

std::shared_ptr<Tensor> neg_kernel(const Tensor& a, const char* op) {
  Fresh out(a.dtype(), a.shape());
  std::vector<std::byte> scratch;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.items<T>();
    const auto n = out.size;
    with_canonical(a, out.layout, op, scratch, [&](const std::byte* pa) {
      for (int64_t i = 0; i < n; ++i) o[i] = Sub::f(T{0}, item<T>(pa, i));
    });
  });
  return std::move(out).finish();
}

std::shared_ptr<Tensor> copy_kernel(const Tensor& a, const char* op) {
  Fresh out(a.dtype(), a.shape());
  std::vector<std::byte> scratch;
  const std::size_t bytes = static_cast<std::size_t>(out.size) * *a.dtype().itemsize();
  with_canonical(a, out.layout, op, scratch,
                 [&](const std::byte* pa) { std::memcpy(out.carrier->data(), pa, bytes); });
  return std::move(out).finish();
}

std::shared_ptr<Tensor> sum_kernel(const Tensor& a, const std::vector<bool>& reduced,
                                   const IntTuple& shape, const char* op) {
  Fresh out(a.dtype(), shape);
  // The input as its top-level modes, column-major; the output strides of the
  // kept modes, 0 for the reduced ones.
  const std::vector<int64_t> sizes = mode_sizes(a.shape());
  std::vector<IntTuple> extents;
  std::vector<IntTuple> in_strides;
  std::vector<IntTuple> out_strides;
  int64_t in_stride = 1;
  int64_t out_stride = 1;
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    extents.emplace_back(sizes[m]);
    in_strides.emplace_back(in_stride);
    out_strides.emplace_back(reduced[m] ? 0 : out_stride);
    in_stride *= sizes[m];
    if (!reduced[m]) out_stride *= sizes[m];
  }
  const IntTuple walk_shape = IntTuple::tuple(extents);
  const Layout in_layout(walk_shape, IntTuple::tuple(in_strides));
  const Layout out_layout(walk_shape, IntTuple::tuple(out_strides));
  bool empty = false;
  const std::vector<internal_runs::JointMode> modes =
      internal_runs::joint_modes(in_layout, out_layout, empty);
  std::vector<std::byte> scratch;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    // Float32 sums each innermost stretch in double; Int32 wraps.
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint32_t>;
    T* o = out.items<T>();
    with_canonical(a, compact_col_major(a.shape()), op, scratch, [&](const std::byte* pa) {
      const T* in = reinterpret_cast<const T*>(pa);
      internal_runs::walk_joint(modes, 0, 0,
                                [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
                                  if (ds == 0) {
                                    Acc acc = static_cast<Acc>(o[d]);
                                    for (int64_t i = 0; i < n; ++i)
                                      acc = static_cast<Acc>(acc + in[s + i * ss]);
                                    o[d] = static_cast<T>(acc);
                                  } else {
                                    for (int64_t i = 0; i < n; ++i)
                                      o[d + i * ds] = Add::f(o[d + i * ds], in[s + i * ss]);
                                  }
                                });
    });
  });
  return std::move(out).finish();
}

}  // namespace strideweave::ops
