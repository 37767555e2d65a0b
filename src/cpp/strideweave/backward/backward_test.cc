#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/autograd/node.h"
#include "strideweave/backward/cotangent.h"
#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave::autograd {
namespace {

using testing_util::message_of;

std::shared_ptr<Tensor> floats(std::vector<double> values) {
  std::vector<Value> v(values.begin(), values.end());
  return tensor_from_values(IntTuple(static_cast<int64_t>(v.size())), v, DType::Float32());
}

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out;
  for (const Value& v : t.values()) out.push_back(std::get<double>(v));
  return out;
}

std::shared_ptr<Tensor> leaf(std::vector<double> values) {
  auto t = floats(std::move(values));
  t->set_requires_grad(true);
  return t;
}

TEST(autograd__grad_mode_is_per_thread_and_on_by_default, requirement) {
  EXPECT_TRUE(is_grad_enabled());
  {
    const GradModeGuard off(false);
    EXPECT_FALSE(is_grad_enabled());
    bool worker = false;
    std::thread([&] { worker = is_grad_enabled(); }).join();
    EXPECT_TRUE(worker);
    {
      const GradModeGuard on(true);
      EXPECT_TRUE(is_grad_enabled());
    }
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
}

TEST(autograd__leaves_opt_in_to_gradients, requirement) {
  auto x = floats({1, 2});
  EXPECT_FALSE(x->requires_grad());
  EXPECT_TRUE(x->is_leaf());
  x->set_requires_grad(true);
  EXPECT_TRUE(x->requires_grad());
  auto ints = tensor_from_values(IntTuple(2), {int64_t{1}, int64_t{2}}, DType::Int32());
  EXPECT_NE(message_of<RuntimeError>([&] { ints->set_requires_grad(true); }).find("Int32"),
            std::string::npos);
  EXPECT_FALSE(ints->requires_grad());
  auto y = ops::mul(x, x);
  EXPECT_FALSE(y->is_leaf());
  EXPECT_NE(message_of<RuntimeError>([&] { y->set_requires_grad(false); }).find("leaf"),
            std::string::npos);
  auto d = y->detach();
  EXPECT_TRUE(d->is_leaf());
  EXPECT_FALSE(d->requires_grad());
  EXPECT_EQ(d->subtensor("t").carrier, y->subtensor("t").carrier);
}

TEST(autograd__operations_record_the_producing_node, requirement) {
  auto x = leaf({1, 2});
  auto c = floats({3, 4});
  auto y = ops::mul(x, c);
  ASSERT_TRUE(y->grad_fn());
  EXPECT_EQ(y->grad_fn()->name(), "mul");
  ASSERT_EQ(y->grad_fn()->next_nodes().size(), 2U);
  auto acc = std::dynamic_pointer_cast<AccumulateGrad>(y->grad_fn()->next_nodes()[0]);
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->variable(), x);
  EXPECT_EQ(y->grad_fn()->next_nodes()[1], nullptr);
  EXPECT_EQ(ops::add(x, c)->grad_fn()->next_nodes()[0], acc);
  EXPECT_EQ(ops::add(c, c)->grad_fn(), nullptr);
  const GradModeGuard off(false);
  EXPECT_EQ(ops::add(x, c)->grad_fn(), nullptr);
}

TEST(autograd__backward_accumulates_gradients_into_leaves, requirement) {
  // z = sum((x * y) + x - (-y)) ; dz/dx = y + 1, dz/dy = x + 1.
  auto x = leaf({1, 2, 3});
  auto y = leaf({4, 5, 6});
  auto z = ops::sum(ops::sub(ops::add(ops::mul(x, y), x), ops::neg(y)), std::nullopt);
  EXPECT_EQ(z->shape(), IntTuple::tuple({}));
  backward(z, nullptr, false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(doubles(*y->grad()), (std::vector<double>{2, 3, 4}));
  EXPECT_FALSE(x->grad()->requires_grad());
  EXPECT_EQ(x->grad()->grad_fn(), nullptr);
  EXPECT_EQ(z->grad(), nullptr);
  // A second graph accumulates into a new tensor.
  const std::shared_ptr<const Tensor> first = x->grad();
  backward(ops::sum(ops::mul(x, 2.0), std::nullopt), nullptr, false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(doubles(*first), (std::vector<double>{5, 6, 7}));
}

TEST(autograd__backward_accumulates_gradients_into_leaves,
     requirement__long_chain_without_recursion) {
  auto x = leaf({1});
  std::shared_ptr<const Tensor> y = x;
  for (int i = 0; i < 100000; ++i) y = ops::mul(ops::add(y, 1.0), 1.0);
  backward(y, nullptr, true);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{1}));
  y = nullptr;  // destroying the graph is iterative too
}

TEST(autograd__a_cotangent_must_stand_for_the_result, requirement) {
  auto x = leaf({1, 2});
  auto y = ops::mul(x, 3.0);
  EXPECT_NE(
      message_of<RuntimeError>([&] { backward(y, nullptr, false); }).find("shape 2 (2 elements)"),
      std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] { backward(y, floats({1, 2, 3}), false); }).find("3"),
            std::string::npos);
  auto broadcast = floats({1})->broadcast_to(IntTuple(2));
  EXPECT_NE(message_of<ValueError>([&] { backward(y, broadcast, false); }).find("injective"),
            std::string::npos);
  auto released = floats({1, 2});
  released->subtensor("t").carrier->release();
  EXPECT_NE(message_of<RuntimeError>([&] {
              check_cotangent(*released, IntTuple(2), DType::Float32(), "backward");
            }).find("released"),
            std::string::npos);
  EXPECT_EQ(x->grad(), nullptr);
  backward(y, floats({1, 10}), false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{3, 30}));
}

TEST(autograd__saved_inputs_are_checked_against_their_versions, requirement) {
  auto x = leaf({1, 2});
  auto c = floats({3, 4});
  auto y = ops::sum(ops::mul(x, c), std::nullopt);
  c->subtensor("t").carrier->write(0, 9.0);
  const std::string message = message_of<RuntimeError>([&] { backward(y, nullptr, false); });
  EXPECT_NE(message.find("mul: saved input 1"), std::string::npos) << message;
  EXPECT_NE(message.find("version 0 when saved, now 1"), std::string::npos) << message;
  EXPECT_EQ(x->grad(), nullptr);
}

TEST(autograd__graphs_are_freed_after_backward_unless_retained, requirement) {
  auto x = leaf({1, 2});
  auto y = ops::sum(ops::mul(x, x), std::nullopt);
  backward(y, nullptr, true);
  backward(y, nullptr, false);
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{4, 8}));
  const std::string message = message_of<RuntimeError>([&] { backward(y, nullptr, false); });
  EXPECT_NE(message.find("mul"), std::string::npos) << message;
  EXPECT_NE(message.find("retain_graph"), std::string::npos) << message;
  EXPECT_EQ(doubles(*x->grad()), (std::vector<double>{4, 8}));
}

}  // namespace
}  // namespace strideweave::autograd
