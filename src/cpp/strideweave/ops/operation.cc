#include "strideweave/ops/operation.h"

#include <utility>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/profiling/profiler.h"

namespace strideweave::ops {

Operation::~Operation() = default;

std::shared_ptr<Tensor> apply(const TensorOperation& op, Inputs inputs) {
  const profiling::OperationScope profiled(op, inputs);
  std::shared_ptr<Tensor> result = op.forward(inputs);
  if (!autograd::is_grad_enabled()) return result;
  bool any = false;
  for (const auto& input : inputs) any = any || input->requires_grad();
  if (!any) return result;
  std::vector<std::shared_ptr<autograd::Node>> next;
  next.reserve(inputs.size());
  for (const auto& input : inputs) next.push_back(autograd::gradient_edge(*input));
  std::shared_ptr<autograd::Node> node = op.backward(inputs, std::move(next));
  if (node) result->set_grad_fn(std::move(node));
  return result;
}

}  // namespace strideweave::ops
