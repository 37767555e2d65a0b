// Autograd nodes (spec/autograd): the recorded graph. This folder holds what
// a Tensor needs of autograd (the node type its producing node has, and grad
// mode) and depends on nothing above util/; the backward traversal is
// backward/, above ops/.
//
// A Node is what a result's autograd_ctx holds: the operation that produced
// it, able to map a cotangent of that result to one gradient per input. Its
// next nodes are the gradient edges of those inputs: the producing node of a
// non-leaf input, the AccumulateGrad node of a leaf that requires grad, or
// nullptr for an input that needs no gradient. Nodes own their next nodes, so
// a result keeps its whole graph alive.
//
// Subclassing recipe (math operations in ops/, MoveNode in move/):
//   - construct the base with the operation's name and the next nodes, one
//     per input in input order;
//   - save what apply needs in members; save input tensors as SavedTensor
//     (ops/saved_tensor.h), which snapshots their version token;
//   - apply(cotangent) returns one gradient per input (nullptr allowed where
//     next_nodes()[i] is nullptr), each a detached tensor of that input's
//     shape under an injective layout, in storage nobody else holds;
//   - validate() throws what apply would throw because of the saved state
//     (a SavedTensor's unpack errors) and changes nothing;
//   - release_saved() drops the saved state (the graph is freed).
// The engine calls these with grad mode off, holds no lock of its own while
// calling them, and calls apply at most once per traversal; apply may block
// (a move node waits for its reverse move).
//
// Thread safety: name() and next_nodes() are immutable after construction;
// SavedTensor is internally synchronized, so a node whose state is only
// SavedTensors and constants may be validated, applied and released from
// several threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace strideweave {
class Tensor;
}  // namespace strideweave

namespace strideweave::autograd {

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node(std::string name, std::vector<std::shared_ptr<Node>> next_nodes);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // The operation's name ("mul", "move", "accumulate_grad").
  const std::string& name() const noexcept { return name_; }

  // One entry per input, in input order; nullptr where the input needs no
  // gradient.
  const std::vector<std::shared_ptr<Node>>& next_nodes() const noexcept { return next_; }

  // One gradient per input given the cotangent of the result (a tensor of the
  // result's shape under an injective layout). See the recipe above.
  virtual std::vector<std::shared_ptr<const Tensor>> apply(
      const std::shared_ptr<const Tensor>& cotangent) = 0;

  // Throws what apply would throw because of the saved state. The default
  // checks nothing.
  virtual void validate() const;

  // Drops the saved state. The default drops nothing.
  virtual void release_saved();

 private:
  std::string name_;
  std::vector<std::shared_ptr<Node>> next_;
};

}  // namespace strideweave::autograd
