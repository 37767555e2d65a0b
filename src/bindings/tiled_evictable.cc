// Python binding of spec/carrier-composition "TiledEvictable": the carrier,
// and AwaitProjection / AwaitResidency, the AwaitResult subclasses its tile
// operations return.
//
// TiledEvictable is final in Python (a definition-backed class of its own;
// its storage hooks never run Python). The constructor makes the tile
// prototypes by calling fast_class(dtype) and slow_class(dtype), then builds
// the carrier without the GIL; prototypes and tiles of Python subclasses are
// dropped exit-safely (released_with_gil), since the last reference may go on
// a pool worker.
#include "tiled_evictable.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "class_map.h"
#include "describe.h"
#include "dtype_convert.h"
#include "gil.h"
#include "int_convert.h"
#include "move_request.h"
#include "self_arg.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/compose/tiled_evictable.h"
#include "strideweave/util/error.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// An AwaitResult over a Completion<T> of the core.
template <class T>
class CompletionResult : public AwaitResult {
 public:
  explicit CompletionResult(std::shared_ptr<const Completion<T>> completion)
      : completion_(std::move(completion)) {}

  bool done() const override { return completion_->done(); }

 protected:
  bool block_for(std::chrono::milliseconds timeout) const override {
    return completion_->wait_for(timeout);
  }
  std::exception_ptr failure() const override { return completion_->error(); }

  std::shared_ptr<const Completion<T>> completion_;
};

// AwaitProjection: completes with one compact ordinary Tensor.
class AwaitProjection final : public CompletionResult<std::shared_ptr<const Tensor>> {
 public:
  using CompletionResult::CompletionResult;

 private:
  py::object result() const override {
    return py::cast(std::const_pointer_cast<Tensor>(completion_->wait()));
  }
};

// AwaitResidency: completes with None.
class AwaitResidency final : public CompletionResult<std::monostate> {
 public:
  using CompletionResult::CompletionResult;

 private:
  py::object result() const override { return py::none(); }
};

// fast_class(dtype) / slow_class(dtype): the empty prototype of a tile class.
std::shared_ptr<Carrier> prototype(py::handle cls, py::handle dtype, const char* role) {
  const ClassDescriptor* found = find_descriptor(cls);
  if (found == nullptr || found->kind() != DescriptorKind::kCarrier ||
      found == &Carrier::static_class()) {
    throw TypeError(std::string("TiledEvictable: ") + role + " " + describe_object(cls) +
                    " is not a concrete Carrier subclass");
  }
  py::object made = cls(dtype);
  if (!py::isinstance<Carrier>(made)) {
    throw TypeError(std::string("TiledEvictable: ") + role + "(dtype) returned " +
                    describe_object(made) + ", which is not a Carrier");
  }
  return released_with_gil(made.cast<std::shared_ptr<Carrier>>(), "releasing a tile prototype");
}

std::vector<int64_t> tile_list(py::handle tiles, const char* operation) {
  const std::string what = std::string(operation) + ": tiles";
  if (!py::isinstance<py::iterable>(tiles) || py::isinstance<py::str>(tiles)) {
    throw TypeError(what + " " + describe_object(tiles) + " is not an iterable of tile indices");
  }
  std::vector<int64_t> out;
  for (const py::handle t : tiles) {
    out.push_back(to_int64(t, what + "[" + std::to_string(out.size()) + "]"));
  }
  return out;
}

const char* state_name(TiledEvictable::TileState state) {
  return state == TiledEvictable::TileState::kResident ? "resident" : "evicted";
}

}  // namespace

