// PythonStorageCarrier: the core's ForeignStorageCarrier with its storage
// hooks routed to a Python subclass's methods _slot_count, _read_range,
// _write_range, _allocate and _release. The binding only translates: the
// calls (with the GIL, exit-safely), the buffers they see (Python-owned
// copies, so that a hook keeping one never reaches core memory), their return
// values and the note naming the hook on an exception. What the hooks must
// keep, and the checks of what they return, are the core's
// (strideweave/carrier/foreign_storage.h).
#include "python_storage.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "int_convert.h"
#include "py_carrier.h"
#include "py_future.h"
#include "strideweave/carrier/foreign_storage.h"
#include "strideweave/exec/foreign_wait.h"
#include "strideweave/util/host_buffer.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// The buffer a storage method sees: host memory of the library's allocator
// (util/host_buffer.h), owned by a Python object (_SpanBuffer), read-only for
// _write_range. A large one comes from the cache of freed mappings, so handing
// a method a span costs one copy, not a page fault per page; a method that
// keeps the buffer keeps the object and with it the memory, never the
// library's own storage.
class SpanBuffer {
 public:
  SpanBuffer(std::size_t size, bool writable)
      : size_(size),
        writable_(writable),
        memory_(HostBuffer::allocate((size + kAlignment - 1) / kAlignment * kAlignment, kAlignment,
                                     false)) {
    if (!memory_)
      throw MemoryError("a storage method's buffer of " + std::to_string(size) + " bytes");
  }

  // A new _SpanBuffer of `size` bytes; `buffer` points at it while the object lives.
  static py::object make(std::size_t size, bool writable, SpanBuffer*& buffer) {
    auto made = std::make_unique<SpanBuffer>(size, writable);
    buffer = made.get();
    return py::cast(std::move(made));
  }

  std::byte* data() const noexcept { return memory_.get(); }
  py::buffer_info info() const {
    return py::buffer_info(data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(size_)}, {py::ssize_t{1}}, !writable_);
  }

 private:
  static constexpr std::size_t kAlignment = 64;
  std::size_t size_;
  bool writable_;
  HostBuffer memory_;
};

class PythonStorageCarrier : public ForeignStorageCarrier {
 public:
  PythonStorageCarrier(DType dtype, bool mutable_)
      : ForeignStorageCarrier("PythonStorageCarrier", std::move(dtype), mutable_) {}

  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // Every instance is a subclass's (PyCarrier overrides this); the class
  // itself cannot be constructed.
  std::shared_ptr<Carrier> new_like() const override {
    throw NotImplementedError("PythonStorageCarrier is abstract");
  }

 protected:
  int64_t storage_slot_count() override {
    const ExitSafeGil gil("PythonStorageCarrier._slot_count");
    gil.require();
    const py::object count = call(Hook::kSlotCount, "", "_slot_count");
    if (PyBool_Check(count.ptr()) || !PyIndex_Check(count.ptr())) {
      throw TypeError(hook_name(Hook::kSlotCount) + " of " + label() + " returned " +
                      describe_object(count) + ", not an int");
    }
    return to_int64(count, hook_name(Hook::kSlotCount) + " of " + label());
  }

  void storage_read(int64_t first, int64_t count, std::byte* out) const override {
    const ExitSafeGil gil("PythonStorageCarrier._read_range");
    gil.require();
    const std::size_t bytes = static_cast<std::size_t>(count) * *dtype().itemsize();
    SpanBuffer* buffer = nullptr;
    const py::object owner = SpanBuffer::make(bytes, true, buffer);
    std::memset(buffer->data(), 0, bytes);
    returns_none(Hook::kReadRange, range(first, count),
                 call(Hook::kReadRange, range(first, count), "_read_range", first, count,
                      py::memoryview(owner)));
    std::memcpy(out, buffer->data(), bytes);
  }

  // A write waits for the Future _write_range may return (with the GIL
  // released while it waits): its exception is the hook's.
  void storage_write(int64_t first, int64_t count, const std::byte* in) override {
    const ExitSafeGil gil("PythonStorageCarrier._write_range");
    gil.require();
    const py::object future = start_write(first, count, in);
    if (future.is_none()) return;
    try {
      future.attr("result")();
    } catch (py::error_already_set& e) {
      e.value().attr("add_note")(raised_by(Hook::kWriteRange, range(first, count)));
      throw;
    }
  }

  // A started write reports when the Future _write_range may return
  // completes, from a pool worker (report_when_done).
  void storage_start_write(int64_t first, int64_t count, const std::byte* in,
                           WriteDone done) override {
    const ExitSafeGil gil("PythonStorageCarrier._write_range");
    gil.require();
    const py::object future = start_write(first, count, in);
    if (future.is_none()) {
      without_gil([&] { done(nullptr); });
      return;
    }
    const std::string shown = hook_name(Hook::kWriteRange) + range(first, count);
    report_when_done(future, "the Future of " + shown + " of " + label(),
                     raised_by(Hook::kWriteRange, range(first, count)), std::move(done));
  }

