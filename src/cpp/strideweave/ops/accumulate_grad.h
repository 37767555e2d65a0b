// AccumulateGrad (spec/autograd): the gradient edge of a leaf that requires
// grad. Part of autograd (namespace autograd); it lives with the operations
// because accumulating is an add (ops::add), and every operation that records
// a node asks for its inputs' edges (gradient_edge).
#pragma once

#include <memory>
#include <vector>

#include "strideweave/autograd/node.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::autograd {

// The gradient edge of a leaf that requires grad: accumulates into its .grad.
// One per leaf at a time (Tensor::gradient_edge reuses it while it lives).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<const Tensor> variable);

  // The leaf.
  const std::shared_ptr<const Tensor>& variable() const noexcept { return variable_; }

  // Accumulates the cotangent into the leaf's grad (Tensor::accumulate_grad)
  // and returns no gradient.
  std::vector<std::shared_ptr<const Tensor>> apply(
      const std::shared_ptr<const Tensor>& cotangent) override;

 private:
  std::shared_ptr<const Tensor> variable_;
};

// Where a gradient of `tensor` goes (Tensor::gradient_edge): its producing
// node; else, for a leaf that requires grad, its AccumulateGrad (created on
// first use, reused while it lives); else nullptr.
std::shared_ptr<Node> gradient_edge(const Tensor& tensor);

}  // namespace strideweave::autograd
