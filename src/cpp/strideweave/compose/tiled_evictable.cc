#include "strideweave/compose/tiled_evictable.h"

#include <algorithm>
#include <exception>
#include <span>
#include <utility>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/exec/thread_pool.h"
#include "strideweave/layout/runs.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/lowered.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// The route TiledEvictable -> CPU: copies slots [offset, offset + cosize) of
// the moved window (holes included) into the destination's host memory
// through its lease, holding the destination's mutex around one read_range
// of the TiledEvictable (docs/threading.md).
class ProjectionTransfer final : public PreparedTransfer {
 public:
  void start(const MoveTransfer& transfer, TransferDone done) override {
    const Subtensor& window = transfer.tensor->subtensor("move");
    const int64_t count = transfer.element_count;
    // Source, then destination, as every move's copy nests them: the
    // TiledEvictable's lock (and, inside its hooks, a tile's) before the CPU
    // destination's, never the reverse (docs/threading.md).
    window.carrier->read_locked("move", [&](const SlotReader& reader) {
      transfer.destination_lease->write_locked([&](const SlotWriter& writer) {
        if (count == 0) return;
        reader.read_range(window.offset, count, writer.host_range(0, count));
      });
    });
    done();
  }
};

class ProjectionProvider final : public TransferProvider {
 public:
  std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer&) override {
    return std::make_shared<ProjectionTransfer>();
  }
};

const ClassDescriptor& make_class() {
  // Never destroyed: workers may name the class while the process exits.
  const ClassDescriptor& cls = *ClassDescriptor::carrier("TiledEvictable", &Carrier::static_class(),
                                                         ClassDescriptor::Definition::kOpen)
                                    .release();
  std::vector<TransferRoute> routes{TransferRoute{&cls, &CPU::static_class(),
                                                  "tiled-evictable/projection",
                                                  std::make_shared<ProjectionProvider>()}};
  cls.define(std::make_shared<CarrierDefinition>(cls, std::move(routes), false));
  return cls;
}

// Records the exception being handled as `completion`'s failure, when called.
template <class T>
std::function<void()> failed(const std::shared_ptr<Completion<T>>& completion) {
  return [completion, error = std::current_exception()] { completion->fail(error); };
}

