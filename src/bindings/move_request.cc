#include "move_request.h"

#include <exception>
#include <memory>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "move.h"
#include "python_exception.h"
#include "self_arg.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/move/move_node.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "try_cast.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// AwaitMove[Tensor]: completes with the moved Tensor.
class AwaitMove final : public AwaitResult {
 public:
  explicit AwaitMove(std::shared_ptr<MoveRequest> request) : request_(std::move(request)) {}

  bool done() const override { return request_->completion().done(); }

 private:
  bool block_for(std::chrono::milliseconds timeout) const override {
    return request_->completion().wait_for(timeout);
  }
  std::exception_ptr failure() const override { return request_->completion().error(); }
  py::object result() const override {
    return py::cast(std::const_pointer_cast<Tensor>(request_->completion().wait()));
  }

  std::shared_ptr<MoveRequest> request_;
};

// The arguments of a move, checked (move_async's type checks and the source's
// rows of the validation table) and wrapped so that the request may drop its
// references on a pool worker, possibly the last ones to Python objects
// (subclass instances): they are released exit-safely.
struct MoveArguments {
  std::shared_ptr<const Tensor> tensor;
  std::shared_ptr<Carrier> destination;
};

MoveArguments move_arguments(py::handle tensor, py::handle destination) {
  std::optional<std::shared_ptr<Tensor>> source = try_cast<std::shared_ptr<Tensor>>(tensor);
  if (!source) {
    throw TypeError("move_async: tensor " + describe_object(tensor) +
                    " is not a Tensor (moves take one Tensor, not a sequence)");
  }
  validate_move_source(**source);
  std::optional<std::shared_ptr<Carrier>> target = try_cast<std::shared_ptr<Carrier>>(destination);
  if (!target) {
    throw TypeError("move_async: destination " + describe_object(destination) +
                    " is not a Carrier (moves take one carrier, not a sequence)");
  }
  return {released_with_gil<const Tensor>(std::move(*source), "releasing a moved Tensor"),
          released_with_gil(std::move(*target), "releasing a move destination")};
}

// The bytes up to which a move between two exact CPU carriers is initiated
// with the GIL held: its copy takes microseconds, about what handing the GIL
// to another thread and taking it back costs, and with several threads moving
// each release would make the GIL change hands (docs/threading.md, "What
// releases the GIL").
constexpr int64_t kGilKeptMoveBytes = int64_t{64} << 10;

// Whether `move` initiates with the GIL held: a copy of at most
// kGilKeptMoveBytes between two carriers of exact class CPU (no caller's
// hook, no I/O, no device). Initiating takes the carriers' locks, which no
// thread holds while it waits for the GIL (docs/threading.md), so the GIL is
// held at most while another thread finishes a copy with those carriers.
bool initiates_with_gil(const MoveArguments& move) {
  const Subtensor& source = move.tensor->subtensor("move");
  const ClassDescriptor& cpu = CPU::static_class();
  if (&source.carrier->carrier_class() != &cpu || &move.destination->carrier_class() != &cpu) {
    return false;
  }
  const std::optional<std::size_t> itemsize = move.tensor->dtype().itemsize();
  const int64_t cosize = source.layout.size() == 0 ? 0 : source.layout.cosize();
  return itemsize && cosize <= kGilKeptMoveBytes / static_cast<int64_t>(*itemsize);
}

std::shared_ptr<MoveRequest> initiate(MoveArguments move) {
  if (initiates_with_gil(move)) {
    return MoveRequest::initiate(std::move(move.tensor), std::move(move.destination));
  }
  return without_gil(
      [&] { return MoveRequest::initiate(std::move(move.tensor), std::move(move.destination)); });
}

std::unique_ptr<AwaitMove> move_async(Hint<"Tensor"> tensor, Hint<"Carrier"> destination) {
  return std::make_unique<AwaitMove>(initiate(move_arguments(tensor, destination)));
}

}  // namespace

