// TiledEvictable: a carrier whose slots are split into tiles, each resident in
// a fast dependency carrier or evicted to a slow one (spec/carrier-composition,
// "TiledEvictable").
//
// Tiles. Slot s lies in tile s / tile_slots; every tile holds tile_slots slots
// except the last, which holds the rest. Each tile always has a slow carrier
// (a slow_prototype.new_like(), allocated to the tile's slots) and, while
// resident, a fast one (a fast_prototype.new_like()). Both are owned by the
// TiledEvictable. A resident tile's values are its fast carrier's (its slow
// carrier is stale once the tile is written); an evicted tile's are its slow
// carrier's. Tiles start evicted.
//
// Transitions. Loading a tile copies its slow carrier into a new fast one and
// evicting copies the fast carrier back into the slow one (skipped when the
// tile was not written since it was loaded) and drops the fast one, both with
// lowered_transfer (move/lowered.h), the legacy exact-pair operations of
// the configured classes. Each tile's transition is atomic: on failure the
// tile keeps its state and its values. At most resident_limit tiles are
// resident: loading one more evicts the least recently used first (a tile is
// used when loaded, projected or made resident). Transitions change neither
// the values nor the TiledEvictable's version.
//
// Tile operations (project, make_resident, evict) validate on the calling
// thread (errors raise there, nothing queued), then run on the process pool,
// one at a time in submission order per TiledEvictable. From submission until
// the last queued operation ends, the TiledEvictable is pinned for readable
// access ("tile operations of TiledEvictable carrier #7"): writes, release
// and moves fail with RuntimeError naming that pin; reads continue. An
// operation's outcome is its Completion's, recorded after the pin ended when
// it was the last one queued.
//
// Carrier entry points read and write the tile's current values (the fast
// carrier of a resident tile, the slow one of an evicted tile) without
// changing residency or use order; the storage is not host memory and
// allocate() is not supported. DLPack export is refused (the default
// dlpack_info).
//
// Movement. TiledEvictable is definition-backed: its CarrierDefinition,
// installed when the class is first named, declares the one route
// TiledEvictable -> CPU ("tiled-evictable/projection"), which copies the
// moved window's span through the destination's lease, and no elementwise
// fallback.
//
// Lock nesting (docs/threading.md): the TiledEvictable's mutex, then a tile's
// (storage hooks delegate to tiles; tiles never call their owner). The
// projection route holds the destination's mutex (its lease) around that
// nesting. The operation queue's own core lock is held only to queue work, to
// pin and to end the pin (then the TiledEvictable's mutex nests inside it);
// no transfer runs under any of them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/move/completion.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

// AwaitProjection's completion: one compact ordinary Tensor.
using ProjectionCompletion = Completion<std::shared_ptr<const Tensor>>;
// AwaitResidency's completion: no value (None).
using ResidencyCompletion = Completion<std::monostate>;

class TiledEvictable final : public Carrier {
 public:
  enum class TileState { kResident, kEvicted };

  // The most tiles one TiledEvictable has (each tile is one or two carriers).
  static constexpr int64_t kMaxTiles = int64_t{1} << 20;

  // A TiledEvictable of n slots (len(values) when values are given, zero
  // otherwise) in tiles of tile_slots slots over carriers made by the
  // prototypes' new_like(). Checks, in order, before making any tile:
  //   TypeError naming TiledEvictable and the dtype when it has no item size;
  //   ValueError naming the argument for n < 0, n disagreeing with values,
  //     tile_slots < 1, more than kMaxTiles tiles or resident_limit < 1;
  //   TypeError naming the prototype whose dtype is not `dtype`;
  //   the TypeError of lowered_operation for the edges fast -> slow and
  //     slow -> fast (a definition-backed class, an operation that refuses
  //     the pair);
  //   the conversion errors of the values.
  // Then makes the slow tiles (publicly: allocate, write the values) and takes
  // ownership of them; a failure there (OSError, MemoryError) leaves nothing
  // behind. The prototypes stay unowned and unchanged; new_like() may run
  // Python (call without any core lock held).
  static std::shared_ptr<TiledEvictable> create(DType dtype, std::optional<int64_t> n,
                                                int64_t tile_slots,
                                                std::shared_ptr<Carrier> fast_prototype,
                                                std::shared_ptr<Carrier> slow_prototype,
                                                std::optional<int64_t> resident_limit,
                                                std::optional<std::vector<Value>> values);

  // create()'s first check: TypeError naming TiledEvictable and `dtype`
  // unless it has an item size (for callers that make the prototypes first).
  static void require_tile_dtype(const DType& dtype);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // An empty TiledEvictable (no tiles) with the same dtype, tile size,
  // prototypes and limit.
  std::shared_ptr<Carrier> new_like() const override;

  int64_t tile_slots() const noexcept { return tile_slots_; }
  int64_t tile_count() const noexcept { return static_cast<int64_t>(tile_sizes_.size()); }
  std::optional<int64_t> resident_limit() const noexcept { return resident_limit_; }
  const ClassDescriptor& fast_class() const noexcept { return fast_prototype_->carrier_class(); }
  const ClassDescriptor& slow_class() const noexcept { return slow_prototype_->carrier_class(); }
  const std::shared_ptr<Carrier>& fast_prototype() const noexcept { return fast_prototype_; }
  const std::shared_ptr<Carrier>& slow_prototype() const noexcept { return slow_prototype_; }