std::string counted(int64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

const ClassDescriptor& TiledEvictable::static_class() {
  static const ClassDescriptor& descriptor = make_class();
  return descriptor;
}

TiledEvictable::TiledEvictable(DType dtype, int64_t n, int64_t tile_slots,
                               std::shared_ptr<Carrier> fast_prototype,
                               std::shared_ptr<Carrier> slow_prototype,
                               std::optional<int64_t> resident_limit,
                               std::shared_ptr<MoveOperation> to_slow,
                               std::shared_ptr<MoveOperation> to_fast)
    : Carrier(std::move(dtype), true),
      tile_slots_(tile_slots),
      resident_limit_(resident_limit),
      fast_prototype_(std::move(fast_prototype)),
      slow_prototype_(std::move(slow_prototype)),
      to_slow_(std::move(to_slow)),
      to_fast_(std::move(to_fast)) {
  for (int64_t first = 0; first < n; first += tile_slots) {
    tile_sizes_.push_back(std::min(tile_slots, n - first));
  }
}

void TiledEvictable::require_tile_dtype(const DType& dtype) {
  if (!dtype.itemsize()) {
    throw TypeError("TiledEvictable: dtype " + dtype.name() +
                    " has no item size (tiles hold natively encoded items)");
  }
}

std::shared_ptr<TiledEvictable> TiledEvictable::create(DType dtype, std::optional<int64_t> n,
                                                       int64_t tile_slots,
                                                       std::shared_ptr<Carrier> fast_prototype,
                                                       std::shared_ptr<Carrier> slow_prototype,
                                                       std::optional<int64_t> resident_limit,
                                                       std::optional<std::vector<Value>> values) {
  require_tile_dtype(dtype);
  const int64_t slots = initial_slot_count("TiledEvictable", n, values);
  if (tile_slots < 1) {
    throw ValueError("TiledEvictable: tile_slots=" + std::to_string(tile_slots) +
                     " is not a positive slot count");
  }
  const int64_t tile_count = slots / tile_slots + (slots % tile_slots != 0 ? 1 : 0);
  if (tile_count > kMaxTiles) {
    throw ValueError("TiledEvictable: n=" + std::to_string(slots) +
                     " in tiles of tile_slots=" + std::to_string(tile_slots) + " makes " +
                     counted(tile_count, "tile") + ", more than " + std::to_string(kMaxTiles));
  }
  if (resident_limit && *resident_limit < 1) {
    throw ValueError("TiledEvictable: resident_limit=" + std::to_string(*resident_limit) +
                     " is not a positive tile count");
  }
  for (const auto& [role, prototype] :
       {std::pair{"fast", &fast_prototype}, std::pair{"slow", &slow_prototype}}) {
    if (!((*prototype)->dtype() == dtype)) {
      throw TypeError(std::string("TiledEvictable: the ") + role + " prototype " +
                      (*prototype)->label() + " has dtype " + (*prototype)->dtype().name() +
                      ", not " + dtype.name());
    }
    if ((*prototype)->has_foreign_storage()) {
      throw TypeError(std::string("TiledEvictable: the ") + role + " prototype " +
                      (*prototype)->label() +
                      " has foreign storage (its hooks run Python), which cannot be a part: a "
                      "composite runs its parts' storage under its own lock");
    }
  }
  const ClassDescriptor& fast = fast_prototype->carrier_class();
  const ClassDescriptor& slow = slow_prototype->carrier_class();
  std::shared_ptr<MoveOperation> to_slow = lowered_operation("TiledEvictable", fast, slow, dtype);
  std::shared_ptr<MoveOperation> to_fast = lowered_operation("TiledEvictable", slow, fast, dtype);
  std::vector<Value> converted;
  if (values) {
    converted.reserve(values->size());
    for (const Value& v : *values) converted.push_back(coerce(dtype, v));
  }
  std::shared_ptr<TiledEvictable> made(new TiledEvictable(
      dtype, slots, tile_slots, std::move(fast_prototype), std::move(slow_prototype),
      resident_limit, std::move(to_slow), std::move(to_fast)));
  std::vector<Tile> tiles;
  tiles.reserve(made->tile_sizes_.size());
  int64_t first = 0;
  for (const int64_t size : made->tile_sizes_) {
    std::shared_ptr<Carrier> tile =
        made->slow_prototype_->checked_new_like("TiledEvictable (a slow tile)");
    tile->allocate(size);
    if (values) {
      tile->write_range_values(0, std::span(converted).subspan(static_cast<std::size_t>(first),
                                                               static_cast<std::size_t>(size)));
    }
    tiles.push_back(Tile{std::move(tile), nullptr, false});
    first += size;
  }
  for (Tile& tile : tiles) made->take_ownership(*tile.slow);
  made->tiles_ = std::move(tiles);
  made->initialize_slots(slots);
  return made;
}

std::shared_ptr<Carrier> TiledEvictable::new_like() const {
  return create(dtype(), 0, tile_slots_, fast_prototype_, slow_prototype_, resident_limit_,
                std::nullopt);
}

std::vector<TiledEvictable::TileState> TiledEvictable::residency() const {
  std::lock_guard lock(mu_);
  std::vector<TileState> states;
  if (is_released()) return states;
  states.reserve(tiles_.size());
  for (const Tile& tile : tiles_) {
    states.push_back(tile.fast ? TileState::kResident : TileState::kEvicted);
  }
  return states;
}

std::vector<int64_t> TiledEvictable::use_order() const {
  std::lock_guard lock(mu_);
  return {used_.begin(), used_.end()};
}

template <class F>
void TiledEvictable::for_each_piece(int64_t first, int64_t count, F&& fn) const {
  while (count > 0) {
    const int64_t t = first / tile_slots_;
    const int64_t local = first - t * tile_slots_;
    const int64_t n = std::min(count, tile_sizes_[static_cast<std::size_t>(t)] - local);
    fn(t, local, n);
    first += n;
    count -= n;
  }
}

Carrier& TiledEvictable::holder(int64_t t) const {
  const Tile& tile = tiles_[static_cast<std::size_t>(t)];
  return tile.fast ? *tile.fast : *tile.slow;
}

OwnerPath TiledEvictable::writer(int64_t t) {
  Tile& tile = tiles_[static_cast<std::size_t>(t)];
  if (tile.fast) tile.dirty = true;
  return owner_path(holder(t));
}

Value TiledEvictable::do_read(int64_t slot) const {
  return holder(slot / tile_slots_).read(slot % tile_slots_);
}

void TiledEvictable::do_write(int64_t slot, const Value& coerced) {
  writer(slot / tile_slots_).write(slot % tile_slots_, coerced);
}

void TiledEvictable::do_allocate(int64_t) {
  throw RuntimeError("allocate: TiledEvictable does not support allocation");
}

void TiledEvictable::do_release() {
  // The tile carriers stay referenced until the TiledEvictable is destroyed:
  // the last reference to a Python subclass's carrier takes the GIL, which no
  // thread may wait for under this mutex.
  for (Tile& tile : tiles_) {
    if (tile.fast) owner_path(*tile.fast).release();
    owner_path(*tile.slow).release();
  }
  used_.clear();
}

void TiledEvictable::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  const std::size_t itemsize = *dtype().itemsize();
  for_each_piece(first, count, [&](int64_t t, int64_t local, int64_t n) {
    const std::size_t bytes = static_cast<std::size_t>(n) * itemsize;
    holder(t).read_range(local, n, std::span(out, bytes));
    out += bytes;
  });
}

