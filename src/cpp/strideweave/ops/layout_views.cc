#include "strideweave/ops/layout_views.h"

#include <optional>
#include <string>
#include <utility>

#include "strideweave/autograd/node.h"
#include "strideweave/ops/math.h"
#include "strideweave/ops/operation.h"
#include "strideweave/tensor/layout_views.h"
#include "strideweave/util/error.h"

namespace strideweave::ops {

namespace {

using Grads = std::vector<std::shared_ptr<const Tensor>>;
using Next = std::vector<std::shared_ptr<autograd::Node>>;

// ---- permute (T, transpose, permute) ---------------------------------------

class PermuteNode final : public autograd::Node {
 public:
  PermuteNode(const char* name, std::vector<int64_t> inverse, Next next)
      : Node(name, std::move(next)), inverse_(std::move(inverse)) {}

  // The cotangent's modes put back in the input's order: a view of it.
  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    const Subtensor& s = g->subtensor("permute backward");
    return {g->relayout(permute_layout(s.layout, inverse_, "permute backward"), s.offset)};
  }

 private:
  std::vector<int64_t> inverse_;
};

class PermuteOperation final : public TensorOperation {
 public:
  PermuteOperation(const char* name, std::vector<int64_t> modes)
      : name_(name), modes_(std::move(modes)) {}

  std::string name() const override { return name_; }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const Subtensor& s = inputs[0]->subtensor(name_);
    return inputs[0]->relayout(permute_layout(s.layout, modes_, name_), s.offset);
  }

  // Runs after forward accepted the modes.
  std::shared_ptr<autograd::Node> backward(Inputs, Next next) const override {
    const auto rank = static_cast<int64_t>(modes_.size());
    std::vector<int64_t> inverse(modes_.size());
    for (std::size_t k = 0; k < modes_.size(); ++k) {
      const int64_t m = modes_[k] < 0 ? modes_[k] + rank : modes_[k];
      inverse[static_cast<std::size_t>(m)] = static_cast<int64_t>(k);
    }
    return std::make_shared<PermuteNode>(name_, std::move(inverse), std::move(next));
  }

 private:
  const char* name_;
  std::vector<int64_t> modes_;
};

// ---- reshape ---------------------------------------------------------------

class ReshapeNode final : public autograd::Node {
 public:
  ReshapeNode(IntTuple shape, Next next)
      : Node("reshape", std::move(next)), shape_(std::move(shape)) {}

  // The cotangent reshaped to the input's shape: a view of it where one
  // exists, else a view of its copy under the canonical layout (which always
  // has one).
  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    const Subtensor& s = g->subtensor("reshape backward");
    if (std::optional<Layout> view = reshaped_layout(s.layout, shape_)) {
      return {g->relayout(std::move(*view), s.offset)};
    }
    const std::shared_ptr<Tensor> compact = copy(*g);
    const Subtensor& c = compact->subtensor("reshape backward");
    return {compact->relayout(*reshaped_layout(c.layout, shape_), c.offset)};
  }

 private:
  IntTuple shape_;
};

class ReshapeOperation final : public TensorOperation {
 public:
  explicit ReshapeOperation(IntTuple shape) : shape_(std::move(shape)) {}

  std::string name() const override { return "reshape"; }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const Tensor& a = *inputs[0];
    const Subtensor& s = a.subtensor("reshape");
    const IntTuple shape = resolve_reshape(shape_, s.layout.size(), s.layout.shape());
    std::string why;
    std::optional<Layout> view = reshaped_layout(s.layout, shape, &why);
    if (!view) {
      throw ValueError("reshape: no view of layout " + s.layout.to_string() + " has shape " +
                       shape.to_string() + " in its flat (colexicographic) order: " + why +
                       ". Reshape a copy instead: sw.tensor(t) copies the values under the "
                       "canonical layout, which reshapes to any shape of its size, and relayout "
                       "of that copy places them under any other layout");
    }
    return a.relayout(std::move(*view), s.offset);
  }

  std::shared_ptr<autograd::Node> backward(Inputs inputs, Next next) const override {
    return std::make_shared<ReshapeNode>(inputs[0]->shape(), std::move(next));
  }

 private:
  IntTuple shape_;
};

std::shared_ptr<Tensor> run(const TensorOperation& op, const std::shared_ptr<const Tensor>& a) {
  const std::shared_ptr<const Tensor> inputs[] = {a};
  return apply(op, Inputs(inputs));
}

}  // namespace

std::shared_ptr<Tensor> reverse_modes(const std::shared_ptr<const Tensor>& a) {
  const std::size_t rank = a->subtensor("permute").layout.rank();
  return run(PermuteOperation("permute", reversal(rank)), a);
}

std::shared_ptr<Tensor> transpose(const std::shared_ptr<const Tensor>& a, int64_t i, int64_t j) {
  const std::size_t rank = a->subtensor("transpose").layout.rank();
  return run(PermuteOperation("transpose", transposition(rank, i, j, "transpose")), a);
}

std::shared_ptr<Tensor> permute(const std::shared_ptr<const Tensor>& a,
                                const std::vector<int64_t>& modes) {
  return run(PermuteOperation("permute", modes), a);
}

std::shared_ptr<Tensor> reshape(const std::shared_ptr<const Tensor>& a, const IntTuple& shape) {
  return run(ReshapeOperation(shape), a);
}

}  // namespace strideweave::ops
