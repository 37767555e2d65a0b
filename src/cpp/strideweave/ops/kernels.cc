#include "strideweave/ops/kernels.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/device/queue.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/allocation.h"

namespace strideweave::ops {

namespace {

// The items of non-empty `t` (its subtensor `s`) in canonical order, under the
// carrier lock `reader` stands for: in place when the storage is host memory
// and the view is canonical-contiguous, else gathered into `scratch`.
// Sizes `scratch` for the `count` items of `dtype` an operand of `op` is
// gathered into (a broadcast view is as many items as its shape holds).
// Throws MemoryError naming the operation, the count and the dtype when they
// cannot be allocated.
void size_scratch(std::vector<std::byte>& scratch, int64_t count, const DType& dtype,
                  const char* op) {
  allocating(std::string(op) + ": gathering an operand", count, "items of " + dtype.name(),
             [&] { scratch.resize(static_cast<std::size_t>(count) * *dtype.itemsize()); });
}

const std::byte* canonical_items(const SlotReader& reader, const Tensor& t, const Subtensor& s,
                                 const Layout& canonical, std::vector<std::byte>& scratch,
                                 const char* op) {
  const int64_t n = s.layout.size();
  if (is_canonical_contiguous(s.layout)) {
    if (const std::byte* host = reader.host_range(s.offset, n)) return host;
  }
  size_scratch(scratch, n, t.dtype(), op);
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
    if (s.layout.size() != 0) fn(canonical_items(reader, t, s, canonical, scratch, op));
  });
}