void bind_tiled_evictable(py::module_& m) {
  py::class_<AwaitProjection, AwaitResult>(
      m, "AwaitProjection",
      "The completion handle of TiledEvictable.project(); completes with one compact "
      "ordinary Tensor.");
  py::class_<AwaitResidency, AwaitResult>(
      m, "AwaitResidency",
      "The completion handle of TiledEvictable.make_resident() and evict(); completes with "
      "None.");

  py::class_<TiledEvictable, Carrier, py::smart_holder> cls(m, "TiledEvictable", py::is_final(),
                                                            R"doc(
Slots split into tiles of tile_slots slots, each resident in a fast carrier
(fast_class) or evicted to a slow one (slow_class); at most resident_limit
tiles resident (None: no limit), least recently used evicted first. Tiles
start evicted. project(layout, offset=0) -> AwaitProjection;
make_resident(tiles) and evict(tiles) -> AwaitResidency.
)doc");
  register_class(cls, TiledEvictable::static_class());
  cls.def(py::init([](py::handle dtype, py::handle n, py::handle tile_slots, py::handle fast_class,
                      py::handle slow_class, py::handle resident_limit, py::object values) {
            const DType element = to_dtype(dtype, "TiledEvictable: dtype");
            const auto slots =
                n.is_none() ? std::nullopt : std::optional(to_int64(n, "TiledEvictable: n"));
            const int64_t size = to_int64(tile_slots, "TiledEvictable: tile_slots");
            const auto limit =
                resident_limit.is_none()
                    ? std::nullopt
                    : std::optional(to_int64(resident_limit, "TiledEvictable: resident_limit"));
            TiledEvictable::require_tile_dtype(element);
            // The classes are called with the DType, whatever named it.
            const py::object converted_dtype = py::cast(element);
            std::shared_ptr<Carrier> fast = prototype(fast_class, converted_dtype, "fast_class");
            std::shared_ptr<Carrier> slow = prototype(slow_class, converted_dtype, "slow_class");
            std::optional<std::vector<Value>> converted;
            if (!values.is_none()) converted = to_values(values, "values");
            return without_gil([&] {
              return TiledEvictable::create(element, slots, size, std::move(fast), std::move(slow),
                                            limit, std::move(converted));
            });
          }),
          py::arg("dtype"), py::arg("n"), py::arg("tile_slots"), py::kw_only(),
          py::arg("fast_class") = py::type::of<CPU>(),
          py::arg("slow_class") = py::type::of<FileBacked>(),
          py::arg("resident_limit") = py::none(), py::arg("values") = py::none())
      .def_property_readonly("tile_slots", getter<&TiledEvictable::tile_slots>())
      .def_property_readonly("tile_count", getter<&TiledEvictable::tile_count>())
      .def_property_readonly("resident_limit", getter<&TiledEvictable::resident_limit>())
      .def_property_readonly("fast_class",
                             [](const TiledEvictable& t) { return class_for(t.fast_class()); })
      .def_property_readonly("slow_class",
                             [](const TiledEvictable& t) { return class_for(t.slow_class()); })
      .def_property_readonly(
          "residency",
          [](const TiledEvictable& t) {
            const std::vector<TiledEvictable::TileState> states = t.residency();
            py::tuple out(states.size());
            for (std::size_t i = 0; i < states.size(); ++i) out[i] = state_name(states[i]);
            return out;
          },
          "Each tile's state, 'resident' or 'evicted', tile 0 first.")
      .def_property_readonly(
          "use_order",
          [](const TiledEvictable& t) {
            const std::vector<int64_t> order = t.use_order();
            return py::tuple(py::cast(order));
          },
          "The resident tiles, least recently used first.")
      .def(
          "project",
          [](TiledEvictable& t, const Layout& layout, py::handle offset) {
            const int64_t at = to_int64(offset, "project: offset");
            return std::make_unique<AwaitProjection>(
                without_gil([&] { return t.project(layout, at); }));
          },
          py::arg("layout"), py::arg("offset") = 0,
          "Loads the tiles the window (layout, offset) needs on the process pool; the "
          "AwaitProjection completes with a compact CPU Tensor of the window's values.")
      .def(
          "make_resident",
          [](TiledEvictable& t, py::handle tiles) {
            const std::vector<int64_t> given = tile_list(tiles, "make_resident");
            return std::make_unique<AwaitResidency>(
                without_gil([&] { return t.make_resident(given); }));
          },
          py::arg("tiles"), "Loads `tiles` on the process pool; completes with None.")
      .def(
          "evict",
          [](TiledEvictable& t, py::handle tiles) {
            const std::vector<int64_t> given = tile_list(tiles, "evict");
            return std::make_unique<AwaitResidency>(without_gil([&] { return t.evict(given); }));
          },
          py::arg("tiles"), "Evicts `tiles` on the process pool; completes with None.");
}

}  // namespace strideweave::bindings
