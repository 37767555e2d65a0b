// Autograd nodes (spec/autograd): the recorded graph.
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
//   - save what apply needs in members; save input tensors as SavedTensor,
//     which snapshots their version token;
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/tensor/tensor.h"

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

// An input tensor saved for backward, with the version token of its carrier
// at saving time.
class SavedTensor {
 public:
  // Saves `tensor` (single-subtensor) and its carrier's current version;
  // nullptr saves nothing (unpack then returns nullptr until released).
  explicit SavedTensor(std::shared_ptr<const Tensor> tensor);
  SavedTensor(const SavedTensor&) = delete;
  SavedTensor& operator=(const SavedTensor&) = delete;

  // The saved tensor. Throws RuntimeError naming `operation`:
  //   - after release(): the graph was freed (backward through it a second
  //     time needs retain_graph=True);
  //   - when the carrier was released since saving, naming input `input` and
  //     the carrier;
  //   - when the carrier's version changed since saving, naming input `input`,
  //     the carrier and both versions.
  std::shared_ptr<const Tensor> unpack(const std::string& operation, std::size_t input) const;

  // Drops the tensor; later unpacks fail as described.
  void release();

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Tensor> tensor_;
  uint64_t version_ = 0;
  bool released_ = false;
};

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

}  // namespace strideweave::autograd
