#include "strideweave/tensor/layout_views.h"

#include <gtest/gtest.h>

#include <string>

#include "strideweave/autograd/node.h"
#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/ops/layout_views.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

IntTuple tup(std::initializer_list<IntTuple> e) { return IntTuple::tuple(e); }

TEST(core_tensor_representation__permute_reorders_the_top_level_modes, permute_hierarchical_modes) {
  const Layout layout(tup({2, tup({3, 4})}), tup({1, tup({2, 6})}));
  EXPECT_EQ(permute_layout(layout, {1, 0}, "permute"),
            Layout(tup({tup({3, 4}), 2}), tup({tup({2, 6}), 1})));
  EXPECT_EQ(permute_layout(layout, {-1, -2}, "permute"), permute_layout(layout, {1, 0}, "permute"));
  EXPECT_EQ(permute_layout(Layout(5, 3), {0}, "permute"), Layout(5, 3));
  EXPECT_EQ(permute_layout(Layout(IntTuple::tuple({})), {}, "permute"),
            Layout(IntTuple::tuple({})));
}

TEST(core_tensor_representation__permute_reorders_the_top_level_modes,
     refuse_modes_that_are_not_a_permutation) {
  const Layout layout(tup({2, 3}));
  EXPECT_NE(message_of<ValueError>([&] {
              permute_layout(layout, {0}, "permute");
            }).find("1 modes given for a tensor of rank 2"),
            std::string::npos);
  EXPECT_NE(message_of<IndexError>([&] {
              permute_layout(layout, {0, 2}, "permute");
            }).find("mode 2 is out of range for a tensor of rank 2"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              permute_layout(layout, {1, -1}, "permute");
            }).find("mode -1 is given twice"),
            std::string::npos);
  EXPECT_NE(message_of<IndexError>([&] {
              transposition(2, 0, -3, "transpose");
            }).find("transpose: mode -3"),
            std::string::npos);
}

TEST(core_tensor_representation__reshape_is_a_view_through_composition,
     reshape_a_strided_view_with_holes) {
  const Layout holes(tup({4, 3}), tup({1, 8}));
  EXPECT_EQ(reshaped_layout(holes, tup({2, 2, 3})), Layout(tup({2, 2, 3}), tup({1, 2, 8})));
  EXPECT_EQ(reshaped_layout(holes, tup({tup({2, 2}), 3})),
            Layout(tup({tup({2, 2}), 3}), tup({tup({1, 2}), 8})));
  EXPECT_EQ(reshaped_layout(Layout(6), tup({tup({2, 1}), 3})),
            Layout(tup({tup({2, 1}), 3}), tup({tup({1, 0}), 2})));
}

TEST(core_tensor_representation__reshape_is_a_view_through_composition,
     refuse_a_reshape_that_has_no_view) {
  std::string why;
  EXPECT_FALSE(reshaped_layout(Layout(tup({4, 3}), tup({1, 8})), 12, &why));
  EXPECT_NE(why.find("extent 12"), std::string::npos) << why;
  EXPECT_FALSE(reshaped_layout(Layout(tup({3, 2}), tup({2, 1})), tup({2, 3}), &why));
  EXPECT_NE(why.find("not admissible"), std::string::npos) << why;
}

TEST(core_tensor_representation__reshape_is_a_view_through_composition, refuse_a_size_mismatch) {
  const IntTuple from = tup({2, 3});
  EXPECT_EQ(resolve_reshape(tup({3, -1}), 6, from), tup({3, 2}));
  EXPECT_NE(message_of<ValueError>([&] {
              resolve_reshape(tup({4}), 6, from);
            }).find("6 elements (shape (2,3)) into shape (4) of 4 elements"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              resolve_reshape(tup({-1, -1}), 6, from);
            }).find("more than one -1"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              resolve_reshape(tup({-1, 0}), 0, from);
            }).find("cannot be inferred"),
            std::string::npos);
}

TEST(autograd__layout_views_are_recorded_views, reshape_a_cotangent_that_has_no_view) {
  std::vector<Value> values;
  for (int i = 0; i < 6; ++i) values.emplace_back(static_cast<double>(i));
  auto x = Tensor::make(std::make_shared<CPU>(DType::Float32(), std::nullopt, values),
                        Layout(tup({2, 3})));
  x->set_requires_grad(true);
  const auto y = ops::reverse_modes(ops::reshape(x, tup({3, 2})));
  EXPECT_EQ(y->grad_fn()->name(), "permute");
  EXPECT_EQ(y->subtensor("test").carrier, x->subtensor("test").carrier);
  std::vector<Value> g;
  for (int i = 0; i < 6; ++i) g.emplace_back(static_cast<double>(10 * i));
  const auto cotangent =
      Tensor::make(std::make_shared<CPU>(DType::Float32(), std::nullopt, g), Layout(tup({2, 3})));
  autograd::backward(y, cotangent, false);
  // y(i, j) is x's element of flat index j + 3i, so the cotangent's element
  // (i, j), 10 * (i + 2j), is x's gradient at that flat index.
  std::vector<double> grad;
  for (const Value& v : x->grad()->values()) grad.push_back(std::get<double>(v));
  EXPECT_EQ(grad, (std::vector<double>{0, 20, 40, 10, 30, 50}));
}

}  // namespace
}  // namespace strideweave
