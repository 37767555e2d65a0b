// Friendly factories (spec/core-tensor-representation): each copies its
// values into a fresh, publicly mutable CPU carrier and returns a Tensor at
// offset 0 under the canonical compact column-major layout of its shape.
//
// Sizes follow NumPy: a tensor whose elements need more bytes than a buffer
// can hold (2**63 - 1) fails with ValueError naming the element count and the
// dtype; one that cannot be allocated fails with MemoryError.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "strideweave/dtype/dtype.h"
#include "strideweave/dtype/value.h"
#include "strideweave/layout/int_tuple.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

// The most nesting levels tensor() reads from nested sequences: NumPy's limit
// on dimensions, and IntTuple::kMaxDepth.
inline constexpr std::size_t kMaxValueNesting = 64;

// The dtype values infer: Bool when all are bools, Int32 when all are
// integers (bools excluded), Float32 when any is a float; Float32 when there
// are no values. Throws TypeError for a mix of bools and numbers or a record.
DType infer_dtype(const std::vector<Value>& values);

// A tensor of `shape` holding `values` given with the first leaf mode
// outermost (the order of nested lists), converted to `dtype` or to the
// inferred dtype. Throws ValueError when the count differs from size(shape).
std::shared_ptr<Tensor> tensor_from_values(const IntTuple& shape, const std::vector<Value>& values,
                                           std::optional<DType> dtype);

// A fresh CPU tensor of the source's dtype and values, whose shape is the
// source's leaf extents (one leaf: that extent), compact column-major: copied
// by the strided kernel from one snapshot of the source, or for a
// multi-subtensor source its records packed field by field
// (Tensor::read_encoded). Throws TypeError for a dtype without an item size.
std::shared_ptr<Tensor> tensor_from_tensor(const Tensor& source);

// A tensor of `shape` with every element `value`.
std::shared_ptr<Tensor> full(const IntTuple& shape, const Value& value, std::optional<DType> dtype);

// zeros: full of dtype's zero.
std::shared_ptr<Tensor> zeros(const IntTuple& shape, const DType& dtype);

// start, start + step, ... below stop (above it for a negative step).
// Throws ValueError for step 0, for a NaN bound or step (the length cannot be
// computed) and for a count beyond the maximum size, infinite ones included,
// naming start, stop and step.
std::shared_ptr<Tensor> arange(const Value& start, const Value& stop, const Value& step,
                               std::optional<DType> dtype);

}  // namespace strideweave
