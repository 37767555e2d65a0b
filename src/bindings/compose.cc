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
#include "type_hint.h"

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
  py::class_<Evictable, Carrier, py::smart_holder> evictable(m, "Evictable", R"doc(
One carrier over two tiers it owns: fast holds the values while resident, slow while evicted.

``evict()`` copies the values into the slow tier and frees the fast one;
``promote()`` copies them back. Reads and writes see and change the values in
either residency, with one version increment per mutation on the Evictable
itself; transitions change neither its values nor its version. Its tiers are
owned by it, so their own public writes, allocation and release fail. It
refuses DLPack export whatever its tiers. Final: it cannot be subclassed.
)doc",
                                                             py::is_final());
  register_class(evictable, Evictable::static_class());
  evictable
      .def(py::init([](Hint<"Carrier"> fast, Hint<"Carrier"> slow) {
             std::shared_ptr<Carrier> fast_tier = tier(fast, "fast");
             std::shared_ptr<Carrier> slow_tier = tier(slow, "slow");
             return without_gil([&] { return Evictable::make(fast_tier, slow_tier); });
           }),
           py::arg("fast"), py::arg("slow"),
           R"doc(An Evictable over two tiers, resident, at version 0.

It takes ownership of both tiers; a failed construction leaves both unowned,
live and unchanged.

Parameters
----------
fast : Carrier
    The tier holding the values now; its slot count becomes the Evictable's.
slow : Carrier
    The tier holding the values while evicted: empty, or of fast's slot count.

Raises
------
TypeError
    When a tier is not a Carrier, the tiers' dtypes differ, or a movement edge
    between the tiers' classes is unavailable for the dtype (a
    definition-backed tier class, or an operation refusing the pair).
ValueError
    When ``fast`` and ``slow`` are the same carrier, or ``slow`` holds another
    slot count.
RuntimeError
    When a tier is released, owned, pinned or constructed immutable.
)doc")
      .def_property_readonly(
          "residency", [](const Evictable& e) { return residency_name(e.residency()); },
          "str: ``'resident'`` (values in the fast tier) or ``'evicted'`` (in the slow tier).")
      .def_property_readonly("fast", getter<&Evictable::fast>(),
                             "Carrier: the current fast tier (after ``evict()``, a new empty "
                             "carrier made by the old tier's ``new_like()``).")
      .def_property_readonly("slow", getter<&Evictable::slow>(), "Carrier: the slow tier.")
      .def("evict", &Evictable::evict, self_not_none, py::call_guard<GilReleased>(),
           R"doc(Moves the values into the slow tier and frees the fast tier.

Copies the slots into the slow tier (allocating it when empty), releases the fast
tier and puts an empty ``new_like()`` of it in its place. Runs synchronously
without the GIL, pinning the Evictable meanwhile; does nothing when already
evicted. A failure leaves residency, values, version and ownership unchanged.

Raises
------
RuntimeError
    When the Evictable is released or pinned by another operation.
)doc")
      .def("promote", &Evictable::promote, self_not_none, py::call_guard<GilReleased>(),
           R"doc(Moves the values back into the fast tier.

Copies the slow tier's slots into the fast tier (allocating it when empty); the
slow tier keeps its slots. Runs synchronously without the GIL, pinning the
Evictable meanwhile; does nothing when already resident. A failure leaves
residency, values, version and ownership unchanged.

Raises
------
RuntimeError
    When the Evictable is released or pinned by another operation.
)doc");
  require_registered(builtin_composite_carrier_classes());
}

}  // namespace strideweave::bindings
