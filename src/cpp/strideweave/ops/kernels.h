// Bulk kernels of the math operations: whole tensors in spans, never a
// per-element virtual call.
//
// Operands are read under their carrier's lock, one carrier at a time: a
// host-addressable carrier whose view is contiguous in canonical order
// (compact column-major, any offset) is read in place; any other view is
// first gathered into canonical order by the span walker (SlotReader::gather:
// the strided kernel on host memory, one range read per run otherwise).
// Results are fresh, publicly mutable CPU tensors of the canonical layout at
// offset 0. Float32 computes in float; Int32 wraps in two's complement.
// Pre (checked by the operations): single-subtensor operands of dtype Float32
// or Int32, equal shapes for binary kernels. Reads fail as reads do
// (RuntimeError naming a released carrier or one being written, naming `op`).
#pragma once

#include <memory>
#include <vector>

#include "strideweave/dtype/value.h"
#include "strideweave/layout/int_tuple.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::ops {

enum class Arith { kAdd, kSub, kMul };

// a `arith` b, element by element.
std::shared_ptr<Tensor> binary_kernel(Arith arith, const Tensor& a, const Tensor& b,
                                      const char* op);

// a `arith` c, or c `arith` a when constant_first; c already converted to a's
// dtype (an int64 for Int32, a double for Float32).
std::shared_ptr<Tensor> scalar_kernel(Arith arith, const Tensor& a, const Value& c,
                                      bool constant_first, const char* op);

// -a.
std::shared_ptr<Tensor> neg_kernel(const Tensor& a, const char* op);

// The sums of `a` over the top-level modes marked in `reduced` (one flag per
// top-level mode; an integral shape is one mode), as a tensor of `shape`,
// whose size must be the product of the kept modes' sizes.
std::shared_ptr<Tensor> sum_kernel(const Tensor& a, const std::vector<bool>& reduced,
                                   const IntTuple& shape, const char* op);

// The values of `a` in fresh storage under the canonical layout of its shape.
std::shared_ptr<Tensor> copy_kernel(const Tensor& a, const char* op);

// True when `layout` visits storage contiguously in flat order: each leaf
// mode of extent above one has the stride of the product of the extents
// before it.
bool is_canonical_contiguous(const Layout& layout) noexcept;

}  // namespace strideweave::ops
