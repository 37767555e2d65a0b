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
#include "type_hint.h"
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
  py::class_<AwaitProjection, AwaitResult>(m, "AwaitProjection", R"doc(
The completion handle of ``TiledEvictable.project()``; completes with one compact ordinary Tensor.
)doc");
  py::class_<AwaitResidency, AwaitResult>(m, "AwaitResidency", R"doc(
The completion handle of ``TiledEvictable.make_resident()`` and ``evict()``; completes with None.
)doc");

  py::class_<TiledEvictable, Carrier, py::smart_holder> cls(m, "TiledEvictable", py::is_final(),
                                                            R"doc(
Slots split into tiles, each resident in a fast carrier or evicted to a slow one.

Tiles hold ``tile_slots`` consecutive slots (the last one the remainder). Every
tile keeps its values in a carrier of ``slow_class`` and, while resident, in one
of ``fast_class``; tiles start evicted, and at most ``resident_limit`` are
resident at once, the least recently used evicted first. The entry points read
and write any slot in either tile state without changing residency.
``project``, ``make_resident`` and ``evict`` queue their work on the process
pool in submission order and return AwaitResult handles; while work is queued
the TiledEvictable is pinned (reads continue, writes, release and moves fail).
It does not support ``allocate`` or DLPack export. It is definition-backed: a
move of a Tensor over it goes only to CPU (route
``'tiled-evictable/projection'``). Final: it cannot be subclassed.
)doc");
  register_class(cls, TiledEvictable::static_class());
  cls.def(py::init([](Hint<"DType | numpy.dtype | torch.dtype | str"> dtype, Hint<"int | None"> n,
                      Hint<"int"> tile_slots, Hint<"type[Carrier]"> fast_class,
                      Hint<"type[Carrier]"> slow_class, Hint<"int | None"> resident_limit,
                      Hint<"collections.abc.Iterable[bool | int | float | tuple] | None"> values) {
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
          py::arg_v("fast_class", py::type::of<CPU>(), "CPU"),
          py::arg_v("slow_class", py::type::of<FileBacked>(), "FileBacked"),
          py::arg("resident_limit") = py::none(), py::arg("values") = py::none(),
          R"doc(A TiledEvictable of ``n`` slots in tiles of ``tile_slots``, every tile evicted.

The tile carriers are made from ``fast_class(dtype)`` and ``slow_class(dtype)``
(their ``new_like()``), owned by the TiledEvictable; a failed construction
creates no tile.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot; one with an item size.
n : int or None
    The slot count; None takes ``len(values)`` (zero slots without values).
tile_slots : int
    The slots per tile, 1 or more.
fast_class : type[Carrier], optional
    The class of the resident tiles' carriers (CPU).
slow_class : type[Carrier], optional
    The class of the tiles' backing carriers (FileBacked).
resident_limit : int, optional
    The most tiles resident at once, 1 or more; None: no limit.
values : iterable, optional
    The initial values; without them every slot holds the dtype's zero.

Raises
------
TypeError
    When ``dtype`` names no dtype or one without an item size, a class is not a
    concrete Carrier subclass, or a movement edge between the two classes is
    unavailable for the dtype (a definition-backed class included).
ValueError
    When ``n`` is negative or disagrees with ``values``, ``tile_slots`` or
    ``resident_limit`` is below 1, or there would be more than ``2**20``
    tiles.
)doc")
      .def_property_readonly("tile_slots", getter<&TiledEvictable::tile_slots>(),
                             "int: the slots per tile (the last tile holds the remainder).")
      .def_property_readonly("tile_count", getter<&TiledEvictable::tile_count>(),
                             "int: the number of tiles.")
      .def_property_readonly("resident_limit", getter<&TiledEvictable::resident_limit>(),
                             "int | None: the most tiles resident at once; None for no limit.")
      .def_property_readonly(
          "fast_class", [](const TiledEvictable& t) { return class_for(t.fast_class()); },
          "type[Carrier]: the class of the resident tiles' carriers.")
      .def_property_readonly(
          "slow_class", [](const TiledEvictable& t) { return class_for(t.slow_class()); },
          "type[Carrier]: the class of the tiles' backing carriers.")
      .def_property_readonly(
          "residency",
          [](const TiledEvictable& t) {
            const std::vector<TiledEvictable::TileState> states = t.residency();
            py::tuple out(states.size());
            for (std::size_t i = 0; i < states.size(); ++i) out[i] = state_name(states[i]);
            return out;
          },
          "tuple[str, ...]: each tile's state, ``'resident'`` or ``'evicted'``, tile 0 first.")
      .def_property_readonly(
          "use_order",
          [](const TiledEvictable& t) {
            const std::vector<int64_t> order = t.use_order();
            return py::tuple(py::cast(order));
          },
          "tuple[int, ...]: the resident tiles, least recently used first.")
      .def(
          "project",
          [](TiledEvictable& t, const Layout& layout, Hint<"int"> offset) {
            const int64_t at = to_int64(offset, "project: offset");
            return std::make_unique<AwaitProjection>(
                without_gil([&] { return t.project(layout, at); }));
          },
          py::arg("layout"), py::arg("offset") = 0,
          R"doc(Reads the window ``(layout, offset)`` into a new compact CPU Tensor.

Validates, then queues the work: the evicted tiles the window reaches are loaded
in ascending order and marked used. The result's element ``i`` is the value of
slot ``offset + layout(i)``, in the compact column-major layout of
``layout``'s shape, over a fresh publicly mutable CPU carrier sharing no
storage with any tile.

Parameters
----------
layout : Layout
    The window's layout (nested modes, stride-0 modes and holes allowed).
offset : int, optional
    The slot of the window's origin, 0 or more.

Returns
-------
AwaitProjection
    Completes with the Tensor, or with the failure of a tile transfer.

Raises
------
RuntimeError
    When the TiledEvictable is released, or pinned by another operation.
ValueError
    When ``offset`` is negative, or the window spans more tiles than
    ``resident_limit``.
IndexError
    When a layout of non-zero size reaches a slot at or beyond ``slots``.
TypeError
    When ``layout`` is not a Layout or ``offset`` is not an integer.
)doc")
      .def(
          "make_resident",
          [](TiledEvictable& t, Hint<"collections.abc.Iterable[int]"> tiles) {
            const std::vector<int64_t> given = tile_list(tiles, "make_resident");
            return std::make_unique<AwaitResidency>(
                without_gil([&] { return t.make_resident(given); }));
          },
          py::arg("tiles"), R"doc(Loads the given tiles on the process pool and marks them used.

Each distinct evicted tile is loaded once, in the given order, into a new fast
carrier; when a load would exceed ``resident_limit``, the least recently used
resident tile not needed here is evicted first.

Parameters
----------
tiles : iterable of int
    Tile indices, in ``[0, tile_count)``.

Returns
-------
AwaitResidency
    Completes with None, or with the failure of a tile transfer.

Raises
------
TypeError
    When ``tiles`` is not an iterable of integers.
IndexError
    When an index is outside ``[0, tile_count)``.
ValueError
    When it names more distinct tiles than ``resident_limit``.
RuntimeError
    When the TiledEvictable is released, or pinned by another operation.
)doc")
      .def(
          "evict",
          [](TiledEvictable& t, Hint<"collections.abc.Iterable[int]"> tiles) {
            const std::vector<int64_t> given = tile_list(tiles, "evict");
            return std::make_unique<AwaitResidency>(without_gil([&] { return t.evict(given); }));
          },
          py::arg("tiles"), R"doc(Evicts the given resident tiles on the process pool.

Each resident tile's fast carrier is copied into its slow carrier (skipped when
the tile was not written since it was loaded) and released; evicted tiles are
left as they are.

Parameters
----------
tiles : iterable of int
    Tile indices, in ``[0, tile_count)``.

Returns
-------
AwaitResidency
    Completes with None, or with the failure of a tile transfer.

Raises
------
TypeError
    When ``tiles`` is not an iterable of integers.
IndexError
    When an index is outside ``[0, tile_count)``.
RuntimeError
    When the TiledEvictable is released, or pinned by another operation.
)doc");
}

}  // namespace strideweave::bindings