  // Each tile's state, tile 0 first (empty once released).
  std::vector<TileState> residency() const;

  // The resident tiles, least recently used first.
  std::vector<int64_t> use_order() const;

  // Queues the projection of the window (layout, offset): it loads the
  // window's evicted tiles (in ascending order; the least recently used tiles
  // outside the window make room), marks the window's tiles used, then
  // completes with a new Tensor over a fresh CPU carrier in the compact
  // column-major layout of layout's shape whose element i is the value in
  // slot offset + layout(i). Raises here: RuntimeError when released or
  // pinned by another operation; ValueError for offset < 0; IndexError naming
  // the window and the slots when a layout of non-zero size leaves the slots;
  // ValueError naming both counts when the window spans more tiles than
  // resident_limit. A failed load fails the completion (the exception
  // lowered_transfer threw).
  std::shared_ptr<const ProjectionCompletion> project(const Layout& layout, int64_t offset);

  // Queues loading `tiles` (in the given order; duplicates once) and marks
  // them used; tiles outside `tiles` make room. Raises here: RuntimeError when
  // released or pinned by another operation; IndexError naming a tile outside
  // [0, tile_count); ValueError naming both counts for more distinct tiles
  // than resident_limit. A failed load fails the completion; tiles loaded
  // before it stay resident.
  std::shared_ptr<const ResidencyCompletion> make_resident(const std::vector<int64_t>& tiles);

  // Queues evicting `tiles` (evicted ones are skipped). Raises here as
  // make_resident does (no limit check). A failed eviction fails the
  // completion; that tile stays resident, tiles evicted before it stay
  // evicted.
  std::shared_ptr<const ResidencyCompletion> evict(const std::vector<int64_t>& tiles);

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  // Never called: supports_allocation() is false.
  void do_allocate(int64_t n) override;
  void do_release() override;
  // The tiles hold the values: relinquish() of a tile carrier is refused.
  bool keeps_owned_carriers() const override { return true; }
  bool supports_allocation() const override { return false; }
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;

 private:
  struct Tile {
    std::shared_ptr<Carrier> slow;  // always present
    std::shared_ptr<Carrier> fast;  // non-null while resident
    bool dirty = false;             // fast written since it was loaded
  };

  TiledEvictable(DType dtype, int64_t n, int64_t tile_slots,
                 std::shared_ptr<Carrier> fast_prototype, std::shared_ptr<Carrier> slow_prototype,
                 std::optional<int64_t> resident_limit, std::shared_ptr<MoveOperation> to_slow,
                 std::shared_ptr<MoveOperation> to_fast);

  // Calls fn(tile, holder, first, count) for each tile piece of slots
  // [first, first + count), `first` relative to the tile. Caller holds mu_.
  template <class F>
  void for_each_piece(int64_t first, int64_t count, F&& fn) const;
  // The carrier holding tile t's values. Caller holds mu_.
  Carrier& holder(int64_t t) const;
  // Where tile t is written (the owner path of its holder); marks a resident
  // tile dirty. Caller holds mu_.
  OwnerPath writer(int64_t t);

  // Throws RuntimeError when released, IndexError for a tile outside the tiles.
  void check_tiles(const char* operation, const std::vector<int64_t>& tiles) const;
  // What a tile operation returns once its work is done: records its outcome.
  using Publish = std::function<void()>;
  // Queues `work` after this TiledEvictable's earlier tile operations, pinning
  // it when nothing is queued (RuntimeError when pinned by another operation).
  // The pin ends after the last queued work, before its outcome is recorded,
  // so a caller woken by that outcome finds the TiledEvictable unpinned.
  void submit(std::function<Publish()> work);
  void drain();

  // Worker side, one operation at a time (never under mu_).
  void load(int64_t t, const std::vector<bool>& keep);
  void evict_tile(int64_t t);
  void touch(int64_t t);  // marks tile t used (resident)
  std::string transition_name(const char* what, int64_t t) const;

  int64_t tile_slots_;
  std::vector<int64_t> tile_sizes_;
  std::optional<int64_t> resident_limit_;
  std::shared_ptr<Carrier> fast_prototype_;
  std::shared_ptr<Carrier> slow_prototype_;
  std::shared_ptr<MoveOperation> to_slow_;  // the legacy operation fast -> slow
  std::shared_ptr<MoveOperation> to_fast_;  // the legacy operation slow -> fast

  // Guarded by mu_ (the Carrier mutex).
  std::vector<Tile> tiles_;
  std::list<int64_t> used_;  // resident tiles, least recently used first

  // The operation queue (see the file comment).
  CoreMutex queue_mu_;
  std::deque<std::function<Publish()>> queue_;
  bool draining_ = false;
  std::optional<Lease> queue_pin_;
};

}  // namespace strideweave