// Calls fn(a_items, b_items) with both non-empty operands in canonical order
// (canonical_items), their carriers locked together: one lock when they share
// a carrier, else the carrier with the smaller id first; when either carrier
// is owned (a composite's part) or has foreign storage (whose hooks never run
// under another carrier's lock), each operand copied under its own lock alone. The order keeps two
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
      fn(canonical_items(reader, a, sa, canonical, scratch_a, op),
         canonical_items(reader, b, sb, canonical, scratch_b, op));
    });
    return;
  }
  if (sa.carrier->owner() != nullptr || sb.carrier->owner() != nullptr ||
      sa.carrier->has_foreign_storage() || sb.carrier->has_foreign_storage()) {
    // A part of a composite is locked by its owner's storage hooks while the
    // owner's lock, and possibly another operand's, is held: locking it
    // together with another carrier here could close a cycle. A foreign
    // storage's hooks must not run while another carrier's lock is held
    // (carrier/carrier_mutex.h). Each operand is copied under its own lock
    // alone instead.
    const auto copy = [&](const Tensor& t, const Subtensor& s, std::vector<std::byte>& scratch) {
      s.carrier->read_locked(op, [&](const SlotReader& reader) {
        if (empty) return;
        size_scratch(scratch, s.layout.size(), t.dtype(), op);
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
      fn(canonical_items(ra, a, sa, canonical, scratch_a, op),
         canonical_items(rb, b, sb, canonical, scratch_b, op));
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
struct Div {
  static float f(float x, float y) { return x / y; }
};

// Calls f(K{}, T{}) with the arithmetic K of `arith` and the element type T
// of `dtype` (by_dtype); kDiv is Float32 only (checked by div).
template <class F>
void by_arith(Arith arith, const DType& dtype, F&& f) {
  switch (arith) {
    case Arith::kAdd:
      by_dtype(dtype, [&](auto zero) { f(Add{}, zero); });
      return;
    case Arith::kSub:
      by_dtype(dtype, [&](auto zero) { f(Sub{}, zero); });
      return;
    case Arith::kMul:
      by_dtype(dtype, [&](auto zero) { f(Mul{}, zero); });
      return;
    case Arith::kDiv:
      f(Div{}, float{});
      return;
  }
}

// The element type of a dtype's comparisons: float, int32_t (signed order),
// or uint8_t for Bool (its encoding: 0 or 1).
template <class F>
void by_compared_dtype(const DType& dtype, F&& f) {
  if (dtype == DType::Float32()) {
    f(float{});
  } else if (dtype == DType::Int32()) {
    f(int32_t{});
  } else {
    f(uint8_t{});
  }
}

// The comparisons, as the built-in operators compute them (IEEE 754 for
// float: every comparison with NaN is false but !=).
struct Eq {
  template <class T>
  static bool f(T x, T y) {
    return x == y;
  }
};
struct Ne {
  template <class T>
  static bool f(T x, T y) {
    return x != y;
  }
};
struct Lt {
  template <class T>
  static bool f(T x, T y) {
    return x < y;
  }
};
struct Le {
  template <class T>
  static bool f(T x, T y) {
    return x <= y;
  }
};
struct Gt {
  template <class T>
  static bool f(T x, T y) {
    return x > y;
  }
};
struct Ge {
  template <class T>
  static bool f(T x, T y) {
    return x >= y;
  }
};

template <class F>
void by_comparison(Comparison comparison, F&& f) {
  switch (comparison) {
    case Comparison::kEq:
      f(Eq{});
      return;
    case Comparison::kNe:
      f(Ne{});
      return;
    case Comparison::kLt:
      f(Lt{});
      return;
    case Comparison::kLe:
      f(Le{});
      return;
    case Comparison::kGt:
      f(Gt{});
      return;
    case Comparison::kGe:
      f(Ge{});
      return;
  }
}

// c `comparison` x as x `swapped(comparison)` c: the same truth, NaN included.
Comparison swapped(Comparison comparison) {
  switch (comparison) {
    case Comparison::kLt:
      return Comparison::kGt;
    case Comparison::kLe:
      return Comparison::kGe;
    case Comparison::kGt:
      return Comparison::kLt;
    case Comparison::kGe:
      return Comparison::kLe;
    case Comparison::kEq:
    case Comparison::kNe:
      break;
  }
  return comparison;
}

// o[i] = f(i) for i < n: one loop, split across threads when it is long
// enough to pay (parallel_for).
template <class T, class F>
void elementwise(T* __restrict o, int64_t n, F f) {
  parallel_for(n, kParallelGrain, [o, &f](int64_t begin, int64_t end) noexcept {
    for (int64_t i = begin; i < end; ++i) o[i] = f(i);
  });
}

// The constant as the element type T of its (already converted) dtype: float
// for Float32, uint32_t (arithmetic) or int32_t (comparisons) for Int32,
// uint8_t for Bool.
template <class T>
T constant_as(const Value& c) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(std::get<double>(c));
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return std::get<bool>(c) ? 1 : 0;
  } else {
    return static_cast<T>(std::get<int64_t>(c));
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

// ---- where a kernel runs ---------------------------------------------------
//
// Every kernel is one body, body(in, out): `in` the operands' items in
// canonical order (in[0], in[1]), `out` the result's bytes. run_kernel runs it
// on the host under the operands' locks, or, when every operand lives on a
// Metal carrier, inside one command buffer on the device queue.

// Whether every operand lives on a carrier of exact class Metal.
bool all_metal(std::initializer_list<const Tensor*> operands, const char* op) {
  for (const Tensor* t : operands) {
    if (&t->subtensor(op).carrier->carrier_class() != &Metal::static_class()) return false;
  }
  return true;
}

// A fresh result carrier of n slots: Metal for a device kernel (device
// buffers start zeroed), else CPU, zeroed for kernels that accumulate.
std::shared_ptr<Carrier> fresh_carrier(bool device, const DType& dtype, int64_t n, bool zeroed) {
  if (device) return std::make_shared<Metal>(dtype, n);
  if (zeroed) return std::make_shared<CPU>(dtype, n);
  return CPU::uninitialized(dtype, n);
}

// One operand of a device kernel, captured by value by its command.
struct DeviceOperand {
  device::BufferRef buffer;
  Layout layout;
  int64_t offset;
};

// Inside a command: the items of `o` in canonical order, in place when its
// view is canonical-contiguous, else gathered into `scratch` by the strided
// kernel, sized as on the host (size_scratch: MemoryError naming `op`, the
// count and the dtype; the command's failure then fails the result's buffer,
// device/queue.h).
const std::byte* device_items(const device::Access& access, const DeviceOperand& o,
                              const Layout& canonical, const DType& dtype,
                              std::vector<std::byte>& scratch, const char* op) {
  const std::size_t itemsize = *dtype.itemsize();
  const std::byte* bytes = access.bytes(*o.buffer);
  if (is_canonical_contiguous(o.layout)) {
    return bytes + static_cast<std::size_t>(o.offset) * itemsize;
  }
  size_scratch(scratch, o.layout.size(), dtype, op);
  copy_strided(bytes, o.layout, o.offset, scratch.data(), canonical, 0, itemsize);
  return scratch.data();
}

// Runs body(in, out) over the (one or two) non-empty operands' items in
// canonical order (`canonical`: the canonical layout of their shape) into
// `out`, a fresh carrier from fresh_carrier(device, ...), and returns the
// result tensor of `out_layout` at offset 0.
//
// Host (device false): under the operands' locks (with_canonical,
// with_both_canonical); a Metal operand among others is read through its
// range reads, which synchronize. Device (every operand on Metal): each
// operand checked readable and its buffer taken (Metal::buffer_for_read),
// then one kKernel command buffer labelled `op`, naming the operand buffers
// and the result's, is submitted without waiting; its command gathers the
// operands from device memory and runs the same body. The body is copied
// into the command: it captures by value.
template <class Body>
std::shared_ptr<Tensor> run_kernel(std::initializer_list<const Tensor*> operands, bool device,
                                   std::shared_ptr<Carrier> out, Layout out_layout,
                                   const Layout& canonical, const char* op, Body body) {
  const Tensor& a = **operands.begin();
  if (!device) {
    std::byte* o = static_cast<CPU&>(*out).data();
    if (operands.size() == 1) {
      std::vector<std::byte> scratch;
      with_canonical(a, canonical, op, scratch, [&](const std::byte* pa) {
        const std::array<const std::byte*, 2> in{pa, nullptr};
        body(in.data(), o);
      });
    } else {
      std::vector<std::byte> scratch_a;
      std::vector<std::byte> scratch_b;
      with_both_canonical(a, **(operands.begin() + 1), canonical, op, scratch_a, scratch_b,
                          [&](const std::byte* pa, const std::byte* pb) {
                            const std::array<const std::byte*, 2> in{pa, pb};
                            body(in.data(), o);
                          });
    }
    return Tensor::make(std::move(out), std::move(out_layout), 0);
  }
  device::CommandBuffer command_buffer;
  command_buffer.label = op;
  command_buffer.kind = device::CommandKind::kKernel;
  std::vector<DeviceOperand> inputs;
  for (const Tensor* t : operands) {
    const Subtensor& s = t->subtensor(op);
    device::BufferRef buffer = static_cast<const Metal&>(*s.carrier).buffer_for_read(op);
    bool named = false;
    for (const device::BufferRef& b : command_buffer.buffers) named = named || b == buffer;
    if (!named) command_buffer.buffers.push_back(buffer);
    inputs.push_back({std::move(buffer), s.layout, s.offset});
  }
  const Metal& result = static_cast<const Metal&>(*out);
  device::BufferRef out_buffer = result.buffer(op);
  command_buffer.buffers.push_back(out_buffer);
  command_buffer.writes.push_back(out_buffer);
  command_buffer.commands.emplace_back([inputs = std::move(inputs), out_buffer, canonical,
                                        dtype = a.dtype(), op_name = std::string(op),
                                        body = std::move(body)](const device::Access& access) {
    if (canonical.size() == 0) return;
    std::array<std::vector<std::byte>, 2> scratch;
    std::array<const std::byte*, 2> in{nullptr, nullptr};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      in[i] = device_items(access, inputs[i], canonical, dtype, scratch[i], op_name.c_str());
    }
    body(in.data(), access.bytes(*out_buffer));
  });
  result.queue().submit(std::move(command_buffer));
  return Tensor::make(std::move(out), std::move(out_layout), 0);
}

// run_kernel into a fresh carrier of `dtype` under the canonical layout of
// `shape`, placed by all_metal; zeroed first when `zeroed`.
template <class Body>
std::shared_ptr<Tensor> run_fresh(std::initializer_list<const Tensor*> operands,
                                  const IntTuple& shape, const DType& dtype,
                                  const Layout& canonical, bool zeroed, const char* op, Body body) {
  const bool device = all_metal(operands, op);
  Layout layout = compact_col_major(shape);
  std::shared_ptr<Carrier> out = fresh_carrier(device, dtype, layout.size(), zeroed);
  return run_kernel(operands, device, std::move(out), std::move(layout), canonical, op,
                    std::move(body));
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
  const Layout canonical = compact_col_major(a.shape());
  const int64_t n = canonical.size();
  std::shared_ptr<Tensor> result;
  by_arith(arith, a.dtype(), [&](auto k, auto zero) {
    using K = decltype(k);
    using T = decltype(zero);
    result = run_fresh({&a, &b}, a.shape(), a.dtype(), canonical, false, op,
                       [n](const std::byte* const* in, std::byte* out) {
                         const T* __restrict x = reinterpret_cast<const T*>(in[0]);
                         const T* __restrict y = reinterpret_cast<const T*>(in[1]);
                         elementwise(reinterpret_cast<T*>(out), n,
                                     [x, y](int64_t i) { return K::f(x[i], y[i]); });
                       });
  });
  return result;
}

std::shared_ptr<Tensor> scalar_kernel(Arith arith, const Tensor& a, const Value& c,
                                      bool constant_first, const char* op) {
  const Layout canonical = compact_col_major(a.shape());
  const int64_t n = canonical.size();
  std::shared_ptr<Tensor> result;
  by_arith(arith, a.dtype(), [&](auto k, auto zero) {
    using K = decltype(k);
    using T = decltype(zero);
    const T k_c = constant_as<T>(c);
    result = run_fresh({&a}, a.shape(), a.dtype(), canonical, false, op,
                       [n, k_c, constant_first](const std::byte* const* in, std::byte* out) {
                         T* o = reinterpret_cast<T*>(out);
                         const T* __restrict x = reinterpret_cast<const T*>(in[0]);
                         if (constant_first) {
                           elementwise(o, n, [x, k_c](int64_t i) { return K::f(k_c, x[i]); });
                         } else {
                           elementwise(o, n, [x, k_c](int64_t i) { return K::f(x[i], k_c); });
                         }
                       });
  });
  return result;
}

std::shared_ptr<Tensor> neg_kernel(const Tensor& a, const char* op) {
  const Layout canonical = compact_col_major(a.shape());
  const int64_t n = canonical.size();
  std::shared_ptr<Tensor> result;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    result = run_fresh({&a}, a.shape(), a.dtype(), canonical, false, op,
                       [n](const std::byte* const* in, std::byte* out) {
                         const T* __restrict x = reinterpret_cast<const T*>(in[0]);
                         elementwise(reinterpret_cast<T*>(out), n,
                                     [x](int64_t i) { return Sub::f(T{0}, x[i]); });
                       });
  });
  return result;
}

std::shared_ptr<Tensor> compare_kernel(Comparison comparison, const Tensor& a, const Tensor& b,
                                       const char* op) {
  const Layout canonical = compact_col_major(a.shape());
  const int64_t n = canonical.size();
  std::shared_ptr<Tensor> result;
  by_compared_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    by_comparison(comparison, [&](auto k) {
      using K = decltype(k);
      result = run_fresh({&a, &b}, a.shape(), DType::Bool(), canonical, false, op,
                         [n](const std::byte* const* in, std::byte* out) {
                           const T* __restrict x = reinterpret_cast<const T*>(in[0]);
                           const T* __restrict y = reinterpret_cast<const T*>(in[1]);
                           elementwise(reinterpret_cast<uint8_t*>(out), n, [x, y](int64_t i) {
                             return static_cast<uint8_t>(K::f(x[i], y[i]));
                           });
                         });
    });
  });
  return result;
}

