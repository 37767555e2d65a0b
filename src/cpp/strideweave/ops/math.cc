#include "strideweave/ops/math.h"

#include <array>
#include <string>
#include <utility>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/autograd/node.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/layout/layout.h"
#include "strideweave/ops/kernels.h"
#include "strideweave/ops/operation.h"
#include "strideweave/ops/saved_tensor.h"
#include "strideweave/util/error.h"

namespace strideweave::ops {

namespace {

using autograd::Node;
using autograd::SavedTensor;
using Grads = std::vector<std::shared_ptr<const Tensor>>;
using Next = std::vector<std::shared_ptr<Node>>;

const char* arith_name(Arith arith) {
  switch (arith) {
    case Arith::kAdd:
      return "add";
    case Arith::kSub:
      return "sub";
    case Arith::kMul:
      return "mul";
    case Arith::kDiv:
      return "div";
  }
  return "";
}

// NotImplementedError for a multi-subtensor tensor, TypeError for a dtype
// other than Float32 and Int32.
void check_operand(const Tensor& t, const char* op) {
  t.subtensor(op);
  if (t.dtype() != DType::Float32() && t.dtype() != DType::Int32()) {
    throw TypeError(std::string(op) + ": dtype " + t.dtype().name() +
                    " is not supported (operations take Float32 and Int32)");
  }
}

// check_operand for the operand of an arithmetic operation: div takes
// Float32 only.
void check_arith_operand(const Tensor& t, Arith arith) {
  const char* op = arith_name(arith);
  if (arith != Arith::kDiv) {
    check_operand(t, op);
    return;
  }
  t.subtensor(op);
  if (t.dtype() != DType::Float32()) {
    throw TypeError(std::string(op) + ": dtype " + t.dtype().name() +
                    " is not supported (div takes Float32; there is no promotion to Float32)");
  }
}

// check_operand for the operand of a comparison: eq and ne take Bool too.
void check_compared_operand(const Tensor& t, Comparison comparison) {
  const char* op = comparison_name(comparison);
  t.subtensor(op);
  const bool equality = comparison == Comparison::kEq || comparison == Comparison::kNe;
  if (equality && t.dtype() == DType::Bool()) return;
  if (t.dtype() != DType::Float32() && t.dtype() != DType::Int32()) {
    throw TypeError(std::string(op) + ": dtype " + t.dtype().name() + " is not supported (" + op +
                    (equality ? " takes Float32, Int32 and Bool)" : " takes Float32 and Int32)"));
  }
}

// The checks of two operands after each one's: TypeError naming both dtypes
// when they differ, ValueError naming both shapes when the shapes differ.
void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw TypeError(std::string(op) + ": the operands' dtypes differ: " + a.dtype().name() +
                    " and " + b.dtype().name());
  }
  if (a.shape() != b.shape()) {
    throw ValueError(std::string(op) + ": the operands' shapes differ: " + a.shape().to_string() +
                     " and " + b.shape().to_string() + " (broadcast_to one of them explicitly)");
  }
}

// The top-level modes of `shape`, an integral shape being one mode.
std::vector<IntTuple> top_modes(const IntTuple& shape) {
  if (shape.is_leaf()) return {shape};
  return shape.elements();
}

// Per top-level mode of `target`: whether broadcasting `shape` to it widened
// or added that mode (Tensor::broadcast_to's rules, already checked).
std::vector<bool> broadcast_modes(const IntTuple& shape, const IntTuple& target) {
  const std::vector<IntTuple> in = top_modes(shape);
  const std::vector<IntTuple> out = top_modes(target);
  std::vector<bool> reduced(out.size());
  for (std::size_t m = 0; m < out.size(); ++m) reduced[m] = m >= in.size() || in[m] != out[m];
  return reduced;
}

// ---- binary ----------------------------------------------------------------

