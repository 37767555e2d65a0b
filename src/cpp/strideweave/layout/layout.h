// Layout: a CuTe-style hierarchical function from logical coordinates to
// scalar storage indices (spec/core-layout).
//
// A Layout is an immutable value: a Shape tree of extents and a congruent
// Stride tree, both of non-negative int64 leaves. Size, cosize and the leaf
// modes are computed once at construction, so every accessor is O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strideweave/layout/int_tuple.h"

namespace strideweave {

// One leaf of a Layout: its extent and its stride.
struct LeafMode {
  int64_t extent;
  int64_t stride;
  friend bool operator==(const LeafMode&, const LeafMode&) = default;
};

class Layout {
 public:
  // The layout shape:stride.
  // Throws ValueError naming the value and its position for a negative extent
  // or stride, ValueError naming both trees when they are not congruent, and
  // ValueError when size or cosize overflows int64.
  Layout(IntTuple shape, IntTuple stride);

  // The compact column-major layout of `shape` (see compact_col_major).
  explicit Layout(IntTuple shape);

  const IntTuple& shape() const noexcept { return shape_; }
  const IntTuple& stride() const noexcept { return stride_; }

  // Product of the leaf extents; 1 for an empty tuple shape.
  int64_t size() const noexcept { return size_; }

  // 1 + the greatest index any coordinate reaches; 0 when size() == 0.
  int64_t cosize() const noexcept { return cosize_; }

  std::size_t rank() const noexcept { return shape_.rank(); }
  int depth() const noexcept { return shape_.depth(); }

  // The (extent, stride) leaves in depth-first tree order (computed once).
  const std::vector<LeafMode>& leaf_modes() const noexcept { return leaf_modes_; }

  // Mode i as a Layout; a leaf layout is its own mode 0. Throws IndexError
  // naming i and the rank unless i < rank().
  Layout mode(std::size_t i) const;

  // The index of flat (colexicographic) index `index`.
  // Throws IndexError unless 0 <= index < size().
  int64_t operator()(int64_t index) const;

  // The index of `coord`: a flat index (leaf), a hierarchical coordinate
  // (a tuple of rank() elements, each an integer or a congruent tuple), or a
  // flat coordinate (one integer per leaf mode).
  // Throws ValueError for any other structure, IndexError naming the
  // component and extent for an out-of-range component.
  int64_t operator()(const IntTuple& coord) const;

  // The coordinate, congruent with shape(), of flat index `index`.
  // Throws IndexError unless 0 <= index < size().
  IntTuple idx2crd(int64_t index) const;

  // Whether distinct coordinates always reach distinct indices. Exact for
  // every layout: O(leaves log leaves) when the sorted modes are separable,
  // otherwise O(size) time and O(min(cosize / 8, size)) memory.
  bool is_injective() const;

  // CuTe notation without spaces, e.g. `(2,(3,4)):(1,(2,6))`.
  std::string to_string() const;

  friend bool operator==(const Layout& a, const Layout& b) noexcept {
    return a.shape_ == b.shape_ && a.stride_ == b.stride_;
  }
  friend bool operator!=(const Layout& a, const Layout& b) noexcept { return !(a == b); }

  // Consistent with ==.
  std::size_t hash() const noexcept;

 private:
  IntTuple shape_;
  IntTuple stride_;
  std::vector<LeafMode> leaf_modes_;
  int64_t size_ = 0;
  int64_t cosize_ = 0;
};

// CuTe's compact column-major (LayoutLeft) layout of `shape`: each leaf
// stride is the product of the extents of all earlier leaves.
// Post: cosize == size; is_injective().
Layout compact_col_major(const IntTuple& shape);

// The compact layout of `shape` in nested-list order (CuTe's LayoutRight over
// the leaves): each leaf stride is the product of the extents of all later
// leaves, so the first leaf mode is outermost.
// Post: cosize == size; is_injective().
Layout compact_row_major(const IntTuple& shape);

// The layout whose modes are `modes`, in order: shape (s0, s1, ...) with
// stride (d0, d1, ...).
Layout make_layout(const std::vector<Layout>& modes);

// The coordinate, congruent with `shape`, of flat index `index`
// (colexicographic). Throws IndexError unless 0 <= index < size(shape).
IntTuple idx2crd(int64_t index, const IntTuple& shape);

// Product of the leaves of `shape`. Throws ValueError on overflow.
int64_t shape_size(const IntTuple& shape);

}  // namespace strideweave
