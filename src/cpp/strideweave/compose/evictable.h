// Evictable: one carrier over two tiers it owns (spec/carrier-composition,
// "Evictable"). While resident the fast tier holds its values; evict() moves
// them into the slow tier and frees the fast one, promote() moves them back.
// Reads, writes, ranges, allocation and release work in either residency and
// count versions on the Evictable itself; a residency transition changes
// neither its values nor its version. Evictable is a built-in,
// definition-free carrier class; it keeps the default dlpack_info
// (BufferError naming Evictable) and exposes no host memory.
//
// The tiers: the Evictable owns both (carrier-storage's ownership), so their
// public entry points refuse writes and release; it writes, allocates and
// releases them through its owner paths. Transitions move values with the
// framework's lowered execution (move/lowered.h: the legacy registry's
// operation for the exact tier pair, synchronously, no public move), the
// operations for both directions checked and instantiated at construction.
//
// Thread safety: every member may be called from any thread. The storage
// hooks run under the Evictable's mutex and call the current tier's entry
// points (its owner path for writes), which take the tier's mutex: the
// nesting is Evictable -> tier only, and a tier never calls its owner
// (docs/threading.md). A transition pins the Evictable (readable, named
// "evict of Evictable carrier #N" / "promote of ..."), so writes, allocation,
// release, moves and other transitions fail meanwhile with RuntimeError
// naming it while reads continue; the tier transfer runs without the
// Evictable's mutex, and the swap of tiers at its end takes it once.
#pragma once

#include <memory>
#include <string>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/move/move_operation.h"

namespace strideweave {

class Evictable final : public Carrier {
 public:
  enum class Residency { kResident, kEvicted };

  // An Evictable over `fast` (holding the values: n = fast.slots()) and
  // `slow`. Checks, in order, changing nothing when one fails:
  //   each tier non-null (TypeError naming the argument); fast and slow
  //   distinct (ValueError); the same dtype (TypeError naming both tiers and
  //   dtypes); each tier live (RuntimeError), unowned (RuntimeError naming
  //   its owner), unpinned (RuntimeError naming the operation) and
  //   constructed mutable (RuntimeError), each message naming the tier and
  //   its argument; slow empty or holding exactly n slots (ValueError naming
  //   slow and both counts); the edges fast -> slow and slow -> fast with
  //   lowered_operation("Evictable", ...) (TypeError: a definition-backed
  //   class, a pinned operation not matching the pair, a class the factory
  //   cannot instantiate).
  // Then takes ownership of fast, then slow (a tier owned or pinned by then
  // makes it relinquish what it took and throw take_ownership's error).
  // Starts resident with the fast tier's values, version 0.
  static std::shared_ptr<Evictable> make(std::shared_ptr<Carrier> fast,
                                         std::shared_ptr<Carrier> slow);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // An empty Evictable over fast.new_like() and slow.new_like() (the current
  // tiers'), checked as make() checks. Valid on a released Evictable.
  std::shared_ptr<Carrier> new_like() const override;

  Residency residency() const;

  // The current fast and slow tiers (the fast one empty while evicted).
  std::shared_ptr<Carrier> fast() const;
  std::shared_ptr<Carrier> slow() const;

  // Resident -> evicted; nothing when already evicted (after the checks).
  // Pins the Evictable (RuntimeError naming it and the holder when it is
  // released or pinned), copies the n slots into the slow tier (allocated to
  // n when empty), makes an empty replacement with fast.new_like() (TypeError
  // when that is not an empty carrier of the fast tier's exact class and
  // dtype) and takes ownership of it, releases the fast tier through the
  // owner path and ends its ownership, and swaps the replacement in.
  // A failure before the swap (the transfer's exception propagates
  // unchanged, faults injected at kAllocation and kCopy included) leaves the
  // residency, the values and the version as they were (the slow tier's
  // slots unspecified).
  void evict();

  // Evicted -> resident; nothing when already resident (after the checks).
  // Pins the Evictable as evict() does and copies the n slots of the slow
  // tier into the fast tier (allocated to n when empty); the slow tier keeps
  // its slots, stale once the Evictable is written. Failure: as evict()
  // (the fast tier's slots unspecified).
  void promote();

  // For make() only: Tiers, make()'s checked arguments, is defined in evictable.cc.
  struct Tiers;
  explicit Evictable(Tiers tiers);

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;
  // The tiers hold the values: relinquish() of a tier is refused.
  bool keeps_owned_carriers() const override { return true; }

 private:
  // The tier holding the values now. Caller holds mu_.
  Carrier& current_locked() const;
  // The owner path of the current tier. Caller holds mu_.
  OwnerPath current_path_locked();
  // "evict of Evictable carrier #N".
  std::string transition_name(const char* transition) const;

  std::shared_ptr<Carrier> fast_;  // guarded by mu_
  std::shared_ptr<Carrier> slow_;  // guarded by mu_
  std::shared_ptr<MoveOperation> to_slow_;
  std::shared_ptr<MoveOperation> to_fast_;
  Residency residency_ = Residency::kResident;  // guarded by mu_
};

// "resident" or "evicted".
const char* residency_name(Evictable::Residency residency) noexcept;

}  // namespace strideweave
