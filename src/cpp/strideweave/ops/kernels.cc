#include "strideweave/ops/kernels.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"

namespace strideweave::ops {

namespace {

// A fresh result: a CPU carrier under the canonical layout of a shape, zeroed
// for kernels that accumulate into it, else left for the kernel to fill.
struct Fresh {
  std::shared_ptr<CPU> carrier;
  Layout layout;
  int64_t size;

  Fresh(const DType& dtype, const IntTuple& shape, bool zeroed = false)
      : carrier(zeroed ? std::make_shared<CPU>(dtype, shape_size(shape))
                       : CPU::uninitialized(dtype, shape_size(shape))),
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

// The items of non-empty `t` (its subtensor `s`) in canonical order, under the
// carrier lock `reader` stands for: in place when the storage is host memory
// and the view is canonical-contiguous, else gathered into `scratch`.
const std::byte* canonical_items(const SlotReader& reader, const Tensor& t, const Subtensor& s,
                                 const Layout& canonical, std::vector<std::byte>& scratch) {
  const int64_t n = s.layout.size();
  if (is_canonical_contiguous(s.layout)) {
    if (const std::byte* host = reader.host_range(s.offset, n)) return host;
  }
  scratch.resize(static_cast<std::size_t>(n) * *t.dtype().itemsize());
  reader.gather(s.layout, s.offset, scratch.data(), canonical);
  return scratch.data();
}

// Calls fn(const std::byte* items) under t's carrier lock with t's elements in
// canonical order (canonical_items). fn is not called for an empty tensor (the
// liveness check still is).
template <class F>
void with_canonical(const Tensor& t, const Layout& canonical, const char* op,
                    std::vector<std::byte>& scratch, F&& fn) {
  const Subtensor& s = t.subtensor(op);
  s.carrier->read_locked(op, [&](const SlotReader& reader) {
    if (s.layout.size() != 0) fn(canonical_items(reader, t, s, canonical, scratch));
  });
}

// Calls fn(a_items, b_items) with both non-empty operands in canonical order
// (canonical_items), their carriers locked together: one lock when they share
// a carrier, else the carrier with the smaller id first; when either carrier
// is owned (a composite's part), each operand copied under its own lock alone. The order keeps two
// operations on the same pair from deadlocking; a move's copy (the other
// nesting: source, then destination) cannot close a cycle with it, because a
// move's destination refuses reads, so its lock is never held here while the
// other one is awaited (docs/threading.md).
template <class F>
void with_both_canonical(const Tensor& a, const Tensor& b, const Layout& canonical, const char* op,
                         std::vector<std::byte>& scratch_a, std::vector<std::byte>& scratch_b,
                         F&& fn) {
  const Subtensor& sa = a.subtensor(op);
  const Subtensor& sb = b.subtensor(op);
  const bool empty = sa.layout.size() == 0;
  if (sa.carrier == sb.carrier) {
    sa.carrier->read_locked(op, [&](const SlotReader& reader) {
      if (empty) return;
      fn(canonical_items(reader, a, sa, canonical, scratch_a),
         canonical_items(reader, b, sb, canonical, scratch_b));
    });
    return;
  }
  if (sa.carrier->owner() != nullptr || sb.carrier->owner() != nullptr) {
    // A part of a composite is locked by its owner's storage hooks while the
    // owner's lock, and possibly another operand's, is held: locking it
    // together with another carrier here could close a cycle. Each operand is
    // copied under its own lock alone instead.
    const auto copy = [&](const Tensor& t, const Subtensor& s, std::vector<std::byte>& scratch) {
      s.carrier->read_locked(op, [&](const SlotReader& reader) {
        if (empty) return;
        scratch.resize(static_cast<std::size_t>(s.layout.size()) * *t.dtype().itemsize());
        reader.gather(s.layout, s.offset, scratch.data(), canonical);
      });
    };
    copy(a, sa, scratch_a);
    copy(b, sb, scratch_b);
    if (!empty) fn(scratch_a.data(), scratch_b.data());
    return;
  }
  const bool a_first = sa.carrier->id() < sb.carrier->id();
  const Subtensor& first = a_first ? sa : sb;
  const Subtensor& second = a_first ? sb : sa;
  first.carrier->read_locked(op, [&](const SlotReader& first_reader) {
    second.carrier->read_locked(op, [&](const SlotReader& second_reader) {
      if (empty) return;
      const SlotReader& ra = a_first ? first_reader : second_reader;
      const SlotReader& rb = a_first ? second_reader : first_reader;
      fn(canonical_items(ra, a, sa, canonical, scratch_a),
         canonical_items(rb, b, sb, canonical, scratch_b));
    });
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

// The sum of in[i * stride] for i < n, in kLanes independent partial sums so
// that the additions pipeline (and vectorize when stride is 1): in double for
// Float32, wrapping for Int32.
template <class T>
T sum_stretch(const T* in, int64_t n, int64_t stride) {
  constexpr int64_t kLanes = 8;
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint32_t>;
  std::array<Acc, kLanes> lanes{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      lanes[static_cast<std::size_t>(l)] =
          static_cast<Acc>(lanes[static_cast<std::size_t>(l)] + in[(i + l) * stride]);
    }
  }
  Acc total = 0;
  for (; i < n; ++i) total = static_cast<Acc>(total + in[i * stride]);
  for (Acc lane : lanes) total = static_cast<Acc>(total + lane);
  return static_cast<T>(total);
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
  std::vector<std::byte> scratch_a;
  std::vector<std::byte> scratch_b;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* o = out.items<T>();
    const int64_t n = out.size;
    by_arith(arith, [&](auto k) {
      using K = decltype(k);
      with_both_canonical(a, b, out.layout, op, scratch_a, scratch_b,
                          [&](const std::byte* pa, const std::byte* pb) {
                            for (int64_t i = 0; i < n; ++i) {
                              o[i] = K::f(item<T>(pa, i), item<T>(pb, i));
                            }
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
  Fresh out(a.dtype(), shape, true);
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
    T* o = out.items<T>();
    with_canonical(a, compact_col_major(a.shape()), op, scratch, [&](const std::byte* pa) {
      const T* in = reinterpret_cast<const T*>(pa);
      internal_runs::walk_joint(modes, 0, 0,
                                [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
                                  if (ds == 0) {
                                    o[d] = Add::f(o[d], sum_stretch(in + s, n, ss));
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