class BinaryNode final : public Node {
 public:
  BinaryNode(Arith arith, Inputs inputs, Next next)
      : Node(arith_name(arith), std::move(next)),
        arith_(arith),
        // mul's gradient of each input is the cotangent times the other input;
        // div's is g / b for a and -g * ((a / b) / b) for b.
        a_(saves_a(arith, next_nodes()) ? inputs[0] : nullptr),
        b_(saves_b(arith, next_nodes()) ? inputs[1] : nullptr) {}

  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    const bool want_a = next_nodes()[0] != nullptr;
    const bool want_b = next_nodes()[1] != nullptr;
    Grads grads(2);
    switch (arith_) {
      case Arith::kAdd:
        if (want_a) grads[0] = g;
        // Each gradient in storage of its own: a copy when both want one.
        if (want_b) grads[1] = want_a ? copy(*g) : g;
        break;
      case Arith::kSub:
        if (want_a) grads[0] = g;
        if (want_b) grads[1] = neg(g);
        break;
      case Arith::kMul:
        if (want_a) grads[0] = mul(g, b_.unpack(name(), 1));
        if (want_b) grads[1] = mul(g, a_.unpack(name(), 0));
        break;
      case Arith::kDiv: {
        const std::shared_ptr<const Tensor> b = b_.unpack(name(), 1);
        if (want_a) grads[0] = div(g, b);
        if (want_b) grads[1] = mul(neg(g), div(div(a_.unpack(name(), 0), b), b));
        break;
      }
    }
    return grads;
  }

  void validate() const override {
    a_.unpack(name(), 0);
    b_.unpack(name(), 1);
  }

  void release_saved() override {
    a_.release();
    b_.release();
  }

 private:
  // Whether the node needs input a (b) for the gradients `next` asks for.
  static bool saves_a(Arith arith, const Next& next) {
    return (arith == Arith::kMul || arith == Arith::kDiv) && next[1] != nullptr;
  }
  static bool saves_b(Arith arith, const Next& next) {
    return (arith == Arith::kMul && next[0] != nullptr) || arith == Arith::kDiv;
  }

  Arith arith_;
  SavedTensor a_;
  SavedTensor b_;
};

class BinaryOperation final : public TensorOperation {
 public:
  explicit BinaryOperation(Arith arith) : arith_(arith) {}

  std::string name() const override { return arith_name(arith_); }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const char* op = arith_name(arith_);
    const Tensor& a = *inputs[0];
    const Tensor& b = *inputs[1];
    a.subtensor(op);
    b.subtensor(op);
    check_arith_operand(a, arith_);
    check_arith_operand(b, arith_);
    check_pair(a, b, op);
    return binary_kernel(arith_, a, b, op);
  }

  std::shared_ptr<Node> backward(Inputs inputs, Next next) const override {
    return std::make_shared<BinaryNode>(arith_, inputs, std::move(next));
  }

 private:
  Arith arith_;
};

// ---- with a constant -------------------------------------------------------

class ScalarNode final : public Node {
 public:
  ScalarNode(Arith arith, Value c, bool constant_first, Inputs inputs, Next next)
      : Node(arith_name(arith), std::move(next)),
        arith_(arith),
        c_(std::move(c)),
        constant_first_(constant_first),
        // c / a's gradient is -g * ((c / a) / a).
        a_(arith == Arith::kDiv && constant_first ? inputs[0] : nullptr) {}

  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    switch (arith_) {
      case Arith::kAdd:
        return {g};
      case Arith::kSub:
        return {constant_first_ ? neg(g) : g};
      case Arith::kMul:
        return {mul(g, c_)};
      case Arith::kDiv: {
        if (!constant_first_) return {div(g, c_)};
        const std::shared_ptr<const Tensor> a = a_.unpack(name(), 0);
        return {mul(neg(g), div(div(a, c_, true), a))};
      }
    }
    return {};
  }

  // Only c / a saves its input: the other nodes stay usable after a release,
  // as they save nothing.
  void validate() const override {
    if (saves_input()) a_.unpack(name(), 0);
  }

  void release_saved() override { a_.release(); }

 private:
  bool saves_input() const { return arith_ == Arith::kDiv && constant_first_; }

  Arith arith_;
  Value c_;
  bool constant_first_;
  SavedTensor a_;
};

