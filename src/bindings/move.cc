// Python binding of spec/interop-movement's move-operation classes and legacy
// move registry: MoveOperation (subclassable), ElementwiseMoveOperation,
// CpuToFileBackedMoveOperation, FileBackedToCpuMoveOperation,
// CpuToBlockDeviceMoveOperation, BlockDeviceToCpuMoveOperation,
// CpuToMetalMoveOperation, MetalToCpuMoveOperation, MetalToMetalMoveOperation, and
// register_move_operation, unregister_move_operation, dispatch_move (the
// strideweave.carriers.move module adds registered_move_operation).
//
// Exact classes (class_map.h): the built-ins are registered with their static
// descriptors; a Python subclass gets its descriptor when its class
// statement completes (MoveOperation.__init_subclass__), pinned to the
// carrier classes its source_class and destination_class attributes name
// then (None: unpinned), and each instance is constructed as the trampoline
// PyMoveOperation holding that descriptor. The built-in classes carry their
// pins as those attributes too.
#include "move.h"

#include <memory>
#include <string>
#include <type_traits>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "python_exception.h"
#include "strideweave/move/builtins.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/metal_move_operation.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// What a Python subclass of a move operation is, whatever built-in it derives
// from: whether its class overrides _copy (set when the move machinery
// instantiates it, with the GIL).
class PythonOperation {
 public:
  bool python_copy = false;

  // The copy of the built-in class the Python class derives from.
  virtual void builtin_copy(const MoveTransfer& transfer) = 0;
  // False when that class is MoveOperation itself, which has no copy.
  virtual bool has_builtin_copy() const = 0;
  // Sets python_copy: whether the instance's Python class overrides _copy.
  // Requires the GIL.
  virtual void find_python_copy() = 0;

 protected:
  ~PythonOperation() = default;
};

// The trampoline every instance of a Python subclass of a built-in move
// operation is, holding its exact class's descriptor from construction on. A
// Python _copy runs on a worker of the process pool with the GIL taken
// through ExitSafeGil; an exception it raises travels as a PythonException.
template <class Base>
class PyMoveOperation : public Base,
                        public PythonOperation,
                        public py::trampoline_self_life_support {
 public:
  explicit PyMoveOperation(const ClassDescriptor& exact) : exact_(exact) {}

  const ClassDescriptor& operation_class() const override { return exact_; }

  bool runs_on_worker() const override { return python_copy || Base::runs_on_worker(); }
  // A Python _copy writes the destination it receives: nothing is staged.
  bool stages_destination() const override { return !python_copy && Base::stages_destination(); }
  // What a Python _copy writes is not known; the built-in copy's fill otherwise.
  PreparedTransfer::Fill destination_fill() const override {
    return python_copy ? PreparedTransfer::Fill::kUnknown : Base::destination_fill();
  }

  void builtin_copy(const MoveTransfer& transfer) override { Base::copy(transfer); }
  bool has_builtin_copy() const override { return !std::is_same_v<Base, MoveOperation>; }
  void find_python_copy() override {
    python_copy = static_cast<bool>(py::get_override(static_cast<const Base*>(this), "_copy"));
  }

  // A Python _copy is synchronous: it is the whole transfer, reported when it
  // returns (a built-in's start() may complete later, on the device).
  void start(const MoveTransfer& transfer, TransferDone done) override {
    if (!python_copy) {
      Base::start(transfer, std::move(done));
      return;
    }
    copy(transfer);
    done();
  }

  void copy(const MoveTransfer& transfer) override {
    if (!python_copy) {
      Base::copy(transfer);
      return;
    }
    const ExitSafeGil gil("MoveOperation._copy");
    gil.require();
    try {
      const py::function hook = py::get_override(static_cast<const Base*>(this), "_copy");
      const py::object returned =
          hook(std::const_pointer_cast<Tensor>(transfer.tensor), transfer.destination,
               std::const_pointer_cast<Tensor>(transfer.output), transfer.element_count);
      if (!returned.is_none()) {
        throw TypeError("move: " + exact_.name() + "._copy returned " + describe_object(returned) +
                        "; a copy hook fills the destination and returns None");
      }
    } catch (py::error_already_set& e) {
      throw PythonException(e);
    }
  }

 private:
  const ClassDescriptor& exact_;
};

template <class C>
using OperationPyClass = py::class_<C, MoveOperation, PyMoveOperation<C>, py::smart_holder>;