  void storage_allocate(int64_t n) override {
    const ExitSafeGil gil("PythonStorageCarrier._allocate");
    gil.require();
    const std::string args = "(" + std::to_string(n) + ")";
    returns_none(Hook::kAllocate, args, call(Hook::kAllocate, args, "_allocate", n));
  }

  void storage_release() override {
    const ExitSafeGil gil("PythonStorageCarrier._release");
    gil.require();
    returns_none(Hook::kRelease, "()", call(Hook::kRelease, "()", "_release"));
  }

  std::string hook_name(Hook hook) const override {
    return carrier_class().name() + "." + method(hook);
  }

 private:
  static const char* method(Hook hook) {
    switch (hook) {
      case Hook::kSlotCount:
        return "_slot_count";
      case Hook::kReadRange:
        return "_read_range";
      case Hook::kWriteRange:
        return "_write_range";
      case Hook::kAllocate:
        return "_allocate";
      case Hook::kRelease:
        return "_release";
    }
    return "";
  }

  // Calls _write_range(first, count, data) with `data` a read-only copy of
  // the `count` items at `in`: None when the method wrote the range, or the
  // concurrent.futures.Future it returned, which finishes the write. Anything
  // else is a TypeError naming the hook. Requires the GIL.
  py::object start_write(int64_t first, int64_t count, const std::byte* in) const {
    const std::size_t bytes = static_cast<std::size_t>(count) * *dtype().itemsize();
    SpanBuffer* buffer = nullptr;
    const py::object owner = SpanBuffer::make(bytes, false, buffer);
    std::memcpy(buffer->data(), in, bytes);
    py::object returned = call(Hook::kWriteRange, range(first, count), "_write_range", first, count,
                               py::memoryview(owner));
    if (!returned.is_none() && !is_future(returned)) {
      throw TypeError(hook_name(Hook::kWriteRange) + range(first, count) + " of " + label() +
                      " returned " + describe_object(returned) +
                      "; _write_range returns None or a concurrent.futures.Future");
    }
    return returned;
  }

  // The note an exception raised by `hook` gets.
  std::string raised_by(Hook hook, const std::string& shown) const {
    return "raised by " + hook_name(hook) + shown + " of " + label();
  }

  static std::string range(int64_t first, int64_t count) {
    return "(first=" + std::to_string(first) + ", count=" + std::to_string(count) + ")";
  }

  // Calls the subclass's `name`(args...); NotImplementedError naming the hook
  // when the subclass lacks it. An exception it raises propagates as the same
  // object, with a note naming the hook, its arguments and this carrier.
  template <class... Args>
  py::object call(Hook hook, const std::string& shown, const char* name, Args&&... args) const {
    const py::function override = py::get_override(this, name);
    if (!override) {
      throw NotImplementedError(hook_name(hook) +
                                " is not implemented: a PythonStorageCarrier "
                                "subclass implements _slot_count, _read_range, _write_range, "
                                "_allocate and _release");
    }
    try {
      return override(std::forward<Args>(args)...);
    } catch (py::error_already_set& e) {
      e.value().attr("add_note")(raised_by(hook, shown));
      throw;
    }
  }

  void returns_none(Hook hook, const std::string& shown, const py::object& returned) const {
    if (!returned.is_none()) {
      throw TypeError(hook_name(hook) + shown + " of " + label() + " returned " +
                      describe_object(returned) + "; a storage hook returns None");
    }
  }
};

using PythonStorageClass = CarrierPyClass<PythonStorageCarrier>;

// The functions the core's foreign-storage gate waits with (exec/foreign_wait.h).
void install_foreign_wait_hooks() {
  ForeignWaitHooks hooks;
  hooks.holds = []() noexcept { return Py_IsInitialized() != 0 && PyGILState_Check() == 1; };
  hooks.release = []() noexcept -> void* {
    if (Py_IsInitialized() == 0 || PyGILState_Check() != 1) return nullptr;
    return PyEval_SaveThread();
  };
  hooks.restore = [](void* saved) noexcept {
    PyEval_RestoreThread(static_cast<PyThreadState*>(saved));
  };
  set_foreign_wait_hooks(hooks);
}

}  // namespace

