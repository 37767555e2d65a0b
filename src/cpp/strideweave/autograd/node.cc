#include "strideweave/autograd/node.h"

#include <string>
#include <utility>

#include "strideweave/ops/math.h"
#include "strideweave/util/error.h"

namespace strideweave::autograd {

Node::Node(std::string name, std::vector<std::shared_ptr<Node>> next_nodes)
    : name_(std::move(name)), next_(std::move(next_nodes)) {}

// Destroys the chain of nodes only this one owns iteratively: a graph may be
// longer than the stack allows recursive destruction.
Node::~Node() {
  std::vector<std::shared_ptr<Node>> owned = std::move(next_);
  while (!owned.empty()) {
    std::shared_ptr<Node> node = std::move(owned.back());
    owned.pop_back();
    if (node && node.use_count() == 1) {
      for (std::shared_ptr<Node>& next : node->next_) owned.push_back(std::move(next));
      node->next_.clear();
    }
  }
}

void Node::validate() const {}

void Node::release_saved() {}

SavedTensor::SavedTensor(std::shared_ptr<const Tensor> tensor)
    : tensor_(std::move(tensor)),
      version_(tensor_ ? tensor_->subtensor("autograd").carrier->version() : 0) {}

std::shared_ptr<const Tensor> SavedTensor::unpack(const std::string& operation,
                                                  std::size_t input) const {
  std::shared_ptr<const Tensor> tensor;
  {
    std::lock_guard lock(mu_);
    if (released_) {
      throw RuntimeError(operation +
                         ": trying to backward through the graph a second time; its saved "
                         "tensors were freed by the first backward (use retain_graph=True to "
                         "backward through it again)");
    }
    tensor = tensor_;
  }
  if (!tensor) return tensor;
  const Carrier& carrier = *tensor->subtensor("autograd").carrier;
  if (carrier.is_released()) {
    throw RuntimeError(operation + ": saved input " + std::to_string(input) + " lives in " +
                       carrier.label() + ", which was released since it was saved");
  }
  const uint64_t now = carrier.version();
  if (now != version_) {
    throw RuntimeError(operation + ": saved input " + std::to_string(input) + " in " +
                       carrier.label() + " was modified after it was saved: version " +
                       std::to_string(version_) + " when saved, now " + std::to_string(now));
  }
  return tensor;
}

void SavedTensor::release() {
  std::shared_ptr<const Tensor> dropped;
  std::lock_guard lock(mu_);
  dropped.swap(tensor_);
  released_ = true;
}

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

}  // namespace strideweave::autograd
