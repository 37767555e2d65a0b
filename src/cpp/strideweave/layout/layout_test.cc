#include "strideweave/layout/layout.h"

#include <gtest/gtest.h>

#include <string>

#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using T = IntTuple;

T tup(std::initializer_list<IntTuple> e) { return IntTuple::tuple(e); }

using testing_util::message_of;

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     build_a_hierarchical_layout) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(l.shape(), tup({2, tup({3, 4})}));
  EXPECT_EQ(l.stride(), tup({1, tup({2, 6})}));
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     default_to_the_compact_column_major_stride) {
  EXPECT_EQ(Layout(tup({2, tup({3, 4})})).stride(), tup({1, tup({2, 6})}));
  EXPECT_EQ(Layout(T(5)).stride(), T(1));
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     reject_a_negative_extent_or_stride) {
  const std::string extent =
      message_of<ValueError>([] { Layout(tup({2, tup({-3, 4})}), tup({1, tup({2, 6})})); });
  EXPECT_NE(extent.find("-3"), std::string::npos) << extent;
  EXPECT_NE(extent.find("shape[1][0]"), std::string::npos) << extent;
  const std::string stride = message_of<ValueError>([] { Layout(tup({2, 3}), tup({1, -7})); });
  EXPECT_NE(stride.find("-7"), std::string::npos) << stride;
  EXPECT_NE(stride.find("stride[1]"), std::string::npos) << stride;
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     reject_a_non_congruent_stride) {
  const std::string m =
      message_of<ValueError>([] { Layout(tup({2, tup({3, 4})}), tup({1, 2, 6})); });
  EXPECT_NE(m.find("(1,2,6)"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,(3,4))"), std::string::npos) << m;
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     clause5__size_overflow) {
  const int64_t big = int64_t{1} << 40;
  const std::string m = message_of<ValueError>([&] { Layout(tup({big, big})); });
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
}

TEST(core_layout__size_rank_depth_and_cosize_summarize_a_layout, measure_a_nested_layout) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(l.size(), 24);
  EXPECT_EQ(l.rank(), 2u);
  EXPECT_EQ(l.depth(), 2);
  EXPECT_EQ(l.cosize(), 24);
}

TEST(core_layout__size_rank_depth_and_cosize_summarize_a_layout,
     measure_gapped_and_broadcast_layouts) {
  const Layout gapped(tup({2, 3}), tup({1, 4}));
  const Layout broadcast(tup({2, 3}), tup({1, 0}));
  EXPECT_EQ(gapped.size(), 6);
  EXPECT_EQ(gapped.cosize(), 10);
  EXPECT_EQ(broadcast.size(), 6);
  EXPECT_EQ(broadcast.cosize(), 2);
}

TEST(core_layout__size_rank_depth_and_cosize_summarize_a_layout, measure_an_empty_layout) {
  const Layout l(tup({3, 0, 5}), tup({100, 7, 9}));
  EXPECT_EQ(l.size(), 0);
  EXPECT_EQ(l.cosize(), 0);
  EXPECT_EQ(Layout(tup({})).size(), 1);
  EXPECT_EQ(Layout(tup({})).cosize(), 1);
}

TEST(core_layout__leaf_modes_flatten_the_shape_tree_in_order,
     list_the_leaf_modes_of_a_nested_layout) {
  const Layout l(tup({tup({2, 3}), tup({4, 1})}), tup({tup({1, 2}), tup({6, 0})}));
  const std::vector<LeafMode> expected{{2, 1}, {3, 2}, {4, 6}, {1, 0}};
  EXPECT_EQ(l.leaf_modes(), expected);
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically, map_a_flat_index) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(l(7), 7);
  EXPECT_EQ(l.idx2crd(7), tup({1, tup({0, 1})}));
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically, map_a_flat_coordinate) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({20, 100})}));
  EXPECT_EQ(l(tup({1, 2, 3})), 341);
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically,
     map_a_hierarchical_coordinate) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({20, 100})}));
  EXPECT_EQ(l(tup({1, tup({2, 3})})), 341);
  EXPECT_EQ(l(tup({1, 11})), 341);
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically,
     invert_a_flat_index_into_a_coordinate) {
  EXPECT_EQ(idx2crd(23, tup({2, tup({3, 4})})), tup({1, tup({2, 3})}));
  EXPECT_EQ(idx2crd(5, T(6)), T(5));
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically,
     reject_an_out_of_range_coordinate) {
  const Layout l(tup({2, tup({3, 4})}));
  const std::string nested = message_of<IndexError>([&] { l(tup({1, tup({3, 0})})); });
  EXPECT_NE(nested.find("component 3"), std::string::npos) << nested;
  EXPECT_NE(nested.find("extent 3"), std::string::npos) << nested;
  const std::string flat = message_of<IndexError>([&] { l(24); });
  EXPECT_NE(flat.find("24"), std::string::npos) << flat;
  EXPECT_THROW(l(-1), IndexError);
  EXPECT_THROW(l(tup({-1, 0})), IndexError);
  EXPECT_THROW(l(tup({0, 12})), IndexError);
  EXPECT_THROW(Layout(tup({3, 0}))(0), IndexError);
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically,
     reject_a_coordinate_of_the_wrong_structure) {
  const Layout l(tup({2, tup({3, 4})}));
  EXPECT_THROW(l(tup({1, 2, 3, 4})), ValueError);
  EXPECT_THROW(l(tup({tup({1, 0}), 2})), ValueError);
  EXPECT_THROW(l(tup({1, tup({1, 2, 0})})), ValueError);
}

