#include "strideweave/layout/algebra.h"

#include <gtest/gtest.h>

#include <string>

#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using T = IntTuple;

T tup(std::initializer_list<IntTuple> e) { return IntTuple::tuple(e); }

Layout L(const T& shape, const T& stride) { return Layout(shape, stride); }

std::string value_error(const std::function<void()>& f) {
  return testing_util::message_of<ValueError>(f);
}

TEST(core_layout__coalesce_keeps_the_function, merge_contiguous_modes) {
  EXPECT_EQ(coalesce(L(tup({2, tup({1, 6})}), tup({1, tup({6, 2})}))), L(12, 1));
  EXPECT_EQ(coalesce(L(tup({2, 3}), tup({0, 0}))), L(6, 0));
}

TEST(core_layout__coalesce_keeps_the_function, keep_modes_that_do_not_merge) {
  EXPECT_EQ(coalesce(L(tup({2, 3}), tup({1, 4}))), L(tup({2, 3}), tup({1, 4})));
}

TEST(core_layout__coalesce_keeps_the_function, clause3__degenerate_sizes) {
  EXPECT_EQ(coalesce(L(tup({3, 0}), tup({1, 3}))), L(0, 0));
  EXPECT_EQ(coalesce(L(tup({1, tup({1})}), tup({5, tup({7})}))), L(1, 0));
}

TEST(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
     compose_two_hierarchical_layouts) {
  EXPECT_EQ(composition(L(tup({6, 2}), tup({8, 2})), L(tup({4, 3}), tup({3, 1}))),
            L(tup({tup({2, 2}), 3}), tup({tup({24, 2}), 8})));
  EXPECT_EQ(composition(L(20, 2), L(tup({5, 4}), tup({4, 1}))), L(tup({5, 4}), tup({8, 2})));
}

TEST(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
     reject_a_shape_inadmissible_composition) {
  const std::string m = value_error([] { composition(L(tup({4, 3}), tup({1, 5})), L(3, 2)); });
  EXPECT_NE(m.find("shape divisibility"), std::string::npos) << m;
  EXPECT_NE(m.find("mode 0"), std::string::npos) << m;
}

TEST(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
     reject_a_stride_inadmissible_composition) {
  const std::string m = value_error([] { composition(L(tup({4, 5}), tup({1, 10})), L(2, 3)); });
  EXPECT_NE(m.find("stride divisibility"), std::string::npos) << m;
  EXPECT_NE(m.find("mode 0 (4:1)"), std::string::npos) << m;
}

TEST(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
     requirement__mode_by_mode_tiler) {
  const Layout a(tup({4, 6}), tup({1, 4}));
  EXPECT_EQ(composition(a, Tiler{L(2, 2), L(3, 2)}), L(tup({2, 3}), tup({2, 8})));
  EXPECT_THROW(composition(a, Tiler{L(2, 1), L(2, 1), L(2, 1)}), ValueError);
}

TEST(core_layout__complement_fills_the_gaps_of_a_layouts_image, complement_a_strided_layout) {
  EXPECT_EQ(complement(L(4, 2), 24), L(tup({2, 3}), tup({1, 8})));
}

TEST(core_layout__complement_fills_the_gaps_of_a_layouts_image, complement_a_two_mode_layout) {
  EXPECT_EQ(complement(L(tup({2, 2}), tup({1, 6})), 24), L(tup({3, 2}), tup({2, 12})));
}

TEST(core_layout__complement_fills_the_gaps_of_a_layouts_image,
     reject_a_layout_without_complement) {
  const std::string m = value_error([] { complement(L(tup({2, 2}), tup({1, 1})), 8); });
  EXPECT_NE(m.find("2:1"), std::string::npos) << m;
  EXPECT_THROW(complement(L(4, 1), -1), ValueError);
}

TEST(core_layout__right_inverse_undoes_a_layout_on_its_compact_prefix,
     invert_a_permuted_compact_layout) {
  EXPECT_EQ(right_inverse(L(tup({2, 3}), tup({3, 1}))), L(tup({3, 2}), tup({2, 1})));
}

TEST(core_layout__right_inverse_undoes_a_layout_on_its_compact_prefix,
     invert_the_compact_prefix_of_a_gapped_layout) {
  EXPECT_EQ(right_inverse(L(tup({4, 8}), tup({1, 5}))), L(4, 1));
  EXPECT_EQ(right_inverse(L(tup({4, 8}), tup({2, 8}))), L(1, 0));
}

TEST(core_layout__divide_and_product_tile_one_layout_by_another, divide_a_layout_by_a_tile) {
  EXPECT_EQ(logical_divide(L(tup({4, 2, 3}), tup({2, 1, 8})), L(4, 2)),
            L(tup({tup({2, 2}), tup({2, 3})}), tup({tup({4, 1}), tup({2, 8})})));
}

TEST(core_layout__divide_and_product_tile_one_layout_by_another, regroup_a_mode_by_mode_division) {
  const Layout a(tup({4, 6}), tup({1, 4}));
  const Tiler tiler{L(2, 1), L(3, 1)};
  EXPECT_EQ(zipped_divide(a, tiler),
            L(tup({tup({2, 3}), tup({2, 2})}), tup({tup({1, 4}), tup({2, 12})})));
  EXPECT_EQ(tiled_divide(a, tiler), L(tup({tup({2, 3}), 2, 2}), tup({tup({1, 4}), 2, 12})));
  EXPECT_EQ(logical_divide(a, tiler),
            L(tup({tup({2, 2}), tup({3, 2})}), tup({tup({1, 2}), tup({4, 12})})));
}

TEST(core_layout__divide_and_product_tile_one_layout_by_another,
     reproduce_a_layout_with_a_product) {
  EXPECT_EQ(logical_product(L(tup({2, 2}), tup({4, 1})), L(6, 1)),
            L(tup({tup({2, 2}), tup({2, 3})}), tup({tup({4, 1}), tup({2, 8})})));
}

// Correctness of the algebra at the depth limit and over thousands of modes;
// its speed is measured by bench/layout_algebra.py, never asserted here.
TEST(core_layout__composition_follows_cute_and_refuses_inadmissible_operands,
     requirement__at_the_depth_limit_and_wide) {
  IntTuple shape(8);
  IntTuple stride(2);
  for (int i = 0; i < IntTuple::kMaxDepth; ++i) {
    shape = IntTuple::tuple({shape});
    stride = IntTuple::tuple({stride});
  }
  const Layout deep(shape, stride);
  const Layout composed = composition(deep, deep);
  EXPECT_EQ(composed.depth(), 64);
  EXPECT_EQ(composed.leaf_modes(), (std::vector<LeafMode>{{8, 4}}));

  std::vector<IntTuple> ones(5000, IntTuple(1));
  std::vector<IntTuple> strides(5000, IntTuple(0));
  ones[0] = IntTuple(6);
  strides[0] = IntTuple(1);
  const Layout wide(IntTuple::tuple(ones), IntTuple::tuple(strides));
  const Layout r = composition(wide, wide);
  ASSERT_EQ(r.rank(), 5000u);
  EXPECT_EQ(r.mode(0), Layout(6, 1));
  EXPECT_EQ(r.mode(4999), Layout(1, 0));
  EXPECT_EQ(coalesce(r), Layout(6, 1));
  EXPECT_EQ(logical_divide(wide, Layout(2, 1)), Layout(tup({2, 3}), tup({1, 2})));
}

}  // namespace
}  // namespace strideweave