void bind_python_storage(py::module_& m) {
  install_foreign_wait_hooks();
  py::class_<SpanBuffer>(m, "_SpanBuffer", py::buffer_protocol(),
                         "The bytes a PythonStorageCarrier storage method reads or fills; "
                         "use it through the memoryview the method receives.")
      .def_buffer([](SpanBuffer& buffer) { return buffer.info(); });
  PythonStorageClass cls = bind_carrier_class<PythonStorageCarrier>(m, "PythonStorageCarrier",
                                                                    R"doc(
The base of carriers whose storage is implemented in Python, in spans.

A subclass stores the slots wherever it likes (a NumPy array, a file, an array
store) and implements five storage methods; everything else is the library's
and behaves as for a built-in carrier: ``version`` and tokens, pins and
leases, the owner path, value conversion and its refusals, ``release`` (the
``_release`` method runs at most once), thread safety, moves in both
directions with any carrier, routes of a ``CarrierDefinition``, autograd.
A range call, a bulk move or ``tolist()`` of n slots calls a storage method
O(1) times, never once per slot. The dtype must have an item size (Bool,
Int32, Float32 or a compound dtype).

The storage methods, each called with the GIL, with no library lock that
another thread may wait for while it holds the GIL (other callers of the same
carrier wait without the GIL), for a range inside the slots and never with
``count == 0``:

``_slot_count(self) -> int``
    The slots the storage holds now (at construction, and after ``_allocate``).
``_read_range(self, first, count, out) -> None``
    Fills ``out``, a writable memoryview of ``count * itemsize`` bytes, with
    slots ``[first, first + count)`` in native encoding (for Float32,
    ``numpy.frombuffer(out, numpy.float32)[:] = ...``).
``_write_range(self, first, count, data) -> None | concurrent.futures.Future``
    Stores ``data``, a read-only memoryview of ``count * itemsize`` bytes in
    native encoding, in slots ``[first, first + count)``; a write that raises
    must leave those slots as they were. It may instead start the write and
    return a ``concurrent.futures.Future`` that completes when it is done
    (keep ``data`` until then). A move into the carrier then reports its
    outcome when that Future completes, and no thread waits for it; every
    other write waits for it, and its exception is the method's.
``_allocate(self, n) -> None``
    Gives the empty storage ``n`` slots reading zero.
``_release(self) -> None``
    Frees the storage; called once, by ``release()``.

A method that raises fails the call with that exception, a note naming the
method, its arguments and the carrier added; one that returns something else
than promised fails it with TypeError, a ``_read_range`` leaving a Bool byte
other than 0 or 1 with ValueError, an ``_allocate(n)`` after which
``_slot_count()`` is not ``n`` with RuntimeError, each naming the method. None
of these changes the version, and a failed read leaves the reader's buffer as
it was. The buffers are copies owned by Python: a method that keeps one never
reaches the library's memory. A storage method must not use its own carrier
(RuntimeError) nor, while it runs, wait for another thread that does.

Set the storage up, then call ``super().__init__(dtype, n, values=values)``:
the constructor reads ``_slot_count()`` and, for empty storage, allocates
``n`` (or ``len(values)``) slots and writes the values, without changing the
version. ``new_like()`` defaults to ``type(self)(self.dtype)``.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot; it must have an item size.
n : int, optional
    The slot count of empty storage (or the count the storage already holds).
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes.

Raises
------
TypeError
    When the class is PythonStorageCarrier itself, ``dtype`` names no
    strideweave dtype or has no item size, or a value is of the wrong kind.
ValueError
    When ``n`` is negative, disagrees with ``values``, or disagrees with
    storage that already holds slots, or a value is out of range.
NotImplementedError
    When the subclass lacks a storage method the construction calls.
)doc");
  cls.def(
      "__init__",
      [](py::detail::value_and_holder& v_h, DTypeArg dtype, SlotCountArg n, ValuesArg values,
         bool mutable_) {
        if (Py_TYPE(v_h.inst) == v_h.type->type) {
          throw TypeError(
              "PythonStorageCarrier is abstract: subclass it and implement _slot_count, "
              "_read_range, _write_range, _allocate and _release");
        }
        const DType converted = require_dtype(dtype, "PythonStorageCarrier");
        const std::optional<int64_t> count = slot_count(n, "PythonStorageCarrier");
        std::optional<std::vector<Value>> initial = optional_values(values);
        construct_exact<PythonStorageClass, PythonStorageCarrier, PyCarrier<PythonStorageCarrier>>(
            v_h, std::make_tuple(converted, mutable_), [](auto make) { return make(); });
        const py::handle self(reinterpret_cast<PyObject*>(v_h.inst));
        self.cast<PythonStorageCarrier&>().initialize(count, initial);
      },
      py::detail::is_new_style_constructor(), py::arg("dtype"), py::arg("n") = py::none(),
      py::kw_only(), py::arg("values") = py::none(), py::arg("mutable") = true);
}

}  // namespace strideweave::bindings
