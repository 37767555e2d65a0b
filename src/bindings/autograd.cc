// Python binding of spec/autograd. Grad mode and the engine live in the core
// (strideweave/autograd); backward runs without the GIL (a node may wait for a
// move).
#include "autograd.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "describe.h"
#include "gil.h"
#include "strideweave/autograd/grad_mode.h"
#include "strideweave/autograd/node.h"
#include "strideweave/backward/cotangent.h"
#include "strideweave/backward/engine.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

using autograd::AccumulateGrad;
using autograd::Node;

// `value` as a Tensor, TypeError naming `what` and the object otherwise.
std::shared_ptr<const Tensor> require_tensor(py::handle value, const std::string& what) {
  if (!py::isinstance<Tensor>(value)) {
    throw TypeError(what + " " + describe_object(value) + " is not a Tensor");
  }
  return value.cast<std::shared_ptr<Tensor>>();
}

void backward(const Tensor& t, Hint<"Tensor | None"> cotangent, bool retain_graph) {
  std::shared_ptr<const Tensor> given;
  if (!cotangent.is_none()) given = require_tensor(cotangent, "backward: cotangent");
  without_gil([&] { autograd::backward(t.shared_from_this(), std::move(given), retain_graph); });
}

void set_grad(const Tensor& t, Hint<"Tensor | None"> value) {
  if (value.is_none()) {
    t.set_grad(nullptr);
    return;
  }
  std::shared_ptr<const Tensor> grad = require_tensor(value, "grad");
  autograd::check_cotangent(*grad, t.shape(), t.dtype(), "grad");
  t.set_grad(std::move(grad));
}

void set_requires_grad(const Tensor& t, Hint<"bool"> value) {
  if (!PyBool_Check(value.ptr())) {
    throw TypeError("requires_grad must be a bool, not " + describe_object(value));
  }
  t.set_requires_grad(value.ptr() == Py_True);
}

py::tuple next_nodes(const Node& node) {
  const auto& next = node.next_nodes();
  py::tuple out(next.size());
  for (std::size_t i = 0; i < next.size(); ++i) {
    out[i] = next[i] ? py::cast(next[i]) : py::none();
  }
  return out;
}

}  // namespace

void bind_autograd(py::module_& m) {
  m.def("is_grad_enabled", &autograd::is_grad_enabled,
        R"doc(Whether operations on the calling thread record autograd nodes.

Grad mode is per thread and on by default; ``no_grad()`` and
``enable_grad()`` set it for a block.

Returns
-------
bool
    The calling thread's grad mode.
)doc");
  m.def("_set_grad_enabled", &autograd::set_grad_enabled, py::arg("enabled"),
        "Sets the calling thread's grad mode (no_grad and enable_grad use it).");

  py::class_<Node, py::smart_holder>(m, "Node", R"doc(
A recorded operation: the ``autograd_ctx`` of the tensors it produced (spec/autograd).

While grad mode is on, an operation with an input that requires grad records a
Node; ``next_nodes`` links it to the nodes of its inputs, and
``Tensor.backward()`` walks those links. Nodes are created by the library only.
)doc")
      .def_property_readonly(
          "name", [](const Node& n) { return n.name(); },
          "str: the recorded operation's name (e.g. ``'add'``, ``'move'``, "
          "``'accumulate_grad'``).")
      .def_property_readonly("next_nodes", &next_nodes,
                             "tuple[Node | None, ...]: per input, the node its gradient flows "
                             "to (an AccumulateGrad for a leaf that requires grad), or None for "
                             "an input that does not require grad.")
      .def(
          "__repr__",
          [](const Node& n) { return "<strideweave.autograd.Node '" + n.name() + "'>"; },
          "``<strideweave.autograd.Node 'NAME'>``.");
  py::class_<AccumulateGrad, Node, py::smart_holder>(m, "AccumulateGrad", R"doc(
The node through which a leaf that requires grad receives its gradient.

``backward()`` adds the gradient reaching it to ``variable.grad``.
)doc")
      .def_property_readonly(
          "variable",
          [](const AccumulateGrad& n) { return std::const_pointer_cast<Tensor>(n.variable()); },
          "Tensor: the leaf whose ``grad`` this node accumulates.");

  auto tensor = py::reinterpret_borrow<py::class_<Tensor, py::smart_holder>>(m.attr("Tensor"));
  tensor
      .def_property(
          "requires_grad", [](const Tensor& t) { return t.requires_grad(); }, &set_requires_grad,
          "bool: whether autograd records operations on this tensor and accumulates its gradient "
          "into ``grad`` (settable; a result of a recorded operation reads True). Setting it to "
          "anything but a bool raises TypeError.")
      .def_property_readonly(
          "is_leaf", [](const Tensor& t) { return t.is_leaf(); },
          "bool: whether the tensor was not produced by a recorded operation (its "
          "``autograd_ctx`` is None).")
      .def_property_readonly(
          "autograd_ctx", [](const Tensor& t) { return t.grad_fn(); },
          "Node or None: the recorded node that produced this tensor; None for a leaf.")
      .def_property(
          "grad", [](const Tensor& t) { return std::const_pointer_cast<Tensor>(t.grad()); },
          &set_grad,
          "Tensor or None: the gradient ``backward()`` accumulated into this leaf (settable to a "
          "Tensor of the same shape and dtype, or None). Setting another object raises "
          "TypeError; another shape or dtype ValueError or TypeError.")
      .def(
          "detach", [](const Tensor& t) { return t.detach(); },
          R"doc(A tensor over the same storage with no autograd state.

The result shares the carrier, layout and offset, does not require grad and
has no ``autograd_ctx``.

Returns
-------
Tensor
    The detached view.
)doc")
      .def("backward", &backward, py::arg("cotangent") = py::none(), py::kw_only(),
           py::arg("retain_graph") = false,
           R"doc(Accumulates the gradients of this tensor into the leaves that require grad.

Runs the recorded graph backward synchronously on the calling thread, without
the GIL, adding each leaf's gradient into its ``grad``. The graph's saved
state is freed unless ``retain_graph`` is True.

Parameters
----------
cotangent : Tensor, optional
    The gradient of this tensor; may be omitted for a one-element tensor
    (then 1).
retain_graph : bool, default False
    Keep the graph so that ``backward`` may run through it again.

Raises
------
TypeError
    When ``cotangent`` is not a Tensor or its dtype differs.
ValueError
    When ``cotangent``'s shape differs from the tensor's.
RuntimeError
    When the tensor does not require grad, it has more than one element and
    no ``cotangent`` was given, or a node's saved inputs were freed by an
    earlier ``backward`` without ``retain_graph``.
)doc");
}

}  // namespace strideweave::bindings