std::shared_ptr<Tensor> compare_scalar_kernel(Comparison comparison, const Tensor& a,
                                              const Value& c, bool constant_first, const char* op) {
  const Layout canonical = compact_col_major(a.shape());
  const int64_t n = canonical.size();
  std::shared_ptr<Tensor> result;
  by_compared_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T k_c = constant_as<T>(c);
    by_comparison(constant_first ? swapped(comparison) : comparison, [&](auto k) {
      using K = decltype(k);
      result = run_fresh({&a}, a.shape(), DType::Bool(), canonical, false, op,
                         [n, k_c](const std::byte* const* in, std::byte* out) {
                           const T* __restrict x = reinterpret_cast<const T*>(in[0]);
                           elementwise(reinterpret_cast<uint8_t*>(out), n, [x, k_c](int64_t i) {
                             return static_cast<uint8_t>(K::f(x[i], k_c));
                           });
                         });
    });
  });
  return result;
}

std::shared_ptr<Tensor> copy_kernel(const Tensor& a, const char* op) {
  const Layout canonical = compact_col_major(a.shape());
  const std::size_t bytes = static_cast<std::size_t>(canonical.size()) * *a.dtype().itemsize();
  return run_fresh({&a}, a.shape(), a.dtype(), canonical, false, op,
                   [bytes](const std::byte* const* in, std::byte* out) {
                     const std::byte* source = in[0];
                     parallel_for(static_cast<int64_t>(bytes), kParallelGrain * 4,
                                  [source, out](int64_t begin, int64_t end) noexcept {
                                    std::memcpy(out + begin, source + begin,
                                                static_cast<std::size_t>(end - begin));
                                  });
                   });
}

