// Post-conditions of spec/core-layout, checked for any generated layout.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "layout_generators.h"
#include "strideweave/util/error.h"

namespace strideweave::proptest {
namespace {

RC_GTEST_PROP(core_layout__size_rank_depth_and_cosize_summarize_a_layout,
              requirement__cosize_matches_brute_force, ()) {
  const Layout l = *gen_layout();
  const std::vector<int64_t> indices = all_indices(l);
  const int64_t brute = indices.empty() ? 0 : *std::max_element(indices.begin(), indices.end()) + 1;
  RC_ASSERT(l.cosize() == brute);
  RC_ASSERT(static_cast<int64_t>(indices.size()) == l.size());
}

RC_GTEST_PROP(core_layout__injectivity_is_decided_exactly, requirement__matches_brute_force, ()) {
  const Layout l = *gen_layout();
  const std::vector<int64_t> indices = all_indices(l);
  const std::set<int64_t> distinct(indices.begin(), indices.end());
  RC_TAG(l.is_injective());
  RC_ASSERT(l.is_injective() == (distinct.size() == indices.size()));
}

RC_GTEST_PROP(core_layout__leaf_modes_flatten_the_shape_tree_in_order,
              agree_with_the_coordinate_map__for_any_layout, ()) {
  const Layout l = *gen_layout();
  const std::vector<LeafMode> modes = l.leaf_modes();
  for (int64_t i = 0; i < l.size(); ++i) {
    const IntTuple coord = l.idx2crd(i);
    const std::vector<int64_t> flat = coord.leaves();
    RC_ASSERT(flat.size() == modes.size());
    int64_t dot = 0;
    for (std::size_t k = 0; k < modes.size(); ++k) dot += flat[k] * modes[k].stride;
    RC_ASSERT(l(i) == dot);
    RC_ASSERT(l(coord) == dot);
    std::vector<IntTuple> flat_coord(flat.begin(), flat.end());
    if (flat_coord.size() != l.rank() || l.shape().is_leaf()) {
      RC_ASSERT(l(IntTuple::tuple(flat_coord)) == dot);
    }
    for (const IntTuple& mixed : single_collapses(coord, l.shape())) {
      RC_TAG("mixed coordinate");
      RC_ASSERT(l(mixed) == dot);
    }
  }
}

RC_GTEST_PROP(core_layout__coalesce_keeps_the_function, clause1__for_any_layout, ()) {
  const Layout l = *gen_layout();
  const Layout c = coalesce(l);
  RC_ASSERT(c.size() == l.size());
  RC_ASSERT(c.depth() <= 1);
  for (int64_t i = 0; i < l.size(); ++i) RC_ASSERT(c(i) == l(i));
}

// Checks R = a o b against its post-conditions.
void check_composition(const Layout& a, const Layout& b, const Layout& r) {
  RC_ASSERT(compatible(b.shape(), r.shape()));
  if (!b.shape().is_leaf() && !without_broadcast_modes(b).is_injective()) {
    RC_TAG("overlapping tuple B");  // mode-by-mode composition only (left distributivity)
    return;
  }
  for (int64_t i = 0; i < b.size(); ++i) RC_ASSERT(r(i) == evaluate_extended(a, b(i)));
}

RC_GTEST_PROP(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
              requirement__admissible_operands, ()) {
  // Power-of-two extents and strides satisfy both divisibility conditions.
  const Layout a = *gen_layout(gen_pow2_extent());
  const IntTuple b_shape = *gen_bounded_shape(gen_pow2_extent());
  std::vector<int64_t> b_strides;
  for (std::size_t k = 0; k < b_shape.leaf_count(); ++k) {
    b_strides.push_back(*rc::gen::element<int64_t>(0, 1, 2, 4, 8, 16));
  }
  const Layout b(b_shape, unflatten(b_strides, b_shape));
  check_composition(a, b, composition(a, b));
}

RC_GTEST_PROP(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
              requirement__any_operands_compose_or_raise_value_error, ()) {
  const Layout a = *gen_layout();
  const Layout b = *gen_layout();
  try {
    const Layout r = composition(a, b);
    RC_TAG("admissible");
    check_composition(a, b, r);
  } catch (const ValueError& e) {
    RC_TAG("refused");
    const std::string m = e.what();
    RC_ASSERT(m.find("divisibility condition fails at mode") != std::string::npos);
  }
}

RC_GTEST_PROP(core_layout__complement_fills_the_gaps_of_a_layouts_image,
              requirement__disjoint_ordered_bounded, ()) {
  const Layout l = *gen_complementable_layout();
  const int64_t cotarget = *rc::gen::inRange<int64_t>(0, 2 * kMaxSize);
  const Layout r = complement(l, cotarget);
  const std::vector<int64_t> image = all_indices(l);
  const std::set<int64_t> in_l(image.begin(), image.end());
  for (int64_t i = 1; i < r.size(); ++i) RC_ASSERT(in_l.count(r(i)) == 0u);
  const std::vector<LeafMode> modes = r.leaf_modes();
  for (std::size_t k = 1; k < modes.size(); ++k) RC_ASSERT(modes[k - 1].stride < modes[k].stride);
  int64_t span = 1;
  for (const LeafMode& m : l.leaf_modes()) {
    if (m.extent > 1 && m.stride > 0) span = std::max(span, m.extent * m.stride);
  }
  const int64_t bound =
      std::max<int64_t>(1, (std::max<int64_t>(cotarget, 1) + span - 1) / span) * span;
  RC_ASSERT(r.cosize() <= bound);
  const Layout together = make_layout({l, r});
  RC_ASSERT(together.is_injective());
  RC_ASSERT(together.size() >= cotarget);
}

RC_GTEST_PROP(core_layout__complement_fills_the_gaps_of_a_layouts_image,
              requirement__any_layout_complements_or_raises_value_error, ()) {
  const Layout l = *gen_layout();
  try {
    const Layout r = complement(l, *rc::gen::inRange<int64_t>(0, kMaxSize));
    RC_TAG("complemented");
    const std::vector<int64_t> image = all_indices(l);
    const std::set<int64_t> in_l(image.begin(), image.end());
    for (int64_t i = 1; i < r.size(); ++i) RC_ASSERT(in_l.count(r(i)) == 0u);
  } catch (const ValueError&) {
    RC_TAG("refused");
  }
}

RC_GTEST_PROP(core_layout__right_inverse_undoes_a_layout_on_its_compact_prefix,
              clause1__for_any_layout, ()) {
  const Layout l = *gen_layout();
  const Layout r = right_inverse(l);
  RC_ASSERT(coalesce(r) == r);
  for (int64_t i = 0; i < r.size(); ++i) RC_ASSERT(l(r(i)) == i);
}

RC_GTEST_PROP(core_layout__divide_and_product_tile_one_layout_by_another,
              requirement__divide_is_its_definition, ()) {
  const Layout a = *gen_layout(gen_pow2_extent());
  const Layout b = *gen_complementable_layout();
  const Layout tile = make_layout({b, complement(b, a.size())});
  try {
    const Layout divided = logical_divide(a, b);
    RC_TAG("divided");
    RC_ASSERT(divided == composition(a, tile));
    RC_ASSERT(divided.size() == tile.size());
  } catch (const ValueError&) {
    RC_TAG("refused");
    RC_ASSERT_THROWS_AS(composition(a, tile), ValueError);
  }
}

RC_GTEST_PROP(core_layout__divide_and_product_tile_one_layout_by_another,
              requirement__product_is_its_definition, ()) {
  // A power-of-two chain for `a` and power-of-two `b` make the product admissible.
  const Layout a = *gen_complementable_layout(gen_pow2_extent());
  const IntTuple b_shape = *gen_bounded_shape(gen_pow2_extent());
  std::vector<int64_t> b_strides;
  for (std::size_t k = 0; k < b_shape.leaf_count(); ++k) {
    b_strides.push_back(*rc::gen::element<int64_t>(0, 1, 2, 4));
  }
  const Layout b(b_shape, unflatten(b_strides, b_shape));
  const Layout product = logical_product(a, b);
  RC_ASSERT(product.mode(0) == a);
  RC_ASSERT(product.mode(1) == composition(complement(a, a.size() * b.cosize()), b));
  RC_ASSERT(product.size() == a.size() * b.size());
}

}  // namespace
}  // namespace strideweave::proptest
