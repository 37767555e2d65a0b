#include "definition.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "py_future.h"
#include "python_exception.h"
#include "self_arg.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// "the provider of route 'id' (Tiled -> Sink)": how messages name a route's provider.
std::string provider_of(const TransferRoute& route) {
  return "the provider of route '" + route.route_id + "' (" + route.source->name() + " -> " +
         route.destination->name() + ")";
}

// What a Python provider's prepare() returned: a callable run once on a pool
// worker with the GIL (taken through ExitSafeGil) as prepared(output), output
// the result Tensor bound to the destination. It fills the destination and
// returns None (done), or returns a concurrent.futures.Future whose outcome
// is the transfer's, reported from whichever thread completes it.
class PythonPreparedTransfer final : public PreparedTransfer {
 public:
  PythonPreparedTransfer(py::object prepared, std::string provider)
      : prepared_(released_with_gil(std::make_shared<py::object>(std::move(prepared)),
                                    "releasing a prepared transfer")),
        provider_(std::move(provider)) {}

  void start(const MoveTransfer& transfer, TransferDone done) override {
    const ExitSafeGil gil("a prepared transfer");
    gil.require();
    try {
      const py::object outcome = (*prepared_)(std::const_pointer_cast<Tensor>(transfer.output));
      if (outcome.is_none()) {
        without_gil([&] { done(); });
        return;
      }
      if (!is_future(outcome)) {
        throw TypeError("move: the transfer prepared by " + provider_ + " returned " +
                        describe_object(outcome) +
                        ", neither None nor a concurrent.futures.Future");
      }
      report_when_done(outcome, "move: the Future of the transfer prepared by " + provider_, "",
                       done);
    } catch (py::error_already_set& e) {
      throw PythonException(e);
    }
  }

 private:
  std::shared_ptr<py::object> prepared_;
  std::string provider_;
};

// The trampoline of Python subclasses of TransferProvider: prepare(request)
// runs with the GIL (ExitSafeGil) on the thread initiating the move, which
// holds no core lock then.
class PyTransferProvider : public TransferProvider, public py::trampoline_self_life_support {
 public:
  std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer& request) override {
    const ExitSafeGil gil("TransferProvider.prepare");
    gil.require();
    const std::string provider = provider_of(*request.route);
    try {
      const py::function hook =
          py::get_override(static_cast<const TransferProvider*>(this), "prepare");
      if (!hook) {
        throw NotImplementedError(provider + ": " + describe_object(py::cast(this)) +
                                  " does not implement prepare(request)");
      }
      py::object prepared = hook(request);
      if (!PyCallable_Check(prepared.ptr())) {
        throw TypeError("move: " + provider + " returned " + describe_object(prepared) +
                        " from prepare(request), which is not callable");
      }
      return std::make_shared<PythonPreparedTransfer>(std::move(prepared), provider);
    } catch (py::error_already_set& e) {
      throw PythonException(e);
    }
  }
};

// A class argument `role` of `call`: a Carrier subclass, else TypeError.
const ClassDescriptor& carrier_class_argument(py::handle value, const char* call,
                                              const char* role) {
  const ClassDescriptor* found = find_descriptor(value);
  if (found == nullptr || found->kind() != DescriptorKind::kCarrier) {
    throw TypeError(std::string(call) + ": " + role + " " + describe_object(value) +
                    " is not a Carrier subclass");
  }
  return *found;
}

TransferRoute make_route(py::handle source_class, py::handle destination_class, py::handle route_id,
                         py::handle provider) {
  TransferRoute route{
      &carrier_class_argument(source_class, "TransferRoute", "source_class"),
      &carrier_class_argument(destination_class, "TransferRoute", "destination_class"),
      {},
      {}};
  if (!py::isinstance<py::str>(route_id)) {
    throw TypeError("TransferRoute: route_id " + describe_object(route_id) + " is not a str");
  }
  route.route_id = route_id.cast<std::string>();
  if (!py::isinstance<TransferProvider>(provider)) {
    throw TypeError("TransferRoute: provider " + describe_object(provider) +
                    " is not a TransferProvider");
  }
  route.provider = provider.cast<std::shared_ptr<TransferProvider>>();
  validate_route(route);
  return route;
}

std::shared_ptr<CarrierDefinition> make_definition(py::handle carrier_class, py::handle routes,
                                                   py::handle elementwise_fallback) {
  const ClassDescriptor& cls =
      carrier_class_argument(carrier_class, "CarrierDefinition", "carrier_class");
  if (!PyBool_Check(elementwise_fallback.ptr())) {
    throw TypeError("CarrierDefinition: elementwise_fallback " +
                    describe_object(elementwise_fallback) + " is not a bool");
  }
  if (!py::isinstance<py::iterable>(routes) || py::isinstance<py::str>(routes)) {
    throw TypeError("CarrierDefinition: routes " + describe_object(routes) +
                    " is not an iterable of TransferRoute");
  }
  std::vector<TransferRoute> declared;
  for (const py::handle route : routes) {
    if (!py::isinstance<TransferRoute>(route)) {
      throw TypeError("CarrierDefinition: routes[" + std::to_string(declared.size()) + "] " +
                      describe_object(route) + " is not a TransferRoute");
    }
    declared.push_back(route.cast<TransferRoute>());
  }
  return std::make_shared<CarrierDefinition>(cls, std::move(declared),
                                             elementwise_fallback.cast<bool>());
}

}  // namespace

