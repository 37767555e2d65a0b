// The machinery of carrier classes that Python can subclass: the trampoline
// every instance of a Python subclass is (PyCarrier, routing the overridable
// hooks new_like and dlpack_info to Python), the binding of a carrier class
// with its exact-class descriptor, and its constructor. carrier.cc binds the
// built-ins with it, python_storage.cc the base of carriers whose storage is
// Python's.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "class_map.h"
#include "describe.h"
#include "gil.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace strideweave::bindings {

// Converts what a Python dlpack_info() override returned (interop-movement:
// not convertible to a dict -> TypeError, missing key -> KeyError).
DLPackInfo info_from_python(const pybind11::object& value, const std::string& cls);

// The converted arguments of a carrier constructor: values (None: nullopt),
// the dtype (TypeError naming `carrier`) and the slot count n (None or an
// integer in int64).
std::optional<std::vector<Value>> optional_values(const pybind11::object& values);
DType require_dtype(const pybind11::handle& dtype, const char* carrier);
std::optional<int64_t> slot_count(pybind11::handle n, const char* carrier);

// The Python types of the carrier constructors' arguments, as the
// signatures name them (the constructors check them themselves).
using DTypeArg = Hint<"DType | numpy.dtype | torch.dtype | str">;
using SlotCountArg = Hint<"int | None">;
using PathArg = Hint<"str | bytes | os.PathLike | None">;
using ValuesArg = Hint<"collections.abc.Iterable[bool | int | float | tuple] | None">;

// The trampoline every instance of a Python subclass of a built-in carrier
// is, holding its exact class's descriptor from construction on.
template <class Base>
class PyCarrier : public Base, public pybind11::trampoline_self_life_support {
 public:
  template <class... Args>
  explicit PyCarrier(const ClassDescriptor& exact, Args&&... args)
      : Base(std::forward<Args>(args)...), exact_(exact) {}

  const ClassDescriptor& carrier_class() const override { return exact_; }

  // The new carrier may be dropped by core code on any thread (a move's
  // backward creates gradient storage through it): its last release takes the
  // GIL exit-safely.
  std::shared_ptr<Carrier> new_like() const override {
    const ExitSafeGil gil("new_like");
    gil.require();
    std::shared_ptr<Carrier> made;
    if (pybind11::function override =
            pybind11::get_override(static_cast<const Base*>(this), "new_like")) {
      const pybind11::object returned = override();
      if (!returned.is_none() && !pybind11::isinstance<Carrier>(returned)) {
        throw TypeError("new_like() of " + exact_.name() + " returned " +
                        describe_object(returned) + ", not a Carrier");
      }
      // None stays null: the library's caller refuses it (Carrier::checked_new_like).
      made = returned.template cast<std::shared_ptr<Carrier>>();
    } else {
      const pybind11::object self = pybind11::cast(static_cast<const Base*>(this));
      made = pybind11::type::handle_of(self)(self.attr("dtype"))
                 .template cast<std::shared_ptr<Carrier>>();
    }
    return released_with_gil(std::move(made), "releasing a carrier made by new_like");
  }

  // Every Python subclass may override dlpack_info: DLPack export runs it
  // without the carrier's mutex and checks what it did.
  bool dlpack_info_runs_caller_code() const override { return true; }

  DLPackInfo dlpack_info() const override {
    const ExitSafeGil gil("dlpack_info");
    gil.require();
    if (pybind11::function override =
            pybind11::get_override(static_cast<const Base*>(this), "dlpack_info")) {
      return info_from_python(override(), exact_.name());
    }
    return Base::dlpack_info();
  }

 private:
  const ClassDescriptor& exact_;
};

template <class C>
using CarrierPyClass = pybind11::class_<C, Carrier, PyCarrier<C>, pybind11::smart_holder>;

// Binds the built-in carrier class C, registered with its static descriptor.
template <class C>
CarrierPyClass<C> bind_carrier_class(pybind11::module_& m, const char* name, const char* doc) {
  CarrierPyClass<C> cls(m, name, doc);
  register_class(cls, C::static_class());
  return cls;
}

// Defines C's __init__(Args...). `convert` turns the Python arguments into a
// tuple of C's constructor arguments; construct_exact (class_map.h) makes a C
// or, for a Python subclass, a PyCarrier<C> holding its descriptor. The
// construction runs without the GIL when `releases_gil(arguments)` says it
// allocates, fills or opens storage; a carrier made empty keeps the GIL, as
// the accessors do (docs/threading.md, "What releases the GIL").
template <class C, class... Args, class Convert, class ReleasesGil, class... Extra>
void def_carrier_init(CarrierPyClass<C>& cls, Convert convert, ReleasesGil releases_gil,
                      const Extra&... extra) {
  cls.def(
      "__init__",
      [convert, releases_gil](pybind11::detail::value_and_holder& v_h, Args... args) {
        auto arguments = convert(std::move(args)...);
        const bool release = releases_gil(std::as_const(arguments));
        construct_exact<CarrierPyClass<C>, C, PyCarrier<C>>(
            v_h, std::move(arguments),
            [release](auto make) { return release ? without_gil(make) : make(); });
      },
      pybind11::detail::is_new_style_constructor(), extra...);
}

}  // namespace strideweave::bindings
