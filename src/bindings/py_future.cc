#include "py_future.h"

#include <memory>
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

// The callback's state: reports once, on a pool worker, and reports a
// RuntimeError when the future is dropped without completing (its callbacks
// are then destroyed uncalled), so that no move waits for it forever.
class Report {
 public:
  Report(std::string what, std::string note, std::function<void(std::exception_ptr)> done)
      : what_(std::move(what)), note_(std::move(note)), done_(std::move(done)) {}
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  ~Report() {
    if (done_) {
      submit(std::make_exception_ptr(RuntimeError(what_ + " was dropped without completing")));
    }
  }

  void completed(const py::object& future) {
    if (done_) submit(outcome_of(future, what_, note_));
  }

 private:
  void submit(std::exception_ptr error) {
    process_pool().submit(
        [done = std::exchange(done_, nullptr), error = std::move(error)] { done(error); });
  }

  std::string what_;
  std::string note_;
  std::function<void(std::exception_ptr)> done_;
};

}  // namespace

void report_when_done(const py::object& future, std::string what, std::string note,
                      std::function<void(std::exception_ptr)> done) {
  auto report = std::make_shared<Report>(std::move(what), std::move(note), std::move(done));
  future.attr("add_done_callback")(
      py::cpp_function([report](const py::object& completed) { report->completed(completed); }));
}

}  // namespace strideweave::bindings
