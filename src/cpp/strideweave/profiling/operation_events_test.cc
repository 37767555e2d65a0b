// Operation events of the math operations: ops::apply, their one choke point,
// opens an OperationScope (spec/operation-profiling).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strideweave/backward/engine.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/ops/math.h"
#include "strideweave/profiling/profiler.h"

namespace strideweave::profiling {
namespace {

std::vector<std::string> names(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.name);
  return out;
}

TEST(operation_profiling__each_operation_records_one_event, profile_an_operation) {
  const IntTuple shape = IntTuple::tuple({2, 3});
  const auto a = Tensor::make(std::make_shared<CPU>(DType::Float32(), 6), Layout(shape));
  const auto b = Tensor::make(std::make_shared<Generic>(DType::Float32(), 6), Layout(shape));
  auto session = Session::start();
  const int64_t before = now_ns();
  const auto sum = ops::add(a, b);
  const int64_t after = now_ns();
  session->stop();
  const std::vector<Event> events = session->events();
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, EventKind::kOperation);
  EXPECT_EQ(e.name, "add");
  EXPECT_EQ(e.carrier_classes, (std::vector<std::string>{"CPU", "Generic"}));
  EXPECT_EQ(e.shapes, (std::vector<IntTuple>{shape, shape}));
  EXPECT_EQ(e.dtype, "Float32");
  EXPECT_EQ(e.thread_id, thread_id());
  EXPECT_TRUE(e.request.empty());
  EXPECT_LE(before, e.start_ns);
  EXPECT_LE(e.start_ns, e.end_ns);
  EXPECT_LE(e.end_ns, after);
}

TEST(operation_profiling__each_operation_records_one_event, clause1__every_math_operation) {
  const auto a = Tensor::make(std::make_shared<CPU>(DType::Int32(), 4), Layout(IntTuple(4)));
  auto session = Session::start();
  const auto n = ops::neg(a);
  const auto m = ops::mul(n, Value(int64_t{2}));
  const auto s = ops::sub(m, a);
  const auto total = ops::sum(s, std::nullopt);
  const auto wide = ops::broadcast_to(a, IntTuple::tuple({4, 2}));
  session->stop();
  const std::vector<Event> events = session->events();
  EXPECT_EQ(names(events), (std::vector<std::string>{"neg", "mul", "sub", "sum", "broadcast_to"}));
  for (const Event& e : events) {
    EXPECT_EQ(e.dtype, "Int32");
    EXPECT_EQ(e.carrier_classes.front(), "CPU");
  }
  EXPECT_EQ(events[1].carrier_classes.size(), 1u);  // a constant is no input Tensor
  EXPECT_EQ(events[2].shapes, (std::vector<IntTuple>{IntTuple(4), IntTuple(4)}));
}

TEST(OperationEvents, backward_records_the_operations_it_runs) {
  const auto x = Tensor::make(std::make_shared<CPU>(DType::Float32(), 3), Layout(IntTuple(3)));
  x->set_requires_grad(true);
  const auto y = ops::sum(ops::mul(x, x), std::nullopt);
  auto session = Session::start();
  autograd::backward(y, nullptr, false);
  session->stop();
  // The engine computes gradients with operations (grad mode off): each is an event.
  const std::vector<Event> events = session->events();
  EXPECT_FALSE(events.empty());
  for (const Event& e : events) EXPECT_EQ(e.kind, EventKind::kOperation);
}

}  // namespace
}  // namespace strideweave::profiling
