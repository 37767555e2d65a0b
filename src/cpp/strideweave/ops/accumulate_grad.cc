#include "strideweave/ops/accumulate_grad.h"

#include <utility>

#include "strideweave/ops/math.h"

namespace strideweave::autograd {

AccumulateGrad::AccumulateGrad(std::shared_ptr<const Tensor> variable)
    : Node("accumulate_grad", {}), variable_(std::move(variable)) {}

std::vector<std::shared_ptr<const Tensor>> AccumulateGrad::apply(
    const std::shared_ptr<const Tensor>& cotangent) {
  std::shared_ptr<const Tensor> current = variable_->grad();
  while (true) {
    std::shared_ptr<const Tensor> next = current ? ops::add(current, cotangent) : cotangent;
    if (variable_->replace_grad(current, std::move(next))) return {};
    current = variable_->grad();
  }
}

namespace {

std::shared_ptr<Node> make_accumulator(std::shared_ptr<const Tensor> leaf) {
  return std::make_shared<AccumulateGrad>(std::move(leaf));
}

}  // namespace

std::shared_ptr<Node> gradient_edge(const Tensor& tensor) {
  return tensor.gradient_edge(&make_accumulator);
}

}  // namespace strideweave::autograd
