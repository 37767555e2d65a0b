// RapidCheck generators of hierarchical layouts for the C++ property tests.
//
// The families mirror src/python/strideweave/kit/strategies.py (the Python side's single
// strategies module): nested shapes with extents 0 and 1, compact strides,
// strides with holes, permuted modes, stride-zero (broadcast) modes and
// arbitrary strides. Sizes stay small enough for brute-force checks.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <vector>

#include "strideweave/layout/algebra.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

// How RapidCheck prints generated values in a counterexample.
inline void showValue(const IntTuple& t, std::ostream& os) { os << t.to_string(); }
inline void showValue(const Layout& l, std::ostream& os) { os << l.to_string(); }

}  // namespace strideweave

namespace strideweave::proptest {

inline constexpr int64_t kMaxSize = 512;

// Extents 0..6, with 0 rare and 1 and 2 common.
inline rc::Gen<int64_t> gen_extent() {
  return rc::gen::weightedElement<int64_t>(
      {{1, 0}, {6, 1}, {6, 2}, {4, 3}, {3, 4}, {2, 5}, {2, 6}});
}

// Extents that are powers of two, for which every composition is admissible.
inline rc::Gen<int64_t> gen_pow2_extent() { return rc::gen::element<int64_t>(1, 2, 4, 8); }

// Picks a shape tree of depth <= max_depth with leaves from `extent`.
// Must run inside a property or rc::gen::exec.
inline IntTuple pick_shape(const rc::Gen<int64_t>& extent, int max_depth) {
  if (max_depth == 0 || *rc::gen::inRange(0, 3) == 0) return IntTuple(*extent);
  const int rank = *rc::gen::inRange(0, 4);
  std::vector<IntTuple> elements;
  for (int i = 0; i < rank; ++i) elements.push_back(pick_shape(extent, max_depth - 1));
  return IntTuple::tuple(std::move(elements));
}

// A shape of at most 8 leaves and size at most kMaxSize.
inline rc::Gen<IntTuple> gen_bounded_shape(rc::Gen<int64_t> extent) {
  return rc::gen::suchThat(rc::gen::exec([extent] { return pick_shape(extent, 3); }),
                           [](const IntTuple& s) {
                             int64_t size = 1;
                             for (int64_t e : s.leaves()) {
                               size *= e;
                               if (size > kMaxSize) return false;
                             }
                             return s.leaf_count() <= 8;
                           });
}

// A random order of 0..n-1. Must run inside a property or rc::gen::exec.
inline std::vector<std::size_t> pick_permutation(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const auto keys = *rc::gen::container<std::vector<int>>(n, rc::gen::inRange(0, 1000));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  return order;
}

// Strides for leaves of `extents`: arbitrary (family 0), compact column-major
// (1), compact over permuted modes (2), permuted with holes (3), or permuted
// with stride-zero broadcast modes (4). Must run inside a property or exec.
inline std::vector<int64_t> pick_strides(const std::vector<int64_t>& extents) {
  const std::size_t n = extents.size();
  std::vector<int64_t> strides(n, 0);
  const int family = *rc::gen::inRange(0, 5);
  if (family == 0) {
    for (auto& d : strides) d = *rc::gen::inRange<int64_t>(0, 13);
    return strides;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (family >= 2) order = pick_permutation(n);
  int64_t running = 1;
  for (std::size_t k : order) {
    strides[k] = running;
    const int64_t hole = family == 3 ? *rc::gen::inRange<int64_t>(0, 3) : 0;
    running *= std::max<int64_t>(extents[k], 1) + hole;
  }
  if (family == 4) {
    for (auto& d : strides) {
      if (*rc::gen::inRange(0, 3) == 0) d = 0;
    }
  }
  return strides;
}

// Any layout of bounded size from the families above.
inline rc::Gen<Layout> gen_layout(rc::Gen<int64_t> extent = gen_extent()) {
  return rc::gen::exec([extent] {
    const IntTuple shape = *gen_bounded_shape(extent);
    return Layout(shape, unflatten(pick_strides(shape.leaves()), shape));
  });
}

// Strides for which complement exists: a permuted chain where each stride is
// the span of the modes before it times 1 or 2.
inline rc::Gen<Layout> gen_complementable_layout(
    rc::Gen<int64_t> extent = rc::gen::inRange<int64_t>(1, 5)) {
  return rc::gen::exec([extent] {
    const IntTuple shape = *gen_bounded_shape(extent);
    const std::vector<int64_t> extents = shape.leaves();
    const std::vector<std::size_t> order = pick_permutation(extents.size());
    std::vector<int64_t> strides(extents.size(), 0);
    int64_t span = 1;
    for (std::size_t k : order) {
      strides[k] = span * *rc::gen::inRange<int64_t>(1, 3);
      span = strides[k] * extents[k];
    }
    return Layout(shape, unflatten(strides, shape));
  });
}

// The integer standing for `coord` within `shape`: its colexicographic index.
inline int64_t collapse(const IntTuple& coord, const IntTuple& shape) {
  if (shape.is_leaf()) return coord.value();
  int64_t index = 0;
  int64_t weight = 1;
  for (std::size_t k = 0; k < shape.rank(); ++k) {
    index += collapse(coord[k], shape[k]) * weight;
    weight *= shape_size(shape[k]);
  }
  return index;
}

// `coord` with one tuple-shaped sub-coordinate below the root replaced by the
// integer standing for it: one form per tuple-shaped node of `shape` other
// than the root (whose integer is the flat index). Mirrors
// strategies.single_collapses.
inline std::vector<IntTuple> single_collapses(const IntTuple& coord, const IntTuple& shape) {
  std::vector<IntTuple> forms;
  if (shape.is_leaf()) return forms;
  for (std::size_t k = 0; k < shape.rank(); ++k) {
    if (shape[k].is_leaf()) continue;
    std::vector<IntTuple> replacements{IntTuple(collapse(coord[k], shape[k]))};
    for (IntTuple& inner : single_collapses(coord[k], shape[k])) {
      replacements.push_back(std::move(inner));
    }
    for (IntTuple& replacement : replacements) {
      std::vector<IntTuple> elements = coord.elements();
      elements[k] = std::move(replacement);
      forms.push_back(IntTuple::tuple(std::move(elements)));
    }
  }
  return forms;
}

// Every index of `layout`, in flat-index order.
inline std::vector<int64_t> all_indices(const Layout& layout) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < layout.size(); ++i) out.push_back(layout(i));
  return out;
}

