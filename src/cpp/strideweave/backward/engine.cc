#include "strideweave/backward/engine.h"

#include <cstddef>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/autograd/node.h"
#include "strideweave/backward/cotangent.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/layout/layout.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/ops/kernels.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/util/error.h"

namespace strideweave::autograd {

namespace {

// What the traversal keeps per reachable node.
struct Pending {
  Node* node;
  std::size_t dependencies = 0;  // edges from reachable nodes not yet run
  std::shared_ptr<const Tensor> cotangent;
};

// Every node reachable from `root`, each once, with its dependency count.
// Iterative: a chain may be longer than the stack allows recursion.
std::vector<Pending> reachable(Node* root, std::unordered_map<Node*, std::size_t>& index) {
  std::vector<Pending> nodes;
  index.emplace(root, 0);
  nodes.push_back({root, 0, nullptr});
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const std::shared_ptr<Node>& next : node->next_nodes()) {
      if (!next) continue;
      const auto [it, inserted] = index.emplace(next.get(), nodes.size());
      if (inserted) {
        nodes.push_back({next.get(), 0, nullptr});
        stack.push_back(next.get());
      }
      ++nodes[it->second].dependencies;
    }
  }
  return nodes;
}

// The implied cotangent of a one-element root: a one of its dtype, on Metal
// when the root lives on Metal (its zeroed buffer plus one, a device command:
// gradients of Metal operations stay on Metal without synchronizing), else CPU.
std::shared_ptr<const Tensor> ones_like_root(const Tensor& root) {
  if (!root.is_multi_subtensor() &&
      &root.subtensor("backward").carrier->carrier_class() == &Metal::static_class()) {
    const std::shared_ptr<Tensor> zeros =
        Tensor::make(std::make_shared<Metal>(root.dtype(), shape_size(root.shape())),
                     compact_col_major(root.shape()), 0);
    const Value one = root.dtype() == DType::Float32() ? Value(1.0) : Value(int64_t{1});
    return ops::scalar_kernel(ops::Arith::kAdd, *zeros, one, false, "backward");
  }
  return full(root.shape(), 1.0, root.dtype());
}

}  // namespace

void backward(const std::shared_ptr<const Tensor>& root, std::shared_ptr<const Tensor> cotangent,
              bool retain_graph) {
  if (!root->requires_grad()) {
    throw RuntimeError(
        "backward: the tensor does not require grad and has no autograd_ctx (set "
        "requires_grad=True on a leaf it depends on)");
  }
  const IntTuple& shape = root->shape();
  if (!cotangent) {
    if (shape_size(shape) != 1) {
      throw RuntimeError("backward: a cotangent is required for a result of shape " +
                         shape.to_string() + " (" + std::to_string(shape_size(shape)) +
                         " elements); ones are implied only for a one-element result");
    }
  } else {
    check_cotangent(*cotangent, shape, root->dtype(), "backward");
  }
  const std::shared_ptr<Node> start = gradient_edge(*root);
  std::unordered_map<Node*, std::size_t> index;
  std::vector<Pending> nodes = reachable(start.get(), index);
  for (const Pending& p : nodes) p.node->validate();

  const GradModeGuard no_grad(false);
  nodes.front().cotangent = cotangent ? ops::copy(*cotangent) : ones_like_root(*root);
  std::vector<std::size_t> ready{0};
  while (!ready.empty()) {
    Pending& p = nodes[ready.back()];
    ready.pop_back();
    // A node every sender gave no gradient runs no apply; its next nodes still
    // count it as done.
    const std::vector<std::shared_ptr<const Tensor>> grads =
        p.cotangent ? p.node->apply(std::exchange(p.cotangent, nullptr))
                    : std::vector<std::shared_ptr<const Tensor>>{};
    const std::vector<std::shared_ptr<Node>>& next = p.node->next_nodes();
    for (std::size_t i = 0; i < next.size(); ++i) {
      if (!next[i]) continue;
      const std::size_t k = index.at(next[i].get());
      Pending& target = nodes[k];
      if (i < grads.size() && grads[i]) {
        target.cotangent = target.cotangent ? ops::add(target.cotangent, grads[i]) : grads[i];
      }
      if (--target.dependencies == 0) ready.push_back(k);
    }
    if (!retain_graph) p.node->release_saved();
  }
}

}  // namespace strideweave::autograd
