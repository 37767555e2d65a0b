// IntTuple: an integer or a tuple of IntTuples, the tree that Shapes,
// Strides and coordinates are made of.
//
// An IntTuple is a plain value: copyable, comparable, hashable. It places no
// sign restriction on its leaves; Layout validates extents and strides. Its
// depth is bounded by kMaxDepth, so every recursive walk of a tree is too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace strideweave {

class IntTuple {
 public:
  // The greatest depth of any IntTuple (NumPy's limit on dimensions, 64).
  static constexpr int kMaxDepth = 64;

  // A leaf holding `value`.
  IntTuple(int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor)

  // A tuple of `elements` (possibly empty). Throws ValueError when the
  // tuple's depth would exceed kMaxDepth.
  static IntTuple tuple(std::vector<IntTuple> elements);
  static IntTuple tuple(std::initializer_list<IntTuple> elements);

  bool is_leaf() const noexcept { return leaf_; }

  // The leaf's value. Precondition: is_leaf().
  int64_t value() const noexcept { return value_; }

  // The tuple's elements; empty for a leaf.
  const std::vector<IntTuple>& elements() const noexcept { return elements_; }

  // 1 for a leaf, the number of elements for a tuple.
  std::size_t rank() const noexcept { return leaf_ ? 1 : elements_.size(); }

  // 0 for a leaf, 1 + the greatest element depth for a tuple (1 when empty).
  // O(1): computed at construction.
  int depth() const noexcept { return depth_; }

  // Element i of a tuple; a leaf is its own only element. Precondition: i < rank().
  const IntTuple& operator[](std::size_t i) const noexcept { return leaf_ ? *this : elements_[i]; }

  // The leaves in depth-first order.
  std::vector<int64_t> leaves() const;

  // The number of leaves.
  std::size_t leaf_count() const noexcept;

  // CuTe notation without spaces: `4`, `(2,(3,4))`, `()`.
  std::string to_string() const;

  friend bool operator==(const IntTuple& a, const IntTuple& b) noexcept;
  friend bool operator!=(const IntTuple& a, const IntTuple& b) noexcept { return !(a == b); }

  // A hash consistent with ==: equal trees hash equally.
  std::size_t hash() const noexcept;

 private:
  IntTuple() : leaf_(false) {}

  int64_t value_ = 0;
  bool leaf_ = true;
  int depth_ = 0;
  std::vector<IntTuple> elements_;
};

// True when a and b have the same tree structure (both leaves, or tuples of
// equal rank whose elements are pairwise congruent).
bool congruent(const IntTuple& a, const IntTuple& b) noexcept;

// A tree of the same structure as `like` whose leaves, in depth-first order,
// are `leaves`. Precondition: leaves.size() == like.leaf_count().
IntTuple unflatten(const std::vector<int64_t>& leaves, const IntTuple& like);

}  // namespace strideweave