std::shared_ptr<Tensor> sum_kernel(const Tensor& a, const std::vector<bool>& reduced,
                                   const IntTuple& shape, const char* op) {
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
  std::vector<internal_runs::JointMode> modes =
      internal_runs::joint_modes(in_layout, out_layout, empty);
  std::shared_ptr<Tensor> result;
  by_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    result =
        run_fresh({&a}, shape, a.dtype(), compact_col_major(a.shape()), true, op,
                  [modes](const std::byte* const* in_bytes, std::byte* out) {
                    const T* in = reinterpret_cast<const T*>(in_bytes[0]);
                    T* o = reinterpret_cast<T*>(out);
                    internal_runs::walk_joint(
                        modes, 0, 0, [&](int64_t s, int64_t d, int64_t n, int64_t ss, int64_t ds) {
                          if (ds == 0) {
                            o[d] = Add::f(o[d], sum_stretch(in + s, n, ss));
                          } else {
                            for (int64_t i = 0; i < n; ++i)
                              o[d + i * ds] = Add::f(o[d + i * ds], in[s + i * ss]);
                          }
                        });
                  });
  });
  return result;
}

std::shared_ptr<Tensor> scatter_kernel(const Tensor& g, const IntTuple& shape,
                                       const std::vector<IndexItem>& items, const char* op) {
  const bool device = all_metal({&g}, op);
  Layout layout = compact_col_major(shape);
  std::shared_ptr<Carrier> out = fresh_carrier(device, g.dtype(), layout.size(), true);
  // Where the index selected, in the result's storage.
  const std::shared_ptr<Tensor> selected = Tensor::make(out, layout, 0)->index(items);
  const Subtensor& s = selected->subtensor(op);
  const Layout canonical = compact_col_major(g.shape());
  const std::size_t itemsize = *g.dtype().itemsize();
  return run_kernel({&g}, device, std::move(out), std::move(layout), canonical, op,
                    [canonical, target = s.layout, offset = s.offset, itemsize](
                        const std::byte* const* in, std::byte* o) {
                      copy_strided(in[0], canonical, 0, o, target, offset, itemsize);
                    });
}

}  // namespace strideweave::ops
