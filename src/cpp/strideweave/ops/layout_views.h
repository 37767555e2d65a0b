// The layout views of spec/core-tensor-representation as recorded operations
// (spec/autograd): T, transpose, permute and reshape. Each returns a view of
// its input (same carrier, same offset, a new layout: tensor/layout_views.h)
// and, under grad mode when the input requires grad, records a node whose
// backward maps the cotangent back without computing: the inverse
// permutation of its modes, or its reshape to the input's shape (a copy into
// the canonical layout first when the cotangent's layout has no such view).
//
// Checks, in order, before any carrier is touched: NotImplementedError naming
// the operation for a multi-subtensor tensor, then the mode or shape checks
// of tensor/layout_views.h. A view over a released carrier fails as the
// Tensor constructor does (RuntimeError naming the carrier). Nothing is read
// or written; no version changes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "strideweave/layout/int_tuple.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::ops {

// The top-level modes in reverse order (t.T); node "permute".
std::shared_ptr<Tensor> reverse_modes(const std::shared_ptr<const Tensor>& a);

// Modes i and j swapped; node "transpose".
std::shared_ptr<Tensor> transpose(const std::shared_ptr<const Tensor>& a, int64_t i, int64_t j);

// Mode k of the result is mode modes[k] of `a`; node "permute".
std::shared_ptr<Tensor> permute(const std::shared_ptr<const Tensor>& a,
                                const std::vector<int64_t>& modes);

// The view of shape `shape` (one extent may be -1) whose element of flat
// (colexicographic) index i is a's element of flat index i; node "reshape".
// Throws the ValueErrors of resolve_reshape, then ValueError saying that no
// view exists, why, and how to reshape a copy, when reshaped_layout finds
// none.
std::shared_ptr<Tensor> reshape(const std::shared_ptr<const Tensor>& a, const IntTuple& shape);

}  // namespace strideweave::ops
