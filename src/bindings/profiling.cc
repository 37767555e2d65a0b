#include "profiling.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "int_tuple_convert.h"
#include "self_arg.h"
#include "strideweave/profiling/chrome_trace.h"
#include "strideweave/profiling/event.h"
#include "strideweave/profiling/key_averages.h"
#include "strideweave/profiling/profiler.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

using profiling::Event;
using profiling::KeyAverage;
using profiling::Session;

py::object none_if_empty(const std::string& text) {
  return text.empty() ? py::none() : py::object(py::str(text));
}

py::tuple shapes_of(const Event& event) {
  py::tuple shapes(event.shapes.size());
  for (std::size_t i = 0; i < event.shapes.size(); ++i) {
    shapes[i] = from_int_tuple(event.shapes[i]);
  }
  return shapes;
}

std::string event_repr(const Event& e) {
  return "ProfileEvent(" + std::string(profiling::kind_name(e.kind)) + " '" + e.name +
         "', correlation_id=" + std::to_string(e.correlation_id) +
         ", duration_ns=" + std::to_string(e.end_ns - e.start_ns) + ")";
}

}  // namespace

void bind_profiling(py::module_& m) {
  py::class_<Event>(m, "ProfileEvent", R"doc(
One profiling event: an operation, or a move's submission or completion.

A profile records one ``'operation'`` event per operation, and two events per
move, sharing one correlation id: its ``'submission'`` (on the thread calling
``move_async``, until the transfer is submitted) and its ``'completion'``
(from the submission through the terminal commit, success or failure). Fields
are read-only; times are the host monotonic clock in nanoseconds.
)doc")
      .def_property_readonly(
          "name", [](const Event& e) { return e.name; },
          "str: the operation's name; for a move, the move operation class or route id that "
          "resolved it.")
      .def_property_readonly(
          "kind", [](const Event& e) { return profiling::kind_name(e.kind); },
          "str: ``'operation'``, ``'submission'`` or ``'completion'``.")
      .def_property_readonly(
          "category", [](const Event& e) { return profiling::category_name(e.kind); },
          "str: ``'operation'``, or ``'move'`` for both events of a move.")
      .def_property_readonly(
          "request", [](const Event& e) { return none_if_empty(e.request); },
          "str | None: a move's request name (``'move #N'``); None for an operation.")
      .def_property_readonly(
          "carrier_classes", [](const Event& e) { return py::tuple(py::cast(e.carrier_classes)); },
          "tuple[str, ...]: the exact class names of the input carriers (a move: source, "
          "destination).")
      .def_property_readonly("shapes", &shapes_of,
                             "tuple: the shapes of the input Tensors, in order (a move: the "
                             "moved Tensor's).")
      .def_property_readonly(
          "dtype", [](const Event& e) { return none_if_empty(e.dtype); },
          "str | None: the first input Tensor's dtype name; None without a Tensor input.")
      .def_property_readonly(
          "start_ns", [](const Event& e) { return e.start_ns; },
          "int: the start time, host monotonic clock, in nanoseconds.")
      .def_property_readonly(
          "end_ns", [](const Event& e) { return e.end_ns; },
          "int: the end time, host monotonic clock, in nanoseconds (at least ``start_ns``).")
      .def_property_readonly(
          "duration_ns", [](const Event& e) { return e.end_ns - e.start_ns; },
          "int: ``end_ns - start_ns``.")
      .def_property_readonly(
          "thread_id", [](const Event& e) { return e.thread_id; },
          "int: the recording thread's native id (``threading.get_native_id()``).")
      .def_property_readonly(
          "correlation_id", [](const Event& e) { return e.correlation_id; },
          "int: unique in the process per operation event; shared by a move's submission and "
          "completion events.")
      .def("__repr__", &event_repr, self_not_none,
           "``ProfileEvent(KIND 'NAME', correlation_id=N, duration_ns=N)``.");

  py::class_<KeyAverage>(m, "KeyAverage", R"doc(
The events of one kind and name, aggregated: one row of ``Profile.key_averages()``.

Durations are in nanoseconds.
)doc")
      .def_property_readonly(
          "name", [](const KeyAverage& a) { return a.name; }, "str: the events' name.")
      .def_property_readonly(
          "kind", [](const KeyAverage& a) { return profiling::kind_name(a.kind); },
          "str: the events' kind, ``'operation'``, ``'submission'`` or ``'completion'``.")
      .def_property_readonly(
          "count", [](const KeyAverage& a) { return a.count; }, "int: the number of events.")
      .def_property_readonly(
          "total_ns", [](const KeyAverage& a) { return a.total_ns; },
          "int: the sum of their durations.")
      .def_property_readonly(
          "mean_ns", [](const KeyAverage& a) { return a.mean_ns(); },
          "float: ``total_ns / count``.")
      .def_property_readonly(
          "min_ns", [](const KeyAverage& a) { return a.min_ns; }, "int: the shortest duration.")
      .def_property_readonly(
          "max_ns", [](const KeyAverage& a) { return a.max_ns; }, "int: the longest duration.");

  py::class_<Session, std::shared_ptr<Session>>(
      m, "ProfilerSession", "A collection of profiling events (strideweave.profiling.Profile).")
      .def_static("start", &Session::start, "A new session, active from now on.")
      .def("stop", &Session::stop, self_not_none)
      .def_property_readonly("is_active", getter<&Session::is_active>())
      .def("events", &Session::events, self_not_none, "The events delivered so far.");

  m.def(
      "chrome_trace_json",
      [](const std::vector<Event>& events) {
        return profiling::chrome_trace_json(events, profiling::process_id());
      },
      py::arg("events"), "The events as Chrome Trace Event Format JSON.");
  m.def("key_averages", &profiling::key_averages, py::arg("events"),
        "The events aggregated per kind and name.");
  m.def("key_averages_table", &profiling::key_averages_table, py::arg("rows"),
        "The rows as a fixed-width text table.");
}

}  // namespace strideweave::bindings
