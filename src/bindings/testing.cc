#include "testing.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "carrier.h"
#include "class_map.h"
#include "gil.h"
#include "python_exception.h"
#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/device/emulated.h"
#include "strideweave/exec/thread_pool.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/profiling/profiler.h"
#include "strideweave/util/error.h"
#include "strideweave/util/mapped_memory.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// Outcomes of submit_python's calls. Never destroyed: workers update them at exit.
struct PythonCallCounts {
  std::atomic<int64_t> ran{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> skipped{0};
};

PythonCallCounts& counts() {
  static auto* c = new PythonCallCounts();
  return *c;
}

// Runs `fn` on a worker of the process-wide pool after `delay_s` seconds,
// through ExitSafeGil: the call runs (its exception, if any, reported as
// unraisable) or is skipped once the interpreter is exiting. The worker
// holds a strong reference to `fn`, dropped after the call; a skipped call
// leaks it (no GIL to drop it with).
void submit_python(const py::function& fn, double delay_s) {
  if (!(delay_s >= 0)) throw ValueError("submit_python: delay_s must be >= 0");
  PyObject* callable = fn.ptr();
  Py_INCREF(callable);
  process_pool().submit([callable, delay_s] {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
    const ExitSafeGil gil("submit_python");
    if (!gil) {
      ++counts().skipped;
      return;
    }
    PyObject* result = PyObject_CallNoArgs(callable);
    if (result == nullptr) {
      PyErr_WriteUnraisable(callable);
      ++counts().failed;
    } else {
      Py_DECREF(result);
      ++counts().ran;
    }
    Py_DECREF(callable);
  });
}

// Calls `fn` through ExitSafeGil while this thread holds `carrier`'s lock
// (the GIL released first): the helper must refuse with RuntimeError.
void call_under_carrier_lock(const Carrier& carrier, const py::function& fn) {
  const GilReleased unlocked;
  carrier.read_locked("call_under_carrier_lock", [&](const SlotReader&) {
    const ExitSafeGil gil("call_under_carrier_lock");
    gil.require();
    fn();
  });
}

// The move stage named `name` ("validation", "route preparation", ...).
MoveStage stage_named(const std::string& name) {
  for (int s = 0; s < kMoveStages; ++s) {
    if (name == move_stage_name(static_cast<MoveStage>(s))) return static_cast<MoveStage>(s);
  }
  throw ValueError("inject_move_fault: no move stage is named '" + name + "'");
}

// Nanoseconds per iteration of a loop of `count` iterations, each opening and
// closing an OperationScope over `tensor` twice when `scoped`, or only
// storing the iteration to a volatile sink (the loop's own cost) otherwise.
double time_operation_scopes(const std::shared_ptr<Tensor>& tensor, int64_t count, bool scoped) {
  [[maybe_unused]] volatile int64_t sink = 0;
  const Tensor* inputs[] = {tensor.get(), tensor.get()};
  const auto start = std::chrono::steady_clock::now();
  if (scoped) {
    for (int64_t i = 0; i < count; ++i) {
      const profiling::OperationScope scope("bench", inputs);
      sink = i;
    }
  } else {
    for (int64_t i = 0; i < count; ++i) sink = i;
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(count);
}

}  // namespace

void bind_testing(py::module_& m) {
  py::module_ t =
      m.def_submodule("_testing", "Private hooks for StrideWeave's own tests; not a public API.");

  t.def(
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

  t.def(
      "registered_descriptor", [](py::handle type) { return registered_descriptor(type); },
      py::arg("type"), py::return_value_policy::reference,
      "The descriptor registered for a carrier class object, or None; creates nothing.");

  t.def("submit_python", &submit_python, py::arg("fn"), py::arg("delay_s") = 0.0,
        "Calls fn() on a worker of the process-wide pool after delay_s, exit-safely.");
  t.def(
      "python_calls",
      [] {
        py::dict d;
        d["ran"] = counts().ran.load();
        d["failed"] = counts().failed.load();
        d["skipped"] = counts().skipped.load();
        return d;
      },
      "Outcomes of submit_python's calls so far: ran, failed, skipped.");
  t.def(
      "wait_pool_idle", [] { process_pool().wait_idle(); }, py::call_guard<GilReleased>(),
      "Waits until the process-wide pool has run every submitted task.");
  t.def(
      "gil_releases", [] { return gil_releases(); },
      "How many times the calling thread released the GIL around a core call.");
  t.def("pool_threads", &process_pool_threads,
        "The number of workers of the process-wide pool (started or to be started).");
  t.def(
      "live_pool_threads", [] { return process_pool().live_threads(); },
      "The workers of the process-wide pool alive now: pool_threads() plus the extra workers "
      "started while workers ran Python, until they end.");
  t.def(
      "release_owned", [](Carrier& owner, Carrier& owned) { owner.owner_path(owned).release(); },
      py::arg("owner"), py::arg("owned"), py::call_guard<GilReleased>(),
      "Releases `owned` through the owner path of `owner`, as a composite releases its parts.");
  t.def("call_under_carrier_lock", &call_under_carrier_lock, py::arg("carrier"), py::arg("fn"),
        "Attempts fn() through the GIL helper while holding carrier's lock (refused).");

  t.def(
      "operation_class_of",
      [](const MoveOperation& operation) -> const ClassDescriptor& {
        return operation.operation_class();
      },
      py::arg("operation"), py::return_value_policy::reference,
      "The descriptor the core reports for a move operation instance (its C++ "
      "operation_class()).");

  t.attr("move_stages") = [] {
    py::tuple names(kMoveStages);
    for (int s = 0; s < kMoveStages; ++s) names[s] = move_stage_name(static_cast<MoveStage>(s));
    return names;
  }();
  t.def(
      "inject_move_fault",
      [](const std::string& stage, const py::object& exception) {
        const MoveStage at = stage_named(stage);
        if (PyExceptionInstance_Check(exception.ptr()) == 0) {
          throw TypeError("inject_move_fault: exception is not an exception instance");
        }
        try {
          raise_object(exception);
        } catch (py::error_already_set& e) {
          inject_move_fault(at, std::make_exception_ptr(PythonException(e)));
        }
      },
      py::arg("stage"), py::arg("exception"),
      "Arms a fault: the next move to reach `stage` (one of move_stages) raises `exception` "
      "there, once.");
  t.def("time_operation_scopes", &time_operation_scopes, py::arg("tensor"), py::arg("count"),
        py::arg("scoped"),
        "Nanoseconds per iteration of a C++ loop opening an OperationScope over (tensor, "
        "tensor) when scoped, or of the same loop without it (bench/profiling.py).");
  t.def("refuse_direct_io", &refuse_direct_io_for_testing, py::arg("refuse"),
        "While True, BlockDeviceCarrier treats O_DIRECT as refused (EINVAL) when it opens "
        "storage, so the buffered fallback runs on any file system.");
  t.def("fail_next_sync", &fail_next_sync_for_testing, py::arg("errno"),
        "The next fdatasync of a BlockDeviceCarrier fails with this errno (0 disarms).");
  t.def("block_device_syncs", &syncs_for_testing,
        "How many fdatasync calls of BlockDeviceCarriers succeeded.");
  t.def(
      "set_metal_latency",
      [](int64_t microseconds) {
        device::set_emulated_latency(std::chrono::microseconds(microseconds));
      },
      py::arg("microseconds"),
      "The time each command buffer of the emulated Metal device takes before it runs.");
  t.def(
      "metal_latency", [] { return device::emulated_latency().count(); },
      "The emulated Metal device's latency per command buffer, in microseconds.");
  t.def("metal_pending", &device::emulated_pending,
        "How many command buffers the emulated Metal device has not completed.");
  t.def("metal_allocated_bytes", &device::emulated_allocated_bytes,
        "The device bytes held by live buffers of the emulated Metal device.");
  t.def(
      "host_cache_bytes", [] { return static_cast<int64_t>(mapped_cache_bytes()); },
      "The bytes of freed large buffers (CPU and emulated device) kept for reuse.");
  t.def(
      "host_cache_budget", [] { return static_cast<int64_t>(mapped_cache_budget()); },
      "The most bytes the cache of freed large buffers keeps "
      "(STRIDEWEAVE_HOST_CACHE_BYTES).");
  t.def(
      "set_host_cache_budget",
      [](int64_t bytes) {
        if (bytes < 0) throw ValueError("set_host_cache_budget: bytes is negative");
        return static_cast<int64_t>(set_mapped_cache_budget(static_cast<std::size_t>(bytes)));
      },
      py::arg("bytes"),
      "Sets the most bytes the cache of freed large buffers keeps (0 turns it off), "
      "unmapping what is beyond it; returns the previous budget.");
  t.def(
      "empty_host_cache", [] { return static_cast<int64_t>(empty_mapped_cache()); },
      "Unmaps every cached freed buffer; returns the bytes given back.");
  t.def(
      "retired_host_bytes", [] { return static_cast<int64_t>(retired_mapped_bytes()); },
      "The bytes of large buffers retired while an export addressed them (reserved, "
      "inaccessible) and not yet unmapped.");
  t.def(
      "metal_synchronize", [] { device::metal_queue().synchronize(); },
      py::call_guard<GilReleased>(), "Waits for every submitted Metal command.");
  t.attr("metal_faults") = py::make_tuple("allocation", "copy", "synchronize");
  t.def(
      "inject_metal_fault",
      [](const std::string& stage, const py::object& exception) {
        device::Fault fault{};
        if (stage == "allocation") {
          fault = device::Fault::kAllocation;
        } else if (stage == "copy") {
          fault = device::Fault::kCopy;
        } else if (stage == "synchronize") {
          fault = device::Fault::kSynchronize;
        } else {
          throw ValueError("inject_metal_fault: no Metal fault is named '" + stage + "'");
        }
        if (PyExceptionInstance_Check(exception.ptr()) == 0) {
          throw TypeError("inject_metal_fault: exception is not an exception instance");
        }
        try {
          raise_object(exception);
        } catch (py::error_already_set& e) {
          device::inject_emulated_fault(fault, std::make_exception_ptr(PythonException(e)));
        }
      },
      py::arg("stage"), py::arg("exception"),
      "Arms a fault of the emulated Metal device (one of metal_faults): the next allocation "
      "raises it, the next copy command buffer fails with it at completion, or the next "
      "synchronize raises it; once.");
  t.def("clear_metal_faults", &device::clear_emulated_faults,
        "Disarms every Metal fault; returns how many armed faults never fired.");
  t.def("clear_move_faults", &clear_move_faults,
        "Disarms every stage; returns how many armed faults never fired.");
}

}  // namespace strideweave::bindings