TEST(core_layout__injectivity_is_decided_exactly, accept_an_interleaved_injective_layout) {
  EXPECT_TRUE(Layout(tup({3, 2}), tup({2, 3})).is_injective());
  EXPECT_TRUE(Layout(tup({4, 8}), tup({1, 5})).is_injective());
  EXPECT_TRUE(Layout(tup({0, 3}), tup({0, 0})).is_injective());
  EXPECT_TRUE(Layout(tup({1, 1}), tup({0, 0})).is_injective());
}

TEST(core_layout__injectivity_is_decided_exactly, detect_a_collision) {
  EXPECT_FALSE(Layout(tup({2, 3}), tup({1, 0})).is_injective());
  EXPECT_FALSE(Layout(tup({3, 2}), tup({1, 2})).is_injective());
  // Passes the pigeonhole test (cosize 14 >= size 12) but 3*2 == 2*3 collides.
  EXPECT_FALSE(Layout(tup({4, 3}), tup({2, 3})).is_injective());
}

TEST(core_layout__the_canonical_injective_layout_is_compact_column_major,
     build_the_canonical_layout_of_a_nested_shape) {
  const Layout l = compact_col_major(tup({tup({2, 3}), 4}));
  EXPECT_EQ(l, Layout(tup({tup({2, 3}), 4}), tup({tup({1, 2}), 6})));
  EXPECT_EQ(l.cosize(), 24);
}

TEST(core_layout__layouts_print_in_cute_notation_and_compare_by_value, print_a_nested_layout) {
  EXPECT_EQ(Layout(tup({2, tup({3, 4})}), tup({1, tup({2, 6})})).to_string(),
            "(2,(3,4)):(1,(2,6))");
  EXPECT_EQ(Layout(T(4), T(2)).to_string(), "4:2");
}

TEST(core_layout__layouts_print_in_cute_notation_and_compare_by_value, compare_layouts_by_value) {
  const Layout a(tup({2, 3}), tup({1, 2}));
  const Layout b(tup({2, 3}), tup({1, 2}));
  const Layout c(tup({2, 3}), tup({1, 3}));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a, c);
}

TEST(core_layout__layouts_print_in_cute_notation_and_compare_by_value, distinguish_tree_structure) {
  const Layout flat(T(6), T(1));
  const Layout wrapped(tup({6}), tup({1}));
  const Layout split(tup({2, 3}), tup({1, 2}));
  EXPECT_NE(flat, wrapped);
  EXPECT_NE(flat, split);
  EXPECT_NE(wrapped, split);
}

TEST(Layout, ModeAndMakeLayoutRoundTrip) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(l.mode(1), Layout(tup({3, 4}), tup({2, 6})));
  EXPECT_EQ(make_layout({l.mode(0), l.mode(1)}), l);
  EXPECT_EQ(Layout(T(4), T(2)).mode(0), Layout(T(4), T(2)));
}

TEST(core_layout__modes_are_selected_like_python_sequence_items, select_a_mode_from_either_end) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(l.mode(1), Layout(tup({3, 4}), tup({2, 6})));
  EXPECT_EQ(l.mode(0), Layout(2, 1));
  EXPECT_EQ(Layout(4, 1).mode(0), Layout(4, 1));
}

TEST(core_layout__modes_are_selected_like_python_sequence_items, reject_a_mode_index_out_of_range) {
  const std::string empty = message_of<IndexError>([] { Layout(tup({}), tup({})).mode(0); });
  EXPECT_NE(empty.find("index 0"), std::string::npos) << empty;
  EXPECT_NE(empty.find("rank 0"), std::string::npos) << empty;
  EXPECT_THROW(Layout(tup({2, tup({3, 4})})).mode(5), IndexError);
  EXPECT_THROW(Layout(tup({2, 3}), tup({1, 2})).mode(2), IndexError);
  EXPECT_THROW(Layout(4, 1).mode(5), IndexError);
  EXPECT_THROW(Layout(4, 1).mode(1), IndexError);
}

TEST(core_layout__layouts_map_coordinates_to_indices_colexicographically, map_a_mixed_coordinate) {
  const Layout l(tup({2, tup({3, 4})}), tup({1, tup({20, 100})}));
  EXPECT_EQ(l(tup({1, 4})), 121);
  EXPECT_EQ(l(tup({1, tup({1, 1})})), 121);
  EXPECT_EQ(l(tup({0, 5})), 140);  // 5 is (2, 1) in (3, 4), not (1, 2)
  const Layout deep(tup({tup({2, 3}), tup({2, tup({2, 3})})}),
                    tup({tup({1, 10}), tup({100, tup({1000, 10000})})}));
  const int64_t expected = deep(tup({tup({0, 2}), tup({1, tup({1, 2})})}));
  EXPECT_EQ(deep(tup({4, tup({1, 5})})), expected);
  EXPECT_EQ(deep(tup({4, 11})), expected);
  EXPECT_EQ(deep(tup({tup({0, 2}), tup({1, 5})})), expected);
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     reject_nesting_deeper_than_64_levels) {
  IntTuple shape(2);
  IntTuple stride(3);
  for (int i = 0; i < IntTuple::kMaxDepth; ++i) {
    shape = IntTuple::tuple({shape});
    stride = IntTuple::tuple({stride});
  }
  const Layout deepest(shape, stride);
  EXPECT_EQ(deepest.depth(), 64);
  EXPECT_EQ(deepest.size(), 2);
  EXPECT_EQ(deepest.cosize(), 4);
  const std::string message = message_of<ValueError>([&] { make_layout({deepest, Layout(1)}); });
  EXPECT_NE(message.find("64"), std::string::npos) << message;
}

}  // namespace
}  // namespace strideweave
