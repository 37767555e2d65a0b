#include "strideweave/compose/evictable.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/move/lowered.h"
#include "strideweave/util/error.h"

namespace strideweave {

struct Evictable::Tiers {
  std::shared_ptr<Carrier> fast;
  std::shared_ptr<Carrier> slow;
  std::shared_ptr<MoveOperation> to_slow;
  std::shared_ptr<MoveOperation> to_fast;
};

namespace {

// Throws the error naming `tier` (the argument `argument`) when it cannot
// become a tier: released, owned, pinned or constructed immutable.
void require_available(const Carrier& tier, const char* argument) {
  const std::string subject = std::string("Evictable: the ") + argument + " tier " + tier.label();
  if (tier.is_released()) throw RuntimeError(subject + " is released");
  if (const std::shared_ptr<Carrier> owner = tier.owner()) {
    throw RuntimeError(subject + " is owned by " + owner->label());
  }
  if (const std::optional<std::string> holder = tier.pinned_by()) {
    throw RuntimeError(subject + " is pinned by " + *holder);
  }
  if (!tier.constructed_mutable()) throw RuntimeError(subject + " was constructed immutable");
}

}  // namespace

const ClassDescriptor& Evictable::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_carrier_class("Evictable", &Carrier::static_class());
  return descriptor;
}

const char* residency_name(Evictable::Residency residency) noexcept {
  return residency == Evictable::Residency::kResident ? "resident" : "evicted";
}

std::shared_ptr<Evictable> Evictable::make(std::shared_ptr<Carrier> fast,
                                           std::shared_ptr<Carrier> slow) {
  if (fast == nullptr) throw TypeError("Evictable: the fast tier is None, not a carrier");
  if (slow == nullptr) throw TypeError("Evictable: the slow tier is None, not a carrier");
  if (fast == slow) {
    throw ValueError("Evictable: the fast and slow tiers are the same carrier " + fast->label());
  }
  if (fast->dtype() != slow->dtype()) {
    throw TypeError("Evictable: the fast tier " + fast->label() + " holds " + fast->dtype().name() +
                    " but the slow tier " + slow->label() + " holds " + slow->dtype().name());
  }
  require_available(*fast, "fast");
  require_available(*slow, "slow");
  for (const auto& [role, tier] : {std::pair{"fast", &fast}, std::pair{"slow", &slow}}) {
    if ((*tier)->has_foreign_storage()) {
      throw TypeError(std::string("Evictable: the ") + role + " tier " + (*tier)->label() +
                      " has foreign storage (its hooks run Python), which cannot be a part: a "
                      "composite runs its parts' storage under its own lock");
    }
  }
  const int64_t n = fast->slots();
  const int64_t slow_slots = slow->slots();
  if (slow_slots != 0 && slow_slots != n) {
    throw ValueError("Evictable: the slow tier " + slow->label() + " holds " +
                     std::to_string(slow_slots) + " slots; it must be empty or hold the " +
                     std::to_string(n) + " slots of the fast tier " + fast->label());
  }
  const ClassDescriptor& fast_class = fast->carrier_class();
  const ClassDescriptor& slow_class = slow->carrier_class();
  std::shared_ptr<MoveOperation> to_slow =
      lowered_operation("Evictable", fast_class, slow_class, fast->dtype());
  std::shared_ptr<MoveOperation> to_fast =
      lowered_operation("Evictable", slow_class, fast_class, fast->dtype());

  auto made =
      std::make_shared<Evictable>(Tiers{fast, slow, std::move(to_slow), std::move(to_fast)});
  made->take_ownership(*fast);
  try {
    made->take_ownership(*slow);
  } catch (...) {
    made->relinquish_owned(*fast);
    throw;
  }
  return made;
}

Evictable::Evictable(Tiers tiers)
    : Carrier(tiers.fast->dtype(), true),
      fast_(std::move(tiers.fast)),
      slow_(std::move(tiers.slow)),
      to_slow_(std::move(tiers.to_slow)),
      to_fast_(std::move(tiers.to_fast)) {
  initialize_slots(fast_->slots());
}

std::shared_ptr<Carrier> Evictable::new_like() const {
  std::shared_ptr<Carrier> fast;
  std::shared_ptr<Carrier> slow;
  {
    std::lock_guard lock(mu_);
    fast = fast_;
    slow = slow_;
  }
  return make(fast->checked_new_like("Evictable.new_like (the fast tier)"),
              slow->checked_new_like("Evictable.new_like (the slow tier)"));
}

Evictable::Residency Evictable::residency() const {
  std::lock_guard lock(mu_);
  return residency_;
}

std::shared_ptr<Carrier> Evictable::fast() const {
  std::lock_guard lock(mu_);
  return fast_;
}

std::shared_ptr<Carrier> Evictable::slow() const {
  std::lock_guard lock(mu_);
  return slow_;
}

std::string Evictable::transition_name(const char* transition) const {
  return std::string(transition) + " of " + label();
}

void Evictable::evict() {
  const std::string name = transition_name("evict");
  Lease pinned = pin(name);
  std::shared_ptr<Carrier> fast;
  std::shared_ptr<Carrier> slow;
  {
    std::lock_guard lock(mu_);
    if (residency_ == Residency::kEvicted) return;
    fast = fast_;
    slow = slow_;
  }
  lowered_transfer(*to_slow_, name, fast, 0, slots(), slow);
  std::shared_ptr<Carrier> replacement = fast->checked_new_like("Evictable (the fast tier)");
  take_ownership(*replacement);
  try {
    std::lock_guard lock(mu_);
    owner_path(*fast).release();
    fast_ = replacement;
    residency_ = Residency::kEvicted;
  } catch (...) {
    relinquish_owned(*replacement);
    throw;
  }
  relinquish_owned(*fast);
}

void Evictable::promote() {
  const std::string name = transition_name("promote");
  Lease pinned = pin(name);
  std::shared_ptr<Carrier> fast;
  std::shared_ptr<Carrier> slow;
  {
    std::lock_guard lock(mu_);
    if (residency_ == Residency::kResident) return;
    fast = fast_;
    slow = slow_;
  }
  lowered_transfer(*to_fast_, name, slow, 0, slots(), fast);
  std::lock_guard lock(mu_);
  residency_ = Residency::kResident;
}

Carrier& Evictable::current_locked() const {
  return residency_ == Residency::kResident ? *fast_ : *slow_;
}

OwnerPath Evictable::current_path_locked() { return owner_path(current_locked()); }

Value Evictable::do_read(int64_t slot) const { return current_locked().read(slot); }

void Evictable::do_write(int64_t slot, const Value& coerced) {
  current_path_locked().write(slot, coerced);
}

void Evictable::do_allocate(int64_t n) { current_path_locked().allocate(n); }

void Evictable::do_release() {
  owner_path(*fast_).release();
  owner_path(*slow_).release();
}

void Evictable::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  const auto bytes = static_cast<std::size_t>(count) * *dtype().itemsize();
  current_locked().read_range(first, count, std::span<std::byte>(out, bytes));
}

void Evictable::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  const auto bytes = static_cast<std::size_t>(count) * *dtype().itemsize();
  current_path_locked().write_range(first, std::span<const std::byte>(in, bytes));
}

void Evictable::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<Value> values = current_locked().read_range_values(first, count);
  std::move(values.begin(), values.end(), out);
}

void Evictable::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  current_path_locked().write_range_values(
      first, std::span<const Value>(coerced, static_cast<std::size_t>(count)));
}

}  // namespace strideweave
