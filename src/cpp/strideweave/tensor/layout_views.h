// The layouts of the layout views (spec/core-tensor-representation): T,
// transpose and permute reorder a layout's top-level modes, reshape composes
// it with the compact layout of a new shape. Pure functions; the recorded
// views that use them are in ops/layout_views.h.
//
// Top-level modes: the elements of a tuple shape; an integral shape is one
// mode (rank 1) and the empty tuple none (rank 0). A reordered mode moves as a
// unit, hierarchical modes included. A mode index may be negative: it then
// counts from the end, as in PyTorch and NumPy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strideweave/layout/int_tuple.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

// The layout whose mode k is mode modes[k] of `layout`.
// Post: size and cosize unchanged; for every coordinate c of the result,
//       result(c) == layout(c permuted back).
// Checks, in order: ValueError naming both counts when modes.size() differs
// from the rank; IndexError naming the mode and the rank for one out of
// range; ValueError naming a mode given twice. Messages start with `op`.
Layout permute_layout(const Layout& layout, const std::vector<int64_t>& modes, const char* op);

// The permutation swapping modes i and j of a rank-`rank` layout (identity
// when they name the same mode). Throws IndexError naming the mode and the
// rank for one out of range; messages start with `op`.
std::vector<int64_t> transposition(std::size_t rank, int64_t i, int64_t j, const char* op);

// The permutation reversing the modes of a rank-`rank` layout (.T).
std::vector<int64_t> reversal(std::size_t rank);

// `shape` with its one extent -1 (if any) replaced by size / the product of
// the other extents. Throws ValueError for another negative extent, for more
// than one -1, for a -1 that cannot be inferred (the other extents' product
// is zero or does not divide size), and naming both sizes and both shapes
// when size(result) != size; `from` is the tensor's shape, for the messages.
IntTuple resolve_reshape(const IntTuple& shape, int64_t size, const IntTuple& from);

// The layout R of shape `shape` (already resolved, size(shape) ==
// size(layout)) with R(i) == layout(i) for every flat (colexicographic) index
// i, when one exists: R is composition(layout, compact_col_major(shape)) with
// each leaf mode of `shape` coalesced into a single mode. nullopt when the
// composition is not admissible or a leaf mode of `shape` would need more
// than one stride: then `why` (if given) receives the reason.
std::optional<Layout> reshaped_layout(const Layout& layout, const IntTuple& shape,
                                      std::string* why = nullptr);

}  // namespace strideweave