class ScalarOperation final : public TensorOperation {
 public:
  ScalarOperation(Arith arith, const Value& c, bool constant_first)
      : arith_(arith), c_(c), constant_first_(constant_first) {}

  std::string name() const override { return arith_name(arith_); }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const char* op = arith_name(arith_);
    const Tensor& a = *inputs[0];
    check_arith_operand(a, arith_);
    c_ = coerce(a.dtype(), c_);
    return scalar_kernel(arith_, a, c_, constant_first_, op);
  }

  std::shared_ptr<Node> backward(Inputs inputs, Next next) const override {
    return std::make_shared<ScalarNode>(arith_, c_, constant_first_, inputs, std::move(next));
  }

 private:
  Arith arith_;
  mutable Value c_;  // converted to the operand's dtype by forward
  bool constant_first_;
};

// ---- comparisons -----------------------------------------------------------

// Two tensors, or a tensor and a constant (`constant` set; constant_first
// for c `comparison` a). backward records nothing: comparisons have no
// gradient.
class CompareOperation final : public TensorOperation {
 public:
  explicit CompareOperation(Comparison comparison) : comparison_(comparison) {}
  CompareOperation(Comparison comparison, const Value& c, bool constant_first)
      : comparison_(comparison), constant_(c), constant_first_(constant_first) {}

  std::string name() const override { return comparison_name(comparison_); }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const char* op = comparison_name(comparison_);
    const Tensor& a = *inputs[0];
    if (constant_) {
      check_compared_operand(a, comparison_);
      return compare_scalar_kernel(comparison_, a, coerce(a.dtype(), *constant_), constant_first_,
                                   op);
    }
    const Tensor& b = *inputs[1];
    a.subtensor(op);
    b.subtensor(op);
    check_compared_operand(a, comparison_);
    check_compared_operand(b, comparison_);
    check_pair(a, b, op);
    return compare_kernel(comparison_, a, b, op);
  }

  std::shared_ptr<Node> backward(Inputs, Next) const override { return nullptr; }

 private:
  Comparison comparison_;
  std::optional<Value> constant_;
  bool constant_first_ = false;
};

// ---- neg -------------------------------------------------------------------

class NegNode final : public Node {
 public:
  explicit NegNode(Next next) : Node("neg", std::move(next)) {}
  Grads apply(const std::shared_ptr<const Tensor>& g) override { return {neg(g)}; }
};

class NegOperation final : public TensorOperation {
 public:
  std::string name() const override { return "neg"; }
  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    check_operand(*inputs[0], "neg");
    return neg_kernel(*inputs[0], "neg");
  }
  std::shared_ptr<Node> backward(Inputs, Next next) const override {
    return std::make_shared<NegNode>(std::move(next));
  }
};

// ---- sum -------------------------------------------------------------------

class SumNode final : public Node {
 public:
  SumNode(IntTuple shape, std::vector<bool> reduced, Next next)
      : Node("sum", std::move(next)), shape_(std::move(shape)), reduced_(std::move(reduced)) {}

  // The cotangent, broadcast back over the summed modes, in fresh storage.
  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    bool any = false;
    for (bool r : reduced_) any = any || r;
    if (!any) return {g};
    const Subtensor& s = g->subtensor("sum backward");
    const std::vector<IntTuple> modes = top_modes(shape_);
    std::vector<Layout> widened;
    std::size_t kept = 0;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      if (reduced_[m]) {
        const std::vector<int64_t> zeros(modes[m].leaf_count(), 0);
        widened.push_back(Layout(modes[m], unflatten(zeros, modes[m])));
      } else {
        widened.push_back(s.layout.mode(kept++));
      }
    }
    Layout layout = shape_.is_leaf() ? widened.front() : make_layout(widened);
    return {copy(*Tensor::make(s.carrier, std::move(layout), s.offset))};
  }

 private:
  IntTuple shape_;
  std::vector<bool> reduced_;
};