void bind_definitions(py::module_& m) {
  py::class_<MoveTransfer>(m, "TransferRequest", R"doc(
One move as a route's provider sees it in ``prepare(request)``.

The request is validated, sized and pinned (the provider may read the source)
but not yet allocated or submitted. Its properties describe the move's source
Tensor, carriers and the carriers' I/O alignment. It is created by the library
only.
)doc")
      .def_property_readonly(
          "route_id", [](const MoveTransfer& r) { return r.route->route_id; },
          "str: the id of the route the move resolved to.")
      .def_property_readonly(
          "tensor", [](const MoveTransfer& r) { return std::const_pointer_cast<Tensor>(r.tensor); },
          "Tensor: the Tensor being moved, as the caller supplied it.")
      .def_property_readonly(
          "source", [](const MoveTransfer& r) { return r.source; },
          "Carrier: the carrier holding the source Tensor's values.")
      .def_property_readonly(
          "destination", [](const MoveTransfer& r) { return r.destination; },
          "Carrier: the receiving carrier, as the caller supplied it.")
      .def_property_readonly(
          "dtype", [](const MoveTransfer& r) { return r.tensor->dtype(); },
          "DType: the dtype of the moved values.")
      .def_property_readonly(
          "layout", [](const MoveTransfer& r) { return r.tensor->subtensor("move").layout; },
          "Layout: the source Tensor's layout.")
      .def_property_readonly(
          "offset", [](const MoveTransfer& r) { return r.offset; },
          "int: the source Tensor's offset into its carrier.")
      .def_property_readonly(
          "element_count", [](const MoveTransfer& r) { return r.element_count; },
          "int: the storage slots the transfer covers: the layout's cosize.")
      .def_property_readonly(
          "source_alignment", [](const MoveTransfer& r) { return r.source_alignment; },
          "int: the source's I/O memory alignment in bytes (a BlockDeviceCarrier's "
          "``alignment``, 1 for every other carrier).")
      .def_property_readonly(
          "source_block_size", [](const MoveTransfer& r) { return r.source_block_size; },
          "int: the source's I/O block size in bytes (a BlockDeviceCarrier's ``block_size``, 1 "
          "for every other carrier).")
      .def_property_readonly(
          "destination_alignment", [](const MoveTransfer& r) { return r.destination_alignment; },
          "int: the destination's I/O memory alignment in bytes (a BlockDeviceCarrier's "
          "``alignment``, 1 for every other carrier).")
      .def_property_readonly(
          "destination_block_size", [](const MoveTransfer& r) { return r.destination_block_size; },
          "int: the destination's I/O block size in bytes (a BlockDeviceCarrier's "
          "``block_size``, 1 for every other carrier).");

  py::class_<TransferProvider, PyTransferProvider, py::smart_holder>(m, "TransferProvider", R"doc(
Implements a route's transfer mechanics; subclass it and override ``prepare``.

The library calls ``prepare(request)`` with the GIL on the thread initiating the
move. It refuses the request by raising, or returns a callable that the library
runs once on a worker of the process pool, with the GIL, as
``prepared(output)`` (``output`` is the result Tensor bound to the
destination): it fills the destination and returns None, or returns a
``concurrent.futures.Future`` whose outcome is the transfer's. A provider
implements only the mechanics: validation, source release, autograd,
completion and publication stay the library's.
)doc")
      .def(py::init<>(), "A provider; a subclass overrides ``prepare``.")
      .def(
          "prepare",
          [](Hint<"TransferProvider"> self, const MoveTransfer&)
              ->Hint<"collections.abc.Callable[[Tensor], "
                     "concurrent.futures.Future | None]"> {
                throw NotImplementedError(describe_object(self) +
                                          " does not implement prepare(request)");
              },
          py::arg("request"), R"doc(Prepares one move's transfer, or refuses it by raising.

Parameters
----------
request : TransferRequest
    The validated move.

Returns
-------
collections.abc.Callable
    Called once on a worker as ``prepared(output)``; returns None when it has
    filled the destination, or a ``concurrent.futures.Future`` completing with
    the transfer's outcome.

Raises
------
NotImplementedError
    By default: a subclass overrides this method. An override raises whatever
    refuses the request; the move fails with that exception.
)doc");

  py::class_<TransferRoute>(m, "TransferRoute", R"doc(
One outgoing route of a CarrierDefinition.

It names an exact source class (the class the definition belongs to), one exact
destination class, a stable id and the TransferProvider performing the
transfer. Routes match by class identity: a route never applies to a subclass
of either class.
)doc")
      .def(py::init([](Hint<"type[Carrier]"> source_class, Hint<"type[Carrier]"> destination_class,
                       Hint<"str"> route_id, Hint<"TransferProvider"> provider) {
             return make_route(source_class, destination_class, route_id, provider);
           }),
           py::arg("source_class"), py::arg("destination_class"), py::arg("route_id"),
           py::arg("provider"), R"doc(A route from ``source_class`` to ``destination_class``.

Parameters
----------
source_class : type[Carrier]
    The exact source carrier class.
destination_class : type[Carrier]
    The exact destination carrier class.
route_id : str
    A stable, non-empty identifier (reported by ``TransferRequest.route_id`` and
    ``MoveNode.route``).
provider : TransferProvider
    The provider performing the transfer.

Raises
------
TypeError
    When a class is not a Carrier subclass, ``route_id`` is not a str or
    ``provider`` is not a TransferProvider.
ValueError
    When ``route_id`` is empty.
)doc")
      .def_property_readonly(
          "source_class", [](const TransferRoute& r) { return class_for(*r.source); },
          "type[Carrier]: the exact source carrier class.")
      .def_property_readonly(
          "destination_class", [](const TransferRoute& r) { return class_for(*r.destination); },
          "type[Carrier]: the exact destination carrier class.")
      .def_readonly("route_id", &TransferRoute::route_id, "str: the route's stable identifier.")
      .def_property_readonly(
          "provider", [](const TransferRoute& r) { return r.provider; },
          "TransferProvider: the provider performing the route's transfers.")
      .def(
          "__repr__",
          [](const TransferRoute& r) {
            return "TransferRoute(" + r.source->name() + ", " + r.destination->name() + ", '" +
                   r.route_id + "')";
          },
          "``TransferRoute(SOURCE, DESTINATION, 'ROUTE_ID')``.");

  py::class_<CarrierDefinition, std::shared_ptr<CarrierDefinition>>(m, "CarrierDefinition", R"doc(
The outgoing routes of one exact carrier class, and whether it permits the elementwise fallback.

``define_carrier(definition)`` installs it, sealing the class definition-backed.
A move from a definition-backed class resolves only through its declared route
to the exact destination class; without one it takes the elementwise fallback
only when both exact classes' definitions permit it, and otherwise fails with
NotImplementedError naming both classes.
)doc")
      .def(py::init([](Hint<"type[Carrier]"> carrier_class,
                       Hint<"collections.abc.Iterable[TransferRoute]"> routes,
                       Hint<"bool"> elementwise_fallback) {
             return make_definition(carrier_class, routes, elementwise_fallback);
           }),
           py::arg("carrier_class"), py::kw_only(), py::arg("routes") = py::tuple(),
           py::arg("elementwise_fallback") = false,
           R"doc(A definition of ``carrier_class``'s outgoing routes.

Parameters
----------
carrier_class : type[Carrier]
    The exact carrier class the definition belongs to.
routes : iterable of TransferRoute, optional
    Its outgoing routes: each starts at ``carrier_class``, with distinct ids
    and distinct destination classes.
elementwise_fallback : bool, optional
    Whether a pair without a route may take the elementwise fallback.

Raises
------
TypeError
    When ``carrier_class`` is not a Carrier subclass, ``routes`` is not an
    iterable of TransferRoute, or ``elementwise_fallback`` is not a bool.
ValueError
    When a route starts at another class, or two routes share an id or a
    destination class.
)doc")
      .def_property_readonly(
          "carrier_class", [](const CarrierDefinition& d) { return class_for(d.carrier_class()); },
          "type[Carrier]: the exact carrier class the definition belongs to.")
      .def_property_readonly(
          "routes",
          [](const CarrierDefinition& d) {
            py::tuple routes(d.routes().size());
            for (std::size_t i = 0; i < d.routes().size(); ++i) {
              routes[i] = py::cast(d.routes()[i]);
            }
            return routes;
          },
          "tuple[TransferRoute, ...]: the outgoing routes, in declaration order.")
      .def_property_readonly("elementwise_fallback",
                             getter<&CarrierDefinition::elementwise_fallback>(),
                             "bool: whether a pair without a route may take the elementwise "
                             "fallback.");

  m.def(
      "define_carrier",
      [](Hint<"CarrierDefinition"> definition) {
        if (!py::isinstance<CarrierDefinition>(definition)) {
          throw TypeError("define_carrier: definition " + describe_object(definition) +
                          " is not a CarrierDefinition");
        }
        auto defined = definition.cast<std::shared_ptr<CarrierDefinition>>();
        defined->carrier_class().define(std::move(defined));
      },
      py::arg("definition"), R"doc(Installs ``definition`` for its exact carrier class.

The class becomes definition-backed and sealed: dispatch for that exact class
(not its subclasses) uses the definition's routes and, when it allows one,
the elementwise fallback.

Parameters
----------
definition : CarrierDefinition
    The carrier class's definition.

Raises
------
TypeError
    When ``definition`` is not a CarrierDefinition, or its class is a move
    operation class.
RuntimeError
    When the class is already sealed: it has a definition, or it already
    took part in dispatch or a registry call.
)doc");
}

}  // namespace strideweave::bindings