void TiledEvictable::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  const std::size_t itemsize = *dtype().itemsize();
  for_each_piece(first, count, [&](int64_t t, int64_t local, int64_t n) {
    const std::size_t bytes = static_cast<std::size_t>(n) * itemsize;
    writer(t).write_range(local, std::span(in, bytes));
    in += bytes;
  });
}

void TiledEvictable::do_read_values(int64_t first, int64_t count, Value* out) const {
  for_each_piece(first, count, [&](int64_t t, int64_t local, int64_t n) {
    std::vector<Value> read = holder(t).read_range_values(local, n);
    std::move(read.begin(), read.end(), out);
    out += n;
  });
}

void TiledEvictable::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  for_each_piece(first, count, [&](int64_t t, int64_t local, int64_t n) {
    writer(t).write_range_values(local, std::span(coerced, static_cast<std::size_t>(n)));
    coerced += n;
  });
}

void TiledEvictable::check_tiles(const char* operation, const std::vector<int64_t>& tiles) const {
  std::lock_guard lock(mu_);
  require_live_locked(operation);
  for (const int64_t t : tiles) {
    if (t < 0 || t >= tile_count()) {
      throw IndexError(std::string(operation) + ": tile " + std::to_string(t) + " of " + label() +
                       " is outside its " + counted(tile_count(), "tile"));
    }
  }
}

void TiledEvictable::submit(std::function<Publish()> work) {
  std::lock_guard lock(queue_mu_);
  if (!queue_pin_) queue_pin_.emplace(pin("tile operations of " + label()));
  queue_.push_back(std::move(work));
  if (draining_) return;
  draining_ = true;
  process_pool().submit(
      [self = std::static_pointer_cast<TiledEvictable>(shared_from_this())] { self->drain(); });
}

