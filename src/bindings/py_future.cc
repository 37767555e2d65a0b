#include "py_future.h"

#include <utility>

#include "describe.h"
#include "python_exception.h"
#include "strideweave/exec/thread_pool.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

bool is_future(py::handle object) {
  return py::isinstance(object, py::module_::import("concurrent.futures").attr("Future"));
}

namespace {

// The outcome of the completed `future`, as report_when_done hands it on.
std::exception_ptr outcome_of(const py::object& future, const std::string& what,
                              const std::string& note) {
  try {
    const py::object exception = future.attr("exception")();  // CancelledError when cancelled
    if (exception.is_none()) return nullptr;
    if (!PyExceptionInstance_Check(exception.ptr())) {
      throw TypeError(what + " returned " + describe_object(exception) +
                      " from exception(), neither None nor an exception");
    }
    if (!note.empty()) exception.attr("add_note")(note);
    raise_object(exception);
  } catch (const Error&) {
    return std::current_exception();
  } catch (py::error_already_set& e) {
    return std::make_exception_ptr(PythonException(e));
  }
}

}  // namespace

void report_when_done(const py::object& future, std::string what, std::string note,
                      std::function<void(std::exception_ptr)> done) {
  future.attr("add_done_callback")(
      py::cpp_function([what = std::move(what), note = std::move(note),
                        done = std::move(done)](const py::object& completed) {
        process_pool().submit([done, error = outcome_of(completed, what, note)] { done(error); });
      }));
}

}  // namespace strideweave::bindings
