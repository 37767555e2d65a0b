// Properties of the layout views' layouts (tensor/layout_views.h) for any
// generated layout: permutations invert, and reshape finds a view exactly when
// one stride per leaf reproduces the layout's flat order.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <vector>

#include "layout_generators.h"
#include "strideweave/tensor/layout_views.h"

namespace strideweave::proptest {
namespace {

// The one stride per leaf of `shape` reproducing layout(i) for every flat
// index i, by brute force; nullopt when there is none.
std::optional<std::vector<int64_t>> affine_strides(const Layout& layout, const IntTuple& shape) {
  const std::vector<int64_t> extents = shape.leaves();
  std::vector<int64_t> strides;
  int64_t weight = 1;
  for (int64_t e : extents) {
    strides.push_back(e > 1 && weight < layout.size() ? layout(weight) : 0);
    weight *= e;
  }
  for (int64_t i = 0; i < layout.size(); ++i) {
    int64_t rest = i;
    int64_t index = 0;
    for (std::size_t k = 0; k < extents.size(); ++k) {
      index += (rest % extents[k]) * strides[k];
      rest /= extents[k];
    }
    if (index != layout(i)) return std::nullopt;
  }
  return strides;
}

// A shape of the same size as `layout`: its leaf extents regrouped, some
// neighbours multiplied, extent-1 leaves kept.
IntTuple pick_reshape(const Layout& layout) {
  std::vector<int64_t> leaves = layout.shape().leaves();
  std::vector<IntTuple> modes;
  std::size_t k = 0;
  while (k < leaves.size()) {
    const auto width = *rc::gen::inRange<std::size_t>(1, leaves.size() - k + 1);
    int64_t merged = 1;
    for (std::size_t j = k; j < k + width; ++j) merged *= leaves[j];
    if (*rc::gen::arbitrary<bool>()) {
      modes.emplace_back(merged);
    } else {
      std::vector<IntTuple> group(leaves.begin() + static_cast<std::ptrdiff_t>(k),
                                  leaves.begin() + static_cast<std::ptrdiff_t>(k + width));
      modes.push_back(IntTuple::tuple(std::move(group)));
    }
    k += width;
  }
  return IntTuple::tuple(std::move(modes));
}

RC_GTEST_PROP(core_tensor_representation__reshape_is_a_view_through_composition,
              clause5__a_view_exactly_when_one_stride_per_leaf_reproduces_the_flat_order, ()) {
  const Layout layout = *gen_layout();
  const IntTuple shape = pick_reshape(layout);
  const std::optional<Layout> view = reshaped_layout(layout, shape);
  const std::optional<std::vector<int64_t>> strides = affine_strides(layout, shape);
  RC_ASSERT(view.has_value() == strides.has_value());
  if (!view) return;
  RC_ASSERT(view->shape() == shape);
  for (int64_t i = 0; i < layout.size(); ++i) RC_ASSERT((*view)(i) == layout(i));
}

RC_GTEST_PROP(core_tensor_representation__permute_reorders_the_top_level_modes,
              clause1__the_inverse_permutation_restores_the_layout, ()) {
  const Layout layout = *gen_layout();
  const std::vector<std::size_t> order = pick_permutation(layout.rank());
  std::vector<int64_t> modes(order.begin(), order.end());
  std::vector<int64_t> inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inverse[order[k]] = static_cast<int64_t>(k);
  const Layout permuted = permute_layout(layout, modes, "permute");
  RC_ASSERT(permuted.size() == layout.size());
  RC_ASSERT(permuted.cosize() == layout.cosize());
  RC_ASSERT(permute_layout(permuted, inverse, "permute") == layout);
}

}  // namespace
}  // namespace strideweave::proptest
