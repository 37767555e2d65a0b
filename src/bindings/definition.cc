#include "definition.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "python_exception.h"
#include "self_arg.h"
#include "strideweave/exec/thread_pool.h"
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

// The outcome of a concurrent.futures.Future a prepared transfer returned,
// reported to the move. Runs in the future's done callback, with the GIL, on
// whichever Python thread completed the future; the move's commit runs on a
// pool worker, so that thread never waits for the GIL again (it may be a
// daemon thread the exiting interpreter stops while it waits).
void report_future(const TransferDone& done, const py::object& future) {
  std::exception_ptr error;
  try {
    const py::object exception = future.attr("exception")();  // CancelledError when cancelled
    if (!exception.is_none()) {
      if (!PyExceptionInstance_Check(exception.ptr())) {
        throw TypeError("move: the Future of a prepared transfer returned " +
                        describe_object(exception) +
                        " from exception(), neither None nor an exception");
      }
      raise_object(exception);
    }
  } catch (const Error&) {
    error = std::current_exception();
  } catch (py::error_already_set& e) {
    error = std::make_exception_ptr(PythonException(e));
  }
  process_pool().submit([done, error = std::move(error)] { done(error); });
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
      const py::object future_type = py::module_::import("concurrent.futures").attr("Future");
      if (!py::isinstance(outcome, future_type)) {
        throw TypeError("move: the transfer prepared by " + provider_ + " returned " +
                        describe_object(outcome) +
                        ", neither None nor a concurrent.futures.Future");
      }
      outcome.attr("add_done_callback")(
          py::cpp_function([done](const py::object& future) { report_future(done, future); }));
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
  py::class_<MoveTransfer>(
      m, "TransferRequest",
      "One move as a route's provider sees it in prepare(request): validated, sized and "
      "pinned (the provider may read the source), not yet allocated or submitted.")
      .def_property_readonly("route_id", [](const MoveTransfer& r) { return r.route->route_id; })
      .def_property_readonly(
          "tensor", [](const MoveTransfer& r) { return std::const_pointer_cast<Tensor>(r.tensor); })
      .def_property_readonly("source", [](const MoveTransfer& r) { return r.source; })
      .def_property_readonly("destination", [](const MoveTransfer& r) { return r.destination; })
      .def_property_readonly("dtype", [](const MoveTransfer& r) { return r.tensor->dtype(); })
      .def_property_readonly(
          "layout", [](const MoveTransfer& r) { return r.tensor->subtensor("move").layout; })
      .def_property_readonly("offset", [](const MoveTransfer& r) { return r.offset; })
      .def_property_readonly("element_count", [](const MoveTransfer& r) { return r.element_count; })
      .def_property_readonly("source_alignment",
                             [](const MoveTransfer& r) { return r.source_alignment; })
      .def_property_readonly("source_block_size",
                             [](const MoveTransfer& r) { return r.source_block_size; })
      .def_property_readonly("destination_alignment",
                             [](const MoveTransfer& r) { return r.destination_alignment; })
      .def_property_readonly("destination_block_size",
                             [](const MoveTransfer& r) { return r.destination_block_size; });

  py::class_<TransferProvider, PyTransferProvider, py::smart_holder>(
      m, "TransferProvider",
      "Implements a route's transfer mechanics: prepare(request) refuses the request by "
      "raising, or returns a callable run once on a worker as prepared(output), which fills "
      "the destination and returns None or a concurrent.futures.Future.")
      .def(py::init<>())
      .def(
          "prepare",
          [](py::handle self, const MoveTransfer&) -> py::object {
            throw NotImplementedError(describe_object(self) +
                                      " does not implement prepare(request)");
          },
          py::arg("request"));

  py::class_<TransferRoute>(m, "TransferRoute",
                            "One outgoing route of a CarrierDefinition: an exact source class, "
                            "one exact destination class, a stable id and a provider.")
      .def(py::init(&make_route), py::arg("source_class"), py::arg("destination_class"),
           py::arg("route_id"), py::arg("provider"))
      .def_property_readonly("source_class",
                             [](const TransferRoute& r) { return class_for(*r.source); })
      .def_property_readonly("destination_class",
                             [](const TransferRoute& r) { return class_for(*r.destination); })
      .def_readonly("route_id", &TransferRoute::route_id)
      .def_property_readonly("provider", [](const TransferRoute& r) { return r.provider; })
      .def("__repr__", [](const TransferRoute& r) {
        return "TransferRoute(" + r.source->name() + ", " + r.destination->name() + ", '" +
               r.route_id + "')";
      });

  py::class_<CarrierDefinition, std::shared_ptr<CarrierDefinition>>(
      m, "CarrierDefinition",
      "The outgoing TransferRoutes of one exact carrier class and whether it permits the "
      "elementwise fallback; installed by define_carrier.")
      .def(py::init(&make_definition), py::arg("carrier_class"), py::kw_only(),
           py::arg("routes") = py::tuple(), py::arg("elementwise_fallback") = false)
      .def_property_readonly(
          "carrier_class", [](const CarrierDefinition& d) { return class_for(d.carrier_class()); })
      .def_property_readonly("routes",
                             [](const CarrierDefinition& d) {
                               py::tuple routes(d.routes().size());
                               for (std::size_t i = 0; i < d.routes().size(); ++i) {
                                 routes[i] = py::cast(d.routes()[i]);
                               }
                               return routes;
                             })
      .def_property_readonly("elementwise_fallback",
                             getter<&CarrierDefinition::elementwise_fallback>());

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
