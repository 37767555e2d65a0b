// The math operations (spec/autograd, requirement group "Operations"), each a
// TensorOperation run through apply(): recorded by autograd under grad mode
// when an input requires grad.
//
// Operands: single-subtensor tensors of dtype Float32 or Int32 (any layout,
// any readable carrier). Checks, in order, before any carrier is touched:
//   NotImplementedError naming the operation for a multi-subtensor tensor;
//   TypeError naming the operation and the dtype for any other dtype;
//   binary: TypeError naming both dtypes when they differ, ValueError naming
//   both shapes when the shapes differ (no implicit broadcasting);
//   a constant is converted to the tensor's dtype as a write of it would be
//   (coerce: TypeError / ValueError naming the value).
// Then reading fails as reads do (RuntimeError naming a released carrier or
// one being written by a pending move).
//
// div takes Float32 operands only (TypeError naming div and the dtype for
// Int32: there is no promotion). The comparisons take Float32 and Int32, eq
// and ne also Bool, and return Bool; they record no node (not differentiable).
//
// Results of add, sub, mul, div, neg, sum and the comparisons are fresh,
// publicly mutable tensors under the canonical layout of their shape at
// offset 0, of the operands' dtype (Bool for a comparison): Metal when every tensor operand lives
// on Metal (computed by one asynchronous device command; observing host values synchronizes), else
// CPU (kernels.h). broadcast_to and index return views of their input; index's backward scatters
// into Metal zeros when the cotangent lives on Metal.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "strideweave/dtype/value.h"
#include "strideweave/layout/int_tuple.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::ops {

using TensorRef = std::shared_ptr<const Tensor>;

std::shared_ptr<Tensor> add(const TensorRef& a, const TensorRef& b);
std::shared_ptr<Tensor> sub(const TensorRef& a, const TensorRef& b);
std::shared_ptr<Tensor> mul(const TensorRef& a, const TensorRef& b);

// A tensor and a constant (not differentiable); constant_first computes
// c - a for sub (add and mul commute).
std::shared_ptr<Tensor> add(const TensorRef& a, const Value& c);
std::shared_ptr<Tensor> sub(const TensorRef& a, const Value& c, bool constant_first = false);
std::shared_ptr<Tensor> mul(const TensorRef& a, const Value& c);

// a / b in IEEE single precision (a zero divisor gives an infinity or NaN);
// Float32 only. Its gradient is g / b for a and -g * ((a / b) / b) for b.
std::shared_ptr<Tensor> div(const TensorRef& a, const TensorRef& b);
// a / c, or c / a when constant_first.
std::shared_ptr<Tensor> div(const TensorRef& a, const Value& c, bool constant_first = false);

std::shared_ptr<Tensor> neg(const TensorRef& a);

// The comparisons, by operation name: eq (==), ne (!=), lt (<), le (<=),
// gt (>), ge (>=).
enum class Comparison { kEq, kNe, kLt, kLe, kGt, kGe };

// "eq", "ne", "lt", "le", "gt" or "ge".
const char* comparison_name(Comparison comparison) noexcept;

// a `comparison` b element by element, as a Bool tensor of their shape: true
// where it holds. Float32 compares as IEEE 754 (NaN is unequal to every value,
// itself included, and unordered), Int32 as signed integers, Bool (eq and ne
// only) as values. The result records no node, whatever its inputs require.
std::shared_ptr<Tensor> compare(Comparison comparison, const TensorRef& a, const TensorRef& b);
// a `comparison` c, or c `comparison` a when constant_first.
std::shared_ptr<Tensor> compare(Comparison comparison, const TensorRef& a, const Value& c,
                                bool constant_first = false);

// The sum over the given top-level modes (every mode when nullopt); the
// result's shape is the tuple of the remaining modes, () when none remain;
// an empty mode list sums nothing and keeps the shape. Throws ValueError
// naming the mode for one out of range (negative ones count from the end)
// or given twice.
std::shared_ptr<Tensor> sum(const TensorRef& a, const std::optional<std::vector<int64_t>>& modes);

// Tensor::broadcast_to, recorded: its backward sums the cotangent over the
// broadcast modes.
std::shared_ptr<Tensor> broadcast_to(const TensorRef& a, const IntTuple& shape);

// Tensor::index, recorded: its backward scatters the cotangent into zeros of
// the input's shape.
std::shared_ptr<Tensor> index(const TensorRef& a, const std::vector<IndexItem>& items);

// Tensor::relayout, which autograd does not differentiate: throws
// RuntimeError when grad mode is on and `a` requires grad (detach() first).
std::shared_ptr<Tensor> relayout(const TensorRef& a, Layout layout, int64_t offset);

// The values of `a` in fresh storage under the canonical layout; not recorded.
std::shared_ptr<Tensor> copy(const Tensor& a);

}  // namespace strideweave::ops
