// A differentiable move's reverse-route capture and MoveNode (spec/interop-
// movement, "Move participates in autograd across the carrier boundary"); the
// Python suite binds the scenarios with every carrier kind.
#include "strideweave/move/move_node.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/request.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/util/error.h"
#include "testing/classed_carrier.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::Classed;
using testing_util::message_of;

std::vector<Value> floats(std::initializer_list<double> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

// A CPU leaf requiring grad: the layout 3:2 at offset 1 reaches slots 1, 3
// and 5 of seven (values 0.5, 1.5, 2.5), holes between.
std::shared_ptr<const Tensor> leaf() {
  auto carrier =
      std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({0, 0.5, 1, 1.5, 2, 2.5, 3}));
  auto t = Tensor::make(carrier, Layout(IntTuple(3), IntTuple(2)), 1);
  t->set_requires_grad(true);
  return t;
}

std::shared_ptr<const Tensor> moved(const std::shared_ptr<const Tensor>& x) {
  return MoveRequest::initiate(x, std::make_shared<Generic>(DType::Float32()))->completion().wait();
}

// A provider the tests never reach: a move refused at initiation prepares
// nothing.
class Unreached : public TransferProvider {
 public:
  std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer&) override {
    ADD_FAILURE() << "prepare() ran";
    throw RuntimeError("unreached");
  }
};

std::shared_ptr<const Tensor> cpu_values(std::vector<Value> values, Layout layout) {
  auto carrier = std::make_shared<CPU>(DType::Float32(), std::nullopt, std::move(values));
  return Tensor::make(carrier, std::move(layout));
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     clause3__the_published_tensor_holds_one_move_node) {
  const auto x = leaf();
  const uint64_t version = x->subtensor("test").carrier->version();
  const auto y = moved(x);
  const auto node = std::dynamic_pointer_cast<MoveNode>(y->grad_fn());
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->name(), "move");
  EXPECT_TRUE(y->requires_grad());
  ASSERT_EQ(node->next_nodes().size(), 1u);
  EXPECT_EQ(node->next_nodes()[0], autograd::gradient_edge(*x));
  EXPECT_EQ(&node->source_class(), &CPU::static_class());
  EXPECT_EQ(node->source_layout(), x->subtensor("test").layout);
  EXPECT_EQ(node->source_version(), version);
  EXPECT_EQ(node->route(), "ElementwiseMoveOperation");
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     clause1__no_graph_no_capture) {
  const auto x = leaf();
  {
    const autograd::GradModeGuard no_grad(false);
    EXPECT_EQ(moved(x)->grad_fn(), nullptr);
  }
  const auto y = moved(leaf()->detach());
  EXPECT_EQ(y->grad_fn(), nullptr);
  EXPECT_FALSE(y->requires_grad());
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     reject_a_differentiable_one_way_route_early__cpp) {
  const auto source_class =
      ClassDescriptor::carrier("OneWay", &CPU::static_class(), ClassDescriptor::Definition::kOpen);
  const auto sink_class =
      ClassDescriptor::carrier("Sink", &CPU::static_class(), ClassDescriptor::Definition::kOpen);
  source_class->define(std::make_shared<const CarrierDefinition>(
      *source_class,
      std::vector<TransferRoute>{TransferRoute{source_class.get(), sink_class.get(), "out",
                                               std::make_shared<Unreached>()}},
      false));
  sink_class->define(
      std::make_shared<const CarrierDefinition>(*sink_class, std::vector<TransferRoute>{}, false));
  auto carrier =
      std::make_shared<Classed<CPU>>(*source_class, DType::Float32(), std::nullopt, floats({1, 2}));
  auto t = Tensor::make(carrier, Layout(2));
  t->set_requires_grad(true);
  auto destination = std::make_shared<Classed<CPU>>(*sink_class, DType::Float32());
  const std::string m =
      message_of<NotImplementedError>([&] { MoveRequest::initiate(t, destination); });
  EXPECT_NE(m.find("from Sink back to OneWay"), std::string::npos) << m;
  EXPECT_FALSE(carrier->pinned_by().has_value());
  EXPECT_FALSE(carrier->is_released());
  EXPECT_EQ(destination->slots(), 0);
  EXPECT_FALSE(destination->pinned_by().has_value());
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     move_a_gradient_back_to_the_source_carrier_class__cpp) {
  const auto x = leaf();
  const auto y = moved(x);
  autograd::backward(y, cpu_values(floats({10, 20, 30}), Layout(3)), false);
  const auto grad = x->grad();
  ASSERT_NE(grad, nullptr);
  const Subtensor& g = grad->subtensor("test");
  EXPECT_EQ(&g.carrier->carrier_class(), &CPU::static_class());
  EXPECT_EQ(g.layout, x->subtensor("test").layout);  // injective: the source layout
  EXPECT_EQ(g.offset, 0);
  EXPECT_EQ(grad->values(), floats({10, 20, 30}));
  EXPECT_EQ(grad->grad_fn(), nullptr);
  EXPECT_FALSE(grad->requires_grad());
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     clause8__a_non_injective_source_layout_gives_the_canonical_layout) {
  auto carrier = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1, 2}));
  auto x = Tensor::make(carrier, Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 0})));
  x->set_requires_grad(true);
  const auto y = moved(x);
  const auto gradients =
      y->grad_fn()->apply(cpu_values(floats({1, 2, 3, 4, 5, 6}), Layout(IntTuple::tuple({2, 3}))));
  ASSERT_EQ(gradients.size(), 1u);
  const Subtensor& g = gradients[0]->subtensor("test");
  EXPECT_EQ(g.layout, compact_col_major(IntTuple::tuple({2, 3})));
  EXPECT_EQ(gradients[0]->values(), floats({1, 2, 3, 4, 5, 6}));
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     reject_a_non_injective_cotangent__cpp) {
  const auto y = moved(leaf());
  auto one = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1}));
  const auto broadcast = Tensor::make(one, Layout(IntTuple(3), IntTuple(0)));
  const std::string m = message_of<ValueError>([&] { y->grad_fn()->apply(broadcast); });
  EXPECT_NE(m.find("injective gradient Layout"), std::string::npos) << m;
  EXPECT_EQ(one->version(), 0u);
}

TEST(interop_movement__move_participates_in_autograd_across_the_carrier_boundary,
     clause7__a_freed_graph_refuses_a_second_backward) {
  const auto x = leaf();
  const auto y = moved(x);
  autograd::backward(y, cpu_values(floats({1, 1, 1}), Layout(3)), false);
  const std::string m = message_of<RuntimeError>(
      [&] { autograd::backward(y, cpu_values(floats({1, 1, 1}), Layout(3)), false); });
  EXPECT_NE(m.find("retain_graph=True"), std::string::npos) << m;
  EXPECT_EQ(x->grad()->values(), floats({1, 1, 1}));
}

}  // namespace
}  // namespace strideweave
