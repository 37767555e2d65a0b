// Python binding of spec/carrier-composition: Evictable.
//
// Evictable is registered with its C++ static descriptor like every built-in
// carrier class. It is final in Python: its storage, DLPack refusal and
// transitions are the core's, so no Python subclass can change them.
#include "compose.h"

#include <memory>
#include <string>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "self_arg.h"
#include "strideweave/compose/builtins.h"
#include "strideweave/compose/evictable.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// The carrier passed as the tier `argument`: TypeError naming it otherwise.
// The Evictable may drop its tiers on any thread, possibly the last
// references to Python subclass instances: they are released exit-safely.
std::shared_ptr<Carrier> tier(py::handle carrier, const char* argument) {
  if (!py::isinstance<Carrier>(carrier)) {
    throw TypeError(std::string("Evictable: the ") + argument + " tier " +
                    describe_object(carrier) + " is not a Carrier");
  }
  return released_with_gil(carrier.cast<std::shared_ptr<Carrier>>(), "releasing an Evictable tier");
}

}  // namespace

void bind_compose(py::module_& m) {
  py::class_<Evictable, Carrier, py::smart_holder> evictable(
      m, "Evictable",
      "One carrier over two tiers it owns: the fast tier holds the values while resident, the "
      "slow tier while evicted; evict() and promote() move them between the tiers.",
      py::is_final());
  register_class(evictable, Evictable::static_class());
  evictable
      .def(py::init([](py::handle fast, py::handle slow) {
             std::shared_ptr<Carrier> fast_tier = tier(fast, "fast");
             std::shared_ptr<Carrier> slow_tier = tier(slow, "slow");
             return without_gil([&] { return Evictable::make(fast_tier, slow_tier); });
           }),
           py::arg("fast"), py::arg("slow"))
      .def_property_readonly("residency",
                             [](const Evictable& e) { return residency_name(e.residency()); })
      .def_property_readonly("fast", getter<&Evictable::fast>())
      .def_property_readonly("slow", getter<&Evictable::slow>())
      .def("evict", &Evictable::evict, self_not_none, py::call_guard<py::gil_scoped_release>(),
           "Moves the values into the slow tier and frees the fast tier; nothing when evicted.")
      .def("promote", &Evictable::promote, self_not_none, py::call_guard<py::gil_scoped_release>(),
           "Moves the values back into the fast tier; nothing when resident.");
  require_registered(builtin_composite_carrier_classes());
}

}  // namespace strideweave::bindings