// `layout` evaluated at flat index i with the last mode of coalesce(layout)
// unbounded: CuTe's extension of a layout past its size.
inline int64_t evaluate_extended(const Layout& layout, int64_t i) {
  const std::vector<LeafMode> modes = coalesce(layout).leaf_modes();
  int64_t index = 0;
  for (std::size_t k = 0; k < modes.size(); ++k) {
    if (k + 1 == modes.size()) return index + i * modes[k].stride;
    index += (i % modes[k].extent) * modes[k].stride;
    i /= modes[k].extent;
  }
  return index;
}

// `layout` with its stride-zero leaf modes replaced by extent 1.
inline Layout without_broadcast_modes(const Layout& layout) {
  std::vector<int64_t> extents = layout.shape().leaves();
  const std::vector<int64_t> strides = layout.stride().leaves();
  for (std::size_t k = 0; k < extents.size(); ++k) {
    if (strides[k] == 0) extents[k] = 1;
  }
  return Layout(unflatten(extents, layout.shape()), layout.stride());
}

// CuTe's compatible(B, R): R refines B's shape tree with the same sizes.
inline bool compatible(const IntTuple& b, const IntTuple& r) {
  if (b.is_leaf()) return shape_size(r) == b.value();
  if (r.is_leaf() || r.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < b.rank(); ++i) {
    if (!compatible(b[i], r[i])) return false;
  }
  return true;
}

}  // namespace strideweave::proptest