void TiledEvictable::drain() {
  for (;;) {
    std::function<Publish()> work;
    {
      std::lock_guard lock(queue_mu_);
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    const Publish publish = work();
    bool last = false;
    {
      std::lock_guard lock(queue_mu_);
      if (queue_.empty()) {
        draining_ = false;
        queue_pin_.reset();  // ends the pin before the last outcome is visible
        last = true;
      }
    }
    publish();
    if (last) return;
  }
}

std::string TiledEvictable::transition_name(const char* what, int64_t t) const {
  return std::string(what) + " of tile " + std::to_string(t) + " of " + label();
}

void TiledEvictable::touch(int64_t t) {
  std::lock_guard lock(mu_);
  used_.remove(t);
  used_.push_back(t);
}

void TiledEvictable::load(int64_t t, const std::vector<bool>& keep) {
  for (;;) {
    int64_t victim = -1;
    {
      std::lock_guard lock(mu_);
      if (tiles_[static_cast<std::size_t>(t)].fast) return;
      if (!resident_limit_ || static_cast<int64_t>(used_.size()) < *resident_limit_) break;
      const auto it = std::find_if(used_.begin(), used_.end(),
                                   [&](int64_t u) { return !keep[static_cast<std::size_t>(u)]; });
      victim = it == used_.end() ? used_.front() : *it;
    }
    evict_tile(victim);
  }
  std::shared_ptr<Carrier> slow;
  {
    std::lock_guard lock(mu_);
    slow = tiles_[static_cast<std::size_t>(t)].slow;
  }
  std::shared_ptr<Carrier> fresh =
      fast_prototype_->checked_new_like("TiledEvictable (a fast tile)");
  lowered_transfer(*to_fast_, transition_name("load", t), slow, 0,
                   tile_sizes_[static_cast<std::size_t>(t)], fresh);
  take_ownership(*fresh);
  std::lock_guard lock(mu_);
  Tile& tile = tiles_[static_cast<std::size_t>(t)];
  tile.fast = std::move(fresh);
  tile.dirty = false;
  used_.push_back(t);
}

void TiledEvictable::evict_tile(int64_t t) {
  std::shared_ptr<Carrier> fast;
  std::shared_ptr<Carrier> slow;
  bool dirty = false;
  {
    std::lock_guard lock(mu_);
    const Tile& tile = tiles_[static_cast<std::size_t>(t)];
    if (!tile.fast) return;
    fast = tile.fast;
    slow = tile.slow;
    dirty = tile.dirty;
  }
  if (dirty) {
    lowered_transfer(*to_slow_, transition_name("eviction", t), fast, 0,
                     tile_sizes_[static_cast<std::size_t>(t)], slow);
  }
  {
    std::lock_guard lock(mu_);
    Tile& tile = tiles_[static_cast<std::size_t>(t)];
    tile.fast.reset();
    tile.dirty = false;
    used_.remove(t);
  }
  owner_path(*fast).release();
  relinquish_owned(*fast);
}

std::shared_ptr<const ProjectionCompletion> TiledEvictable::project(const Layout& layout,
                                                                    int64_t offset) {
  {
    std::lock_guard lock(mu_);
    require_live_locked("project");
  }
  const int64_t slots = this->slots();
  if (offset < 0) {
    throw ValueError("project: offset " + std::to_string(offset) + " of " + label() +
                     " is negative");
  }
  const int64_t cosize = layout.size() == 0 ? 0 : layout.cosize();
  if (layout.size() != 0 && (offset > slots || cosize > slots - offset)) {
    throw IndexError("project: the window " + layout.to_string() + " (cosize " +
                     std::to_string(cosize) + ") at offset " + std::to_string(offset) +
                     " leaves the slots of " + label() + ", which holds " + counted(slots, "slot"));
  }
  std::vector<bool> needed(static_cast<std::size_t>(tile_count()), false);
  int64_t needed_count = 0;
  RunPlan(layout, offset).for_each_run([&](int64_t first, int64_t count) {
    for (int64_t t = first / tile_slots_; t <= (first + count - 1) / tile_slots_; ++t) {
      if (!needed[static_cast<std::size_t>(t)]) {
        needed[static_cast<std::size_t>(t)] = true;
        ++needed_count;
      }
    }
  });
  if (resident_limit_ && needed_count > *resident_limit_) {
    throw ValueError("project: the window " + layout.to_string() + " at offset " +
                     std::to_string(offset) + " spans " + counted(needed_count, "tile") + " of " +
                     label() + ", more than its resident_limit of " +
                     std::to_string(*resident_limit_));
  }
  auto completion = std::make_shared<ProjectionCompletion>();
  submit([this, completion, layout, offset, needed = std::move(needed)]() -> Publish {
    try {
      for (std::size_t t = 0; t < needed.size(); ++t) {
        if (needed[t]) load(static_cast<int64_t>(t), needed);
      }
      for (std::size_t t = 0; t < needed.size(); ++t) {
        if (needed[t]) touch(static_cast<int64_t>(t));
      }
      const Layout compact(layout.shape());
      std::shared_ptr<CPU> out = CPU::uninitialized(dtype(), layout.size());
      read_locked("project", [&](const SlotReader& reader) {
        reader.gather(layout, offset, out->data(), compact);
      });
      return [completion, result = Tensor::make(std::move(out), compact)] {
        completion->succeed(result);
      };
    } catch (...) {
      return failed(completion);
    }
  });
  return completion;
}

std::shared_ptr<const ResidencyCompletion> TiledEvictable::make_resident(
    const std::vector<int64_t>& tiles) {
  check_tiles("make_resident", tiles);
  std::vector<bool> keep(static_cast<std::size_t>(tile_count()), false);
  std::vector<int64_t> order;
  for (const int64_t t : tiles) {
    if (!keep[static_cast<std::size_t>(t)]) order.push_back(t);
    keep[static_cast<std::size_t>(t)] = true;
  }
  if (resident_limit_ && static_cast<int64_t>(order.size()) > *resident_limit_) {
    throw ValueError("make_resident: " + counted(static_cast<int64_t>(order.size()), "tile") +
                     " of " + label() + " exceed its resident_limit of " +
                     std::to_string(*resident_limit_));
  }
  auto completion = std::make_shared<ResidencyCompletion>();
  submit([this, completion, keep = std::move(keep), order = std::move(order)]() -> Publish {
    try {
      for (const int64_t t : order) {
        load(t, keep);
        touch(t);
      }
      return [completion] { completion->succeed(std::monostate{}); };
    } catch (...) {
      return failed(completion);
    }
  });
  return completion;
}

std::shared_ptr<const ResidencyCompletion> TiledEvictable::evict(
    const std::vector<int64_t>& tiles) {
  check_tiles("evict", tiles);
  auto completion = std::make_shared<ResidencyCompletion>();
  submit([this, completion, tiles]() -> Publish {
    try {
      for (const int64_t t : tiles) evict_tile(t);
      return [completion] { completion->succeed(std::monostate{}); };
    } catch (...) {
      return failed(completion);
    }
  });
  return completion;
}

}  // namespace strideweave