class SumOperation final : public TensorOperation {
 public:
  explicit SumOperation(const std::optional<std::vector<int64_t>>& modes) : modes_(modes) {}

  std::string name() const override { return "sum"; }

  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    const Tensor& a = *inputs[0];
    check_operand(a, "sum");
    const std::vector<IntTuple> modes = top_modes(a.shape());
    reduced_.assign(modes.size(), !modes_.has_value());
    if (modes_) {
      const auto rank = static_cast<int64_t>(modes.size());
      for (int64_t given : *modes_) {
        const int64_t m = given < 0 ? given + rank : given;
        if (m < 0 || m >= rank) {
          throw ValueError("sum: mode " + std::to_string(given) +
                           " is out of range for a tensor of rank " + std::to_string(rank));
        }
        if (reduced_[static_cast<std::size_t>(m)]) {
          throw ValueError("sum: mode " + std::to_string(given) + " is given twice");
        }
        reduced_[static_cast<std::size_t>(m)] = true;
      }
    }
    std::vector<IntTuple> kept;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      if (!reduced_[m]) kept.push_back(modes[m]);
    }
    const bool any = kept.size() != modes.size();
    const IntTuple shape = any ? IntTuple::tuple(std::move(kept)) : a.shape();
    if (!any) return copy_kernel(a, "sum");
    return sum_kernel(a, reduced_, shape, "sum");
  }

  std::shared_ptr<Node> backward(Inputs inputs, Next next) const override {
    return std::make_shared<SumNode>(inputs[0]->shape(), reduced_, std::move(next));
  }

 private:
  std::optional<std::vector<int64_t>> modes_;
  mutable std::vector<bool> reduced_;  // per top-level mode, set by forward
};

// ---- broadcast_to ----------------------------------------------------------

class BroadcastNode final : public Node {
 public:
  BroadcastNode(IntTuple shape, std::vector<bool> reduced, Next next)
      : Node("broadcast_to", std::move(next)),
        shape_(std::move(shape)),
        reduced_(std::move(reduced)) {}

  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    return {sum_kernel(*g, reduced_, shape_, "broadcast_to backward")};
  }

 private:
  IntTuple shape_;
  std::vector<bool> reduced_;
};

class BroadcastOperation final : public TensorOperation {
 public:
  explicit BroadcastOperation(const IntTuple& shape) : shape_(shape) {}
  std::string name() const override { return "broadcast_to"; }
  std::shared_ptr<Tensor> forward(Inputs inputs) const override {
    return inputs[0]->broadcast_to(shape_);
  }
  std::shared_ptr<Node> backward(Inputs inputs, Next next) const override {
    const IntTuple& shape = inputs[0]->shape();
    return std::make_shared<BroadcastNode>(shape, broadcast_modes(shape, shape_), std::move(next));
  }

 private:
  IntTuple shape_;
};

// ---- index -----------------------------------------------------------------

class IndexNode final : public Node {
 public:
  IndexNode(IntTuple shape, std::vector<IndexItem> items, Next next)
      : Node("index", std::move(next)), shape_(std::move(shape)), items_(std::move(items)) {}

  // Zeros of the input's shape with the cotangent written where the index
  // selected.
  Grads apply(const std::shared_ptr<const Tensor>& g) override {
    return {scatter_kernel(*g, shape_, items_, "index backward")};
  }

 private:
  IntTuple shape_;
  std::vector<IndexItem> items_;
};