void bind_move_request(py::module_& m) {
  py::class_<AwaitResult>(m, "AwaitResult", R"doc(
The read-only completion handle of a framework-created request.

``done`` says whether the request has reached its terminal outcome and
``wait()`` blocks for it, then returns the result or raises the failure: the
identical object on every call, from any thread. There is no coroutine
protocol (no ``__await__``). The library creates the handles: AwaitMove
(``move_async``), AwaitProjection and AwaitResidency (TiledEvictable).
)doc")
      .def_property_readonly("done", getter<&AwaitResult::done>(),
                             "bool: whether a terminal success or failure has been recorded; "
                             "never blocks.")
      .def(
          "wait", [](AwaitResult& r)->Hint<"Tensor | None"> { return r.wait(); }, self_not_none,
          R"doc(Blocks until the terminal outcome, then returns the result or raises the failure.

The wait releases the GIL and runs pending signal handlers about every 20 ms, so
Ctrl-C interrupts it with KeyboardInterrupt; the request goes on and a later
``wait()`` returns its outcome.

Returns
-------
Tensor or None
    The result, the identical object on every call: the moved Tensor for
    AwaitMove, the compact Tensor for AwaitProjection, None for AwaitResidency.

Raises
------
Exception
    The request's failure, the identical exception object on every call (for a
    move, the error its validation, transfer or commit raised).
KeyboardInterrupt
    When a signal handler raises while waiting (the request goes on).
)doc");
  py::class_<AwaitMove, AwaitResult>(m, "AwaitMove", R"doc(
The completion handle of one move, from ``move_async``; completes with the moved Tensor.

The move is submitted eagerly; ``wait()`` returns the result Tensor, bound to the
destination carrier, or raises the move's failure. The handle keeps the move's
Tensor and carriers alive until it completes.
)doc");

  m.def("move_async", &move_async, py::arg("tensor"), py::arg("destination"),
        R"doc(Validates and initiates one move of ``tensor``'s values into ``destination``.

Every check ``move`` makes happens before this returns; the copy itself runs
on a worker thread (or completes inline). ``wait()`` on the handle gives the
moved Tensor, over ``destination`` at offset 0 with ``tensor``'s Layout, or
raises the move's failure; the source carrier is released when the move
commits. The GIL is released while the move is initiated, except for a small
move between two CPU carriers.

Parameters
----------
tensor : Tensor
    The single-subtensor tensor whose values move.
destination : Carrier
    A live, publicly mutable carrier of ``tensor``'s dtype, other than its
    own; an empty one that can allocate is sized to the layout's cosize.

Returns
-------
AwaitMove
    The completion handle.

Raises
------
TypeError
    When ``tensor`` is not a Tensor, ``destination`` is not a Carrier, the
    dtypes differ, or the route pins another carrier class.
ValueError
    When ``destination`` is the tensor's own carrier, or too small and unable
    to allocate.
RuntimeError
    When either carrier is released, the source is owned by another carrier,
    or ``destination`` is not publicly mutable.
NotImplementedError
    For a multi-subtensor tensor.
)doc");
  m.def(
      "move", [](Hint<"Tensor"> tensor, Hint<"Carrier"> destination)->Hint<"Tensor"> {
        return AwaitMove(initiate(move_arguments(tensor, destination))).wait();
      },
      py::arg("tensor"), py::arg("destination"),
      R"doc(Moves ``tensor``'s values into ``destination`` and returns the moved Tensor.

``move_async(tensor, destination).wait()``: blocks (without the GIL) until the
move's terminal outcome. The result is backed by ``destination`` at offset 0
with ``tensor``'s Layout unchanged (a broadcast view moves only its cosize
slots); the source carrier is released when the move commits. Under grad mode
a move of a tensor that requires grad is recorded (``MoveNode``).

Parameters
----------
tensor : Tensor
    The single-subtensor tensor whose values move.
destination : Carrier
    A live, publicly mutable carrier of ``tensor``'s dtype, other than its
    own; an empty one that can allocate is sized to the layout's cosize.

Returns
-------
Tensor
    The moved tensor, over ``destination``.

Raises
------
TypeError
    When ``tensor`` is not a Tensor, ``destination`` is not a Carrier, the
    dtypes differ, or the route pins another carrier class.
ValueError
    When ``destination`` is the tensor's own carrier, or too small and unable
    to allocate.
RuntimeError
    When either carrier is released, the source is owned by another carrier,
    or ``destination`` is not publicly mutable.
NotImplementedError
    For a multi-subtensor tensor.
Exception
    A failure of the transfer itself (an exception raised by a carrier's or a
    move operation's hook included) is raised as the same object.
)doc");
}

void bind_move_node(py::module_& m) {
  py::class_<MoveNode, autograd::Node, py::smart_holder>(m, "MoveNode", R"doc(
The autograd node of a differentiable move: the ``autograd_ctx`` of its result.

It saved what its backward needs: ``source_class``, ``source_layout``,
``source_version`` and ``route`` (the captured reverse route's id, or its move
operation class's name). ``apply(cotangent)`` is that backward: the gradient of
the moved Tensor, in fresh storage of ``source_class`` (see docs/movement.md,
"Autograd").
)doc")
      .def_property_readonly(
          "source_class", [](const MoveNode& n) { return class_for(n.source_class()); },
          "type[Carrier]: the exact class of the moved Tensor's carrier; the gradient is "
          "stored in a new carrier of it.")
      .def_property_readonly("source_layout", getter<&MoveNode::source_layout>(),
                             "Layout: the moved Tensor's layout.")
      .def_property_readonly("source_version", getter<&MoveNode::source_version>(),
                             "int: the source carrier's version when the move was recorded.")
      .def_property_readonly("route", getter<&MoveNode::route>(),
                             "str: the reverse transfer the backward uses: a route's id, or a "
                             "move operation class's name.")
      .def(
          "apply", [](MoveNode& n, Hint<"Tensor"> cotangent)->Hint<"tuple[Tensor]"> {
            if (!py::isinstance<Tensor>(cotangent)) {
              throw TypeError("move: the cotangent " + describe_object(cotangent) +
                              " is not a Tensor");
            }
            auto given = cotangent.cast<std::shared_ptr<Tensor>>();
            auto gradients = without_gil([&] { return n.apply(given); });
            py::tuple out(gradients.size());
            for (std::size_t i = 0; i < gradients.size(); ++i) {
              out[i] = py::cast(std::const_pointer_cast<Tensor>(gradients[i]));
            }
            return out;
          },
          py::arg("cotangent"),
          R"doc(The move's backward: the gradient of its input given the cotangent of its result.

Runs without the GIL; the reverse transfer moves the cotangent into new
storage of ``source_class``.

Parameters
----------
cotangent : Tensor
    The cotangent of the move's result, of its shape and dtype.

Returns
-------
tuple[Tensor]
    One Tensor: the gradient of the moved Tensor, in a new carrier of
    ``source_class``.

Raises
------
TypeError
    When ``cotangent`` is not a Tensor, or its dtype is not the result's.
ValueError
    When its shape is not the result's.
NotImplementedError
    When no reverse transfer exists for the captured pair.
)doc");
}

}  // namespace strideweave::bindings
