#include "strideweave/layout/int_tuple.h"

#include <gtest/gtest.h>

#include "strideweave/util/error.h"

namespace strideweave {
namespace {

IntTuple nested() { return IntTuple::tuple({2, IntTuple::tuple({3, 4})}); }

TEST(IntTuple, RankDepthAndLeaves) {
  EXPECT_EQ(IntTuple(5).rank(), 1u);
  EXPECT_EQ(IntTuple(5).depth(), 0);
  EXPECT_EQ(nested().rank(), 2u);
  EXPECT_EQ(nested().depth(), 2);
  EXPECT_EQ(nested().leaves(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(nested().leaf_count(), 3u);
  EXPECT_EQ(IntTuple::tuple({}).depth(), 1);
  EXPECT_EQ(IntTuple::tuple({}).leaf_count(), 0u);
}

TEST(IntTuple, PrintsInCuteNotation) {
  EXPECT_EQ(nested().to_string(), "(2,(3,4))");
  EXPECT_EQ(IntTuple(7).to_string(), "7");
  EXPECT_EQ(IntTuple::tuple({}).to_string(), "()");
  EXPECT_EQ(IntTuple::tuple({6}).to_string(), "(6)");
}

TEST(IntTuple, EqualityAndHashFollowTheTree) {
  EXPECT_EQ(nested(), nested());
  EXPECT_EQ(nested().hash(), nested().hash());
  EXPECT_NE(IntTuple(6), IntTuple::tuple({6}));
  EXPECT_NE(IntTuple(6).hash(), IntTuple::tuple({6}).hash());
  EXPECT_NE(IntTuple::tuple({2, 3, 4}), nested());
}

TEST(IntTuple, CongruenceComparesStructureOnly) {
  EXPECT_TRUE(congruent(nested(), IntTuple::tuple({1, IntTuple::tuple({2, 6})})));
  EXPECT_FALSE(congruent(nested(), IntTuple::tuple({1, 2, 6})));
  EXPECT_FALSE(congruent(IntTuple(1), IntTuple::tuple({1})));
  EXPECT_TRUE(congruent(IntTuple::tuple({}), IntTuple::tuple({})));
}

TEST(IntTuple, UnflattenRebuildsTheStructure) {
  EXPECT_EQ(unflatten({7, 8, 9}, nested()), IntTuple::tuple({7, IntTuple::tuple({8, 9})}));
}

// `leaf` wrapped in `levels` one-element tuples.
IntTuple wrapped(int levels, int64_t leaf = 2) {
  IntTuple t(leaf);
  for (int i = 0; i < levels; ++i) t = IntTuple::tuple({t});
  return t;
}

TEST(core_layout__layouts_pair_congruent_shape_and_stride_trees_of_non_negative_integers,
     reject_nesting_deeper_than_64_levels__int_tuple) {
  const IntTuple deepest = wrapped(IntTuple::kMaxDepth);
  EXPECT_EQ(deepest.depth(), 64);
  EXPECT_THROW(IntTuple::tuple({deepest}), ValueError);
  EXPECT_THROW(IntTuple::tuple({1, IntTuple::tuple({}), deepest}), ValueError);
  EXPECT_EQ(IntTuple::tuple({1, wrapped(63)}).depth(), 64);
}

}  // namespace
}  // namespace strideweave
