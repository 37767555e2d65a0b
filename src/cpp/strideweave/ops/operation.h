// Operations (spec/autograd, requirement group "Operations").
//
// Operation is the base of every operation, math operations and move
// operations alike: it has a name (messages, autograd nodes, profiles). Its
// forward and backward take the form of its kind:
//   - a TensorOperation computes its result from input tensors in one call
//     (forward) and builds the autograd node of that result (backward); every
//     TensorOperation runs through apply(), the one choke point where graph
//     recording happens;
//   - a MoveOperation's forward is its copy hook, run by a move request, and
//     its backward is the move node the request records.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strideweave/autograd/node.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::ops {

class Operation {
 public:
  Operation() = default;
  virtual ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // The operation's name: "add", "sum", or a move operation's class name.
  virtual std::string name() const = 0;
};

// The inputs of a TensorOperation, in order.
using Inputs = std::span<const std::shared_ptr<const Tensor>>;

class TensorOperation : public Operation {
 public:
  // The result: checks the inputs (errors name name()) and computes it, as a
  // fresh tensor or a new view. Records nothing.
  virtual std::shared_ptr<Tensor> forward(Inputs inputs) const = 0;

  // The node mapping the result's cotangent to one gradient per input. `next`
  // holds each input's gradient edge (nullptr where it needs none, at least
  // one not). Saves what the node needs, input tensors with their versions.
  // nullptr for an operation whose result has no gradient (a comparison):
  // apply then records nothing.
  virtual std::shared_ptr<autograd::Node> backward(
      Inputs inputs, std::vector<std::shared_ptr<autograd::Node>> next) const = 0;
};

// Runs `op`: forward, then, when grad mode is on and some input has a
// gradient edge, makes op.backward(...) the result's producing node (none
// when it returns nullptr).
std::shared_ptr<Tensor> apply(const TensorOperation& op, Inputs inputs);

}  // namespace strideweave::ops