// The carrier class a move operation class's attribute `name`
// (source_class, destination_class) pins, or nullptr for None. Throws
// TypeError naming the class and the attribute for anything else.
const ClassDescriptor* pinned_class(py::handle type, const char* name) {
  const py::object value = py::getattr(type, name, py::none());
  if (value.is_none()) return nullptr;
  const ClassDescriptor* pinned = find_descriptor(value);
  if (pinned == nullptr || pinned->kind() != DescriptorKind::kCarrier) {
    throw TypeError("the move operation class " + type.attr("__qualname__").cast<std::string>() +
                    ": " + name + " " + describe_object(value) +
                    " is neither None nor a Carrier subclass");
  }
  return pinned;
}

// The maker of a Python subclass's descriptor (ClassDescriptor::
// make_operation): the Python class registered with `operation` called with no
// arguments (its exceptions as PythonException), behind released_with_gil so
// that its last release, on any thread, takes the GIL exit-safely. Takes the
// GIL itself (ExitSafeGil); a move calls it holding no core lock.
std::shared_ptr<MoveOperation> make_python_operation(const ClassDescriptor& operation) {
  const ExitSafeGil gil("instantiating a move operation");
  gil.require();
  try {
    const py::object cls = class_for(operation);
    const py::object instance = cls();
    auto made = instance.cast<std::shared_ptr<MoveOperation>>();
    if (auto* python = dynamic_cast<PythonOperation*>(made.get())) python->find_python_copy();
    // The request may drop it on a pool worker, possibly as the last reference.
    return released_with_gil(std::move(made), "releasing a move operation");
  } catch (py::error_already_set& e) {
    throw PythonException(e);
  }
}

// The descriptor of a Python subclass of a move operation class.
std::unique_ptr<ClassDescriptor> operation_subclass(py::handle type,
                                                    const ClassDescriptor& parent) {
  const ClassDescriptor* source = pinned_class(type, "source_class");
  const ClassDescriptor* destination = pinned_class(type, "destination_class");
  return ClassDescriptor::move_operation(type.attr("__qualname__").cast<std::string>(), &parent,
                                         source, destination, &make_python_operation);
}

// Sets the class attributes source_class and destination_class of the
// built-in class `cls` from its descriptor's pins.
void expose_pins(py::handle cls, const ClassDescriptor& descriptor) {
  const auto pin = [](const ClassDescriptor* pinned) {
    return pinned == nullptr ? py::object(py::none()) : class_for(*pinned);
  };
  cls.attr("source_class") = pin(descriptor.pinned_source());
  cls.attr("destination_class") = pin(descriptor.pinned_destination());
}

// The docstring paragraph on the class attributes expose_pins sets.
std::string pins_paragraph(const ClassDescriptor& descriptor) {
  const ClassDescriptor* source = descriptor.pinned_source();
  const ClassDescriptor* destination = descriptor.pinned_destination();
  if (source == nullptr && destination == nullptr) {
    return "\nIts class attributes ``source_class`` and ``destination_class`` are None: it "
           "pins\nneither carrier class.\n";
  }
  const auto name = [](const ClassDescriptor* pinned) {
    return pinned == nullptr ? std::string("None") : pinned->name();
  };
  return "\nIts class attributes ``source_class`` (" + name(source) +
         ") and ``destination_class`` (" + name(destination) +
         ")\nare the carrier classes it is pinned to: a move of another exact pair fails "
         "with\nTypeError before copying anything.\n";
}

// Binds the built-in move operation class C: registered with its static
// descriptor, its pins exposed (expose_pins), default-constructible
// (construct_exact: an instance of a Python subclass is a PyMoveOperation<C>
// holding the subclass's descriptor).
// Its docstring is `doc` followed by a paragraph naming the class attributes
// expose_pins sets, from the same descriptor.
template <class C, class... Bases>
py::class_<C, Bases..., PyMoveOperation<C>, py::smart_holder> bind_operation_class(
    py::module_& m, const char* name, const char* doc) {
  py::class_<C, Bases..., PyMoveOperation<C>, py::smart_holder> cls(
      m, name,
      (std::string(doc).find("``source_class``") == std::string::npos
           ? doc + pins_paragraph(C::static_class())
           : std::string(doc))
          .c_str());
  register_class(cls, C::static_class());
  expose_pins(cls, C::static_class());
  cls.def(
      "__init__",
      [](py::detail::value_and_holder& v_h) {
        using Cls = py::class_<C, Bases..., PyMoveOperation<C>, py::smart_holder>;
        construct_exact<Cls, C, PyMoveOperation<C>>(v_h, std::tuple<>(),
                                                    [](auto make) { return make(); });
      },
      py::detail::is_new_style_constructor(),
      "A new instance; the move machinery instantiates the registered class itself, once per "
      "move.");
  return cls;
}