class IndexOperation final : public TensorOperation {
 public:
  explicit IndexOperation(const std::vector<IndexItem>& items) : items_(items) {}
  std::string name() const override { return "index"; }
  std::shared_ptr<Tensor> forward(Inputs inputs) const override { return inputs[0]->index(items_); }
  std::shared_ptr<Node> backward(Inputs inputs, Next next) const override {
    return std::make_shared<IndexNode>(inputs[0]->shape(), items_, std::move(next));
  }

 private:
  std::vector<IndexItem> items_;
};

std::shared_ptr<Tensor> run(const TensorOperation& op, std::initializer_list<TensorRef> inputs) {
  return apply(op, Inputs(inputs.begin(), inputs.size()));
}

}  // namespace

std::shared_ptr<Tensor> add(const TensorRef& a, const TensorRef& b) {
  return run(BinaryOperation(Arith::kAdd), {a, b});
}
std::shared_ptr<Tensor> sub(const TensorRef& a, const TensorRef& b) {
  return run(BinaryOperation(Arith::kSub), {a, b});
}
std::shared_ptr<Tensor> mul(const TensorRef& a, const TensorRef& b) {
  return run(BinaryOperation(Arith::kMul), {a, b});
}
std::shared_ptr<Tensor> add(const TensorRef& a, const Value& c) {
  return run(ScalarOperation(Arith::kAdd, c, false), {a});
}
std::shared_ptr<Tensor> sub(const TensorRef& a, const Value& c, bool constant_first) {
  return run(ScalarOperation(Arith::kSub, c, constant_first), {a});
}
std::shared_ptr<Tensor> mul(const TensorRef& a, const Value& c) {
  return run(ScalarOperation(Arith::kMul, c, false), {a});
}
std::shared_ptr<Tensor> div(const TensorRef& a, const TensorRef& b) {
  return run(BinaryOperation(Arith::kDiv), {a, b});
}
std::shared_ptr<Tensor> div(const TensorRef& a, const Value& c, bool constant_first) {
  return run(ScalarOperation(Arith::kDiv, c, constant_first), {a});
}
std::shared_ptr<Tensor> neg(const TensorRef& a) { return run(NegOperation(), {a}); }

const char* comparison_name(Comparison comparison) noexcept {
  switch (comparison) {
    case Comparison::kEq:
      return "eq";
    case Comparison::kNe:
      return "ne";
    case Comparison::kLt:
      return "lt";
    case Comparison::kLe:
      return "le";
    case Comparison::kGt:
      return "gt";
    case Comparison::kGe:
      return "ge";
  }
  return "";
}

std::shared_ptr<Tensor> compare(Comparison comparison, const TensorRef& a, const TensorRef& b) {
  return run(CompareOperation(comparison), {a, b});
}
std::shared_ptr<Tensor> compare(Comparison comparison, const TensorRef& a, const Value& c,
                                bool constant_first) {
  return run(CompareOperation(comparison, c, constant_first), {a});
}

std::shared_ptr<Tensor> sum(const TensorRef& a, const std::optional<std::vector<int64_t>>& modes) {
  return run(SumOperation(modes), {a});
}

std::shared_ptr<Tensor> broadcast_to(const TensorRef& a, const IntTuple& shape) {
  return run(BroadcastOperation(shape), {a});
}

std::shared_ptr<Tensor> index(const TensorRef& a, const std::vector<IndexItem>& items) {
  return run(IndexOperation(items), {a});
}

std::shared_ptr<Tensor> relayout(const TensorRef& a, Layout layout, int64_t offset) {
  if (autograd::is_grad_enabled() && a->requires_grad()) {
    throw RuntimeError(
        "relayout is not differentiable and the tensor requires grad; relayout its detach() "
        "or run it under no_grad()");
  }
  return a->relayout(std::move(layout), offset);
}

std::shared_ptr<Tensor> copy(const Tensor& a) { return copy_kernel(a, "copy"); }

}  // namespace strideweave::ops
