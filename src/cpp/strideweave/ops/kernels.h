// Bulk kernels of the math operations: whole tensors in spans, never a
// per-element virtual call.
//
// Operands are read under their carrier's lock, one carrier at a time: a
// host-addressable carrier whose view is contiguous in canonical order
// (compact column-major, any offset) is read in place; any other view is
// first gathered into canonical order by the span walker (SlotReader::gather:
// the strided kernel on host memory, one range read per run otherwise).
// Results are fresh, publicly mutable tensors of the canonical layout at
// offset 0. Float32 computes in float; Int32 wraps in two's complement.
// Pre (checked by the operations): single-subtensor operands of dtype Float32
// or Int32 (kDiv: Float32 only; comparisons: Bool too), equal shapes for
// binary kernels. Reads fail as reads do
// (RuntimeError naming a released carrier or one being written, naming `op`).
//
// Where results live: when every operand lives on a carrier of exact class
// Metal, the result is a fresh Metal carrier and the kernel is one command
// buffer (kind kKernel, labelled `op`, naming the operand buffers and the
// result's) submitted to the Metal queue without waiting: a chain of such
// kernels runs asynchronously, in submission order, and reading the result's
// values (Metal's reads wait) observes it complete. Each operand is checked
// readable before the submission (Metal::buffer_for_read). The command gathers
// each operand into canonical order from device memory with the strided
// kernel (copy_strided; contiguous canonical views read in place) and runs the
// same compute body as the host path. Otherwise (no Metal operand, or Metal
// mixed with other carriers) the kernel runs on the host into a CPU result;
// a Metal operand is then read through its range reads, which synchronize.
#pragma once

#include <memory>
#include <vector>

#include "strideweave/dtype/value.h"
#include "strideweave/layout/int_tuple.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::ops {

enum class Arith { kAdd, kSub, kMul, kDiv };

// a `arith` b, element by element.
std::shared_ptr<Tensor> binary_kernel(Arith arith, const Tensor& a, const Tensor& b,
                                      const char* op);

// a `arith` c, or c `arith` a when constant_first; c already converted to a's
// dtype (an int64 for Int32, a double for Float32).
std::shared_ptr<Tensor> scalar_kernel(Arith arith, const Tensor& a, const Value& c,
                                      bool constant_first, const char* op);

// -a.
std::shared_ptr<Tensor> neg_kernel(const Tensor& a, const char* op);

// a `comparison` b, element by element, into a Bool result (one byte, 0 or
// 1, per element): Float32 by IEEE 754 (NaN unordered and unequal to
// everything), Int32 signed, Bool as 0 < 1.
std::shared_ptr<Tensor> compare_kernel(Comparison comparison, const Tensor& a, const Tensor& b,
                                       const char* op);

// a `comparison` c, or c `comparison` a when constant_first; c already
// converted to a's dtype (a double, an int64 or a bool).
std::shared_ptr<Tensor> compare_scalar_kernel(Comparison comparison, const Tensor& a,
                                              const Value& c, bool constant_first, const char* op);

// The sums of `a` over the top-level modes marked in `reduced` (one flag per
// top-level mode; an integral shape is one mode), as a tensor of `shape`,
// whose size must be the product of the kept modes' sizes.
std::shared_ptr<Tensor> sum_kernel(const Tensor& a, const std::vector<bool>& reduced,
                                   const IntTuple& shape, const char* op);

// The values of `a` in fresh storage under the canonical layout of its shape.
std::shared_ptr<Tensor> copy_kernel(const Tensor& a, const char* op);

// Zeros of `shape` (g's dtype) with g written where Tensor::index(items)
// selects in them: the backward of index. g's shape is the selection's.
std::shared_ptr<Tensor> scatter_kernel(const Tensor& g, const IntTuple& shape,
                                       const std::vector<IndexItem>& items, const char* op);

// True when `layout` visits storage contiguously in flat order: each leaf
// mode of extent above one has the stride of the product of the extents
// before it.
bool is_canonical_contiguous(const Layout& layout) noexcept;

}  // namespace strideweave::ops