// A class argument `role` of the registry call `call`: the descriptor of a
// carrier or move-operation class (the core checks its kind), else TypeError
// naming the argument as not `expected`.
const ClassDescriptor& class_argument(py::handle value, const char* call, const char* role,
                                      const char* expected) {
  if (const ClassDescriptor* found = find_descriptor(value)) return *found;
  throw TypeError(std::string(call) + ": " + role + " " + describe_object(value) + " is not a " +
                  expected + " subclass");
}

struct Pair {
  const ClassDescriptor& source;
  const ClassDescriptor& destination;
};

// The (source_class, destination_class) arguments of the registry call `call`.
Pair pair_arguments(const char* call, py::handle source_class, py::handle destination_class) {
  return Pair{class_argument(source_class, call, "source_class", "Carrier"),
              class_argument(destination_class, call, "destination_class", "Carrier")};
}

const ClassDescriptor& operation_argument(py::handle value) {
  return class_argument(value, "register_move_operation", "operation_class", "MoveOperation");
}

}  // namespace

void bind_move(py::module_& m) {
  register_family(DescriptorKind::kMoveOperation, &operation_subclass);
  auto root = bind_operation_class<MoveOperation>(m, "MoveOperation", R"doc(
The base of every move operation: performs one move's transfer.

A move dispatches on the exact (source carrier class, destination carrier class)
pair: the legacy registry (``strideweave.carriers.move``) maps pairs to
MoveOperation subclasses, and every pair without an entry uses
ElementwiseMoveOperation. A subclass performs the transfer in its
``_copy(tensor, destination, output, element_count)`` hook, which fills
``destination`` with ``tensor``'s values and returns None; it runs after every
validation, on a worker of the process pool with the GIL. A subclass may pin
the exact carrier classes it supports with the class attributes
``source_class`` and ``destination_class`` (None: any class); a move whose
carrier's exact class differs fails with TypeError before copying anything.
Any other value of those attributes fails the class statement with TypeError.
``operation_class``, on the class and on its instances, is the exact class's
ClassDescriptor; its ``pinned_source`` and ``pinned_destination`` are the pins.
)doc");
  install_init_subclass(root);
  root.def_property_readonly_static(
          "operation_class",
          [](py::handle cls) -> const ClassDescriptor& { return descriptor_for_type(cls); },
          py::return_value_policy::reference,
          "ClassDescriptor: the descriptor of the exact class, on the class and on its "
          "instances; its pinned_source and pinned_destination are the pins.")
      .def(
          "_copy",
          [](MoveOperation& self, Hint<"Tensor">, Hint<"Carrier">, Hint<"Tensor">, Hint<"int">) {
            // Reached by a built-in's own _copy, or by super()._copy(...) from a
            // Python hook: the C++ copy of the built-in class, for the transfer
            // this thread is running. MoveOperation itself has none.
            auto* python = dynamic_cast<PythonOperation*>(&self);
            const bool builtin = python != nullptr
                                     ? python->has_builtin_copy()
                                     : &self.operation_class() != &MoveOperation::static_class();
            if (!builtin) {
              throw NotImplementedError(self.operation_class().name() +
                                        "._copy is not implemented: a MoveOperation subclass "
                                        "performs its transfer by overriding _copy");
            }
            const MoveTransfer* transfer = current_move_transfer();
            if (transfer == nullptr) {
              throw RuntimeError(self.operation_class().name() +
                                 "._copy runs only inside a move, on the thread running it");
            }
            without_gil([&] {
              if (python != nullptr) {
                python->builtin_copy(*transfer);
              } else {
                self.copy(*transfer);
              }
            });
          },
          py::arg("tensor"), py::arg("destination"), py::arg("output"), py::arg("element_count"),
          R"doc(The copy hook: performs one move's transfer; a subclass overrides it.

The move calls it after every validation, on a worker of the process pool with
the GIL, while it pins both carriers; the public entry points of
``destination`` are admitted on that thread for the call. It releases the
source only after the hook returns. A built-in class's ``_copy`` (reached
through ``super()._copy(...)``) runs its C++ copy of the current move.

Parameters
----------
tensor : Tensor
    The Tensor being moved, as the caller supplied it.
destination : Carrier
    The receiving carrier, as the caller supplied it.
output : Tensor
    The result Tensor, already bound to ``destination``.
element_count : int
    The storage slots the transfer covers: the layout's cosize.

Returns
-------
None
    A hook returning anything else fails the move with TypeError.

Raises
------
NotImplementedError
    On MoveOperation itself, which has no copy.
RuntimeError
    When a built-in's ``_copy`` is called outside a move's transfer.
)doc");

  bind_operation_class<ElementwiseMoveOperation, MoveOperation>(m, "ElementwiseMoveOperation",
                                                                R"doc(
Moves element by element: the fallback of every pair without a registered operation.

Accepts any carrier pair (it pins neither class). It copies the slots the
layout reaches from one consistent snapshot of the source, in storage order, in
one hold of the destination's lock: host memory to host memory by the strided
copy kernel, otherwise one range transfer per run of consecutive slots; the
destination's holes keep their prior values.
)doc");
  bind_operation_class<CpuToFileBackedMoveOperation, MoveOperation>(
      m, "CpuToFileBackedMoveOperation", R"doc(
The built-in move operation of the exact pair (CPU, FileBacked).

Registered from start-up for that pair only (never for subclasses) and pinned to
it: copies the complete physical span ``[offset, offset + cosize)`` of the
source, holes included, with one positioned write from the CPU buffer, on a
worker.
)doc");
  bind_operation_class<FileBackedToCpuMoveOperation, MoveOperation>(
      m, "FileBackedToCpuMoveOperation", R"doc(
The built-in move operation of the exact pair (FileBacked, CPU).

Registered from start-up for that pair only (never for subclasses) and pinned to
it: copies the complete physical span ``[offset, offset + cosize)`` of the
source, holes included, with one positioned read into the CPU buffer, on a
worker.
)doc");
  bind_operation_class<CpuToBlockDeviceMoveOperation, MoveOperation>(
      m, "CpuToBlockDeviceMoveOperation", R"doc(
The built-in move operation of the exact pair (CPU, BlockDeviceCarrier).

Registered from start-up for that pair only and pinned to it: copies the
complete physical span ``[offset, offset + cosize)`` of the source, holes
included, in whole aligned blocks; the move commits after the data is durable.
)doc");
  bind_operation_class<BlockDeviceToCpuMoveOperation, MoveOperation>(
      m, "BlockDeviceToCpuMoveOperation", R"doc(
The built-in move operation of the exact pair (BlockDeviceCarrier, CPU).

Registered from start-up for that pair only and pinned to it: copies the
complete physical span ``[offset, offset + cosize)`` of the source, holes
included, in whole aligned blocks.
)doc");
  bind_operation_class<CpuToMetalMoveOperation, MoveOperation>(m, "CpuToMetalMoveOperation", R"doc(
The built-in move operation of the exact pair (CPU, Metal): one upload of the whole span.

Registered from start-up for that pair only (never for subclasses) and pinned to it.
)doc");
  bind_operation_class<MetalToCpuMoveOperation, MoveOperation>(m, "MetalToCpuMoveOperation", R"doc(
The built-in move operation of the exact pair (Metal, CPU): one download of the whole span.

Registered from start-up for that pair only (never for subclasses) and pinned to it.
)doc");
  bind_operation_class<MetalToMetalMoveOperation, MoveOperation>(m, "MetalToMetalMoveOperation",
                                                                 R"doc(
The built-in move operation of the exact pair (Metal, Metal): one device copy of the whole span.

Registered from start-up for that pair only (never for subclasses) and pinned to it.
)doc");
  require_registered(builtin_move_operation_classes());

  m.def(
      "register_move_operation",
      [](py::handle source_class, py::handle destination_class, py::handle operation_class) {
        const Pair pair =
            pair_arguments("register_move_operation", source_class, destination_class);
        LegacyMoveRegistry::global().add(pair.source, pair.destination,
                                         operation_argument(operation_class));
      },
      py::arg("source_class"), py::arg("destination_class"), py::arg("operation_class"),
      "Records operation_class for the exact (source_class, destination_class) pair.");
  m.def(
      "_check_move_registration",
      [](py::handle source_class, py::handle destination_class, py::handle operation_class) {
        const Pair pair =
            pair_arguments("register_move_operation", source_class, destination_class);
        LegacyMoveRegistry::global().check_add(pair.source, pair.destination,
                                               operation_argument(operation_class));
      },
      py::arg("source_class"), py::arg("destination_class"), py::arg("operation_class"),
      "Runs register_move_operation's checks without registering anything.");
  m.def(
      "unregister_move_operation",
      [](py::handle source_class, py::handle destination_class) {
        const Pair pair =
            pair_arguments("unregister_move_operation", source_class, destination_class);
        return class_for(LegacyMoveRegistry::global().remove(pair.source, pair.destination));
      },
      py::arg("source_class"), py::arg("destination_class"),
      "Removes and returns the operation class registered for the exact pair.");
  m.def(
      "dispatch_move",
      [](py::handle source_class, py::handle destination_class) {
        const Pair pair = pair_arguments("dispatch_move", source_class, destination_class);
        return class_for(LegacyMoveRegistry::global().dispatch(pair.source, pair.destination));
      },
      py::arg("source_class"), py::arg("destination_class"),
      "The operation class registered for the exact pair, or ElementwiseMoveOperation.");
}

}  // namespace strideweave::bindings
