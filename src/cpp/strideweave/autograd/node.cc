#include "strideweave/autograd/node.h"

#include <string>
#include <utility>

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

}  // namespace strideweave::autograd
