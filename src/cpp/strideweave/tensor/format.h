// The text form of a Tensor (spec/core-tensor-representation): its values,
// summarized for large tensors as NumPy and PyTorch summarize them, followed
// by its dtype and representation.
#pragma once

#include <cstdint>
#include <string>

#include "strideweave/dtype/value.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

// A tensor of more elements than this is summarized.
inline constexpr int64_t kSummaryThreshold = 1000;
// Items a summarized leaf mode shows at each end.
inline constexpr int64_t kSummaryEdgeItems = 3;

// `value` of `dtype` as the tensor text shows it: True / False for Bool,
// decimal integers, the shortest text that reads back to the same float
// (single precision for Float32) with ".0" for integral values, inf and nan,
// and "(a, b)" for a record.
std::string format_value(const DType& dtype, const Value& value);

// "Tensor(<values>, dtype=..., layout=..., offset=..., carrier=...)", or with
// "planes=[name: layout=..., offset=..., carrier=...; ...]" for a
// multi-subtensor tensor. Values nest one list level per leaf mode, first leaf
// mode outermost, as tolist() does; a rank-0 tensor shows its one value. Above
// kSummaryThreshold elements, a leaf mode longer than 2 * kSummaryEdgeItems
// shows its first and last kSummaryEdgeItems items around "...", and further
// modes shrink (outermost first) until at most kSummaryThreshold values are
// shown; only the shown values are read. A released carrier shows
// "<released>" in place of the values and "(released)" after its name.
// Never changes a version.
std::string format_tensor(const Tensor& tensor);

}  // namespace strideweave
