#include "testing.h"

#include <string>
#include <thread>

#include "carrier.h"
#include "class_map.h"
#include "strideweave/move/move_operation.h"

namespace py = pybind11;

namespace strideweave::bindings {

void bind_testing(py::module_& m) {
  py::module_ testing =
      m.def_submodule("_testing", "Private hooks for StrideWeave's own tests; not a public API.");

  testing.def(
      "label_on_worker",
      [](const std::shared_ptr<Carrier>& carrier) {
        // Deliberately keeps the GIL while the worker runs: a worker that
        // needed it to name the class would deadlock here.
        std::string label;
        std::thread worker([&] { label = carrier->label(); });
        worker.join();
        return label;
      },
      py::arg("carrier"),
      "Names `carrier` (its label) on a new C++ thread while the caller keeps the GIL.");

  testing.def(
      "registered_descriptor", [](py::handle type) { return registered_descriptor(type); },
      py::arg("type"), py::return_value_policy::reference,
      "The descriptor registered for a class object, or None; creates nothing.");

  testing.def(
      "operation_class_of",
      [](const MoveOperation& operation) -> const ClassDescriptor& {
        return operation.operation_class();
      },
      py::arg("operation"), py::return_value_policy::reference,
      "The descriptor the core reports for a move operation instance (its C++ "
      "operation_class()).");
}

}  // namespace strideweave::bindings
