// The autograd engine (spec/autograd): synchronous backward on the calling
// thread.
#pragma once

#include <memory>

#include "strideweave/tensor/tensor.h"

namespace strideweave::autograd {

// Computes the gradients of `root` with respect to every leaf that requires
// grad and is reachable from it, and accumulates them into the leaves' grad.
//
// Checks, in order, each failure a RuntimeError / the cotangent contract's
// error naming "backward", all before any gradient is computed or stored:
//   - root must require grad;
//   - cotangent nullptr stands for ones, allowed only for a one-element root;
//     otherwise check_cotangent(*cotangent, root's shape and dtype);
//   - every reachable node's validate() (saved versions, released carriers,
//     a graph freed by an earlier backward).
// Then, with grad mode off on the calling thread and no engine lock held,
// applies each reachable node once, in topological order (a node runs after
// every node that sends it a cotangent), summing the cotangents a node
// receives; AccumulateGrad stores a leaf's first gradient as is and adds later
// ones into a new tensor. The root cotangent is first copied into fresh
// storage, so no gradient aliases the caller's tensor. Unless retain_graph,
// each node's saved state is released once it has run. An error from a node
// stops the traversal (gradients already accumulated stay).
void backward(const std::shared_ptr<const Tensor>& root, std::shared_ptr<const Tensor> cotangent,
              bool retain_graph);

}  // namespace strideweave::autograd
