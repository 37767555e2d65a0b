#include "strideweave/carrier/carrier.h"

#include <algorithm>
#include <utility>

#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {
std::atomic<uint64_t> next_carrier_id{1};
}  // namespace

bool VersionToken::is_current() const {
  const std::shared_ptr<const Carrier> carrier = carrier_.lock();
  return carrier != nullptr && carrier->version() == version_;
}

Carrier::Carrier(DType dtype, bool mutable_, CarrierMutex::Kind lock)
    : mu_(*this, lock),
      dtype_(std::move(dtype)),
      id_(next_carrier_id++),
      constructed_mutable_(mutable_) {}

void Carrier::do_start_write_range(int64_t first, int64_t count, const std::byte* in,
                                   WriteDone done) {
  do_write_range(first, count, in);
  done(nullptr);
}

Carrier::~Carrier() {
  // Carriers this one owned outlive it unowned.
  for (const std::shared_ptr<Carrier>& owned : owned_carriers_) {
    std::lock_guard lock(owned->mu_);
    owned->owner_.reset();
    owned->owned_ = false;
  }
}

const ClassDescriptor& Carrier::static_class() {
  static const ClassDescriptor& descriptor = builtin_carrier_class("Carrier", nullptr);
  return descriptor;
}

int64_t Carrier::slots() const { return slots_.load(std::memory_order_acquire); }

std::string Carrier::label() const {
  return carrier_class().name() + " carrier #" + std::to_string(id_);
}

void Carrier::require_live_locked(const char* operation) const {
  if (released_) {
    throw RuntimeError(std::string(operation) + " on " + label() + ", which is released");
  }
}

void Carrier::require_readable_locked(const char* operation) const {
  require_live_locked(operation);
  require_not_being_written_locked(operation);
}

void Carrier::require_not_being_written_locked(const char* operation) const {
  if (!pin_refuses_reads_ || Lease::Admission::held(this, pin_id_)) return;
  throw RuntimeError(std::string(operation) + " on " + label() + ", which is pinned by " +
                     pinned_by_ + " while it writes the carrier");
}

void Carrier::require_not_being_written(const char* operation) const {
  std::lock_guard lock(mu_);
  require_not_being_written_locked(operation);
}

std::shared_ptr<const void> Carrier::hold_storage_for_export(const char* operation) {
  std::lock_guard lock(mu_);
  require_not_being_written_locked(operation);
  return released_ ? nullptr : do_hold_storage_locked();
}

void Carrier::refuse_composite_part_locked(const char* operation,
                                           std::shared_ptr<Carrier>& owner) const {
  owner = owner_.lock();
  if (owner && owner->keeps_owned_carriers()) {
    throw BufferError(std::string(operation) + ": " + label() + " is owned by " + owner->label() +
                      ", a composite that may reuse or release its storage; a composite's part "
                      "is not exported");
  }
}

Carrier::ExportView Carrier::export_view(const char* operation) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  require_not_being_written_locked(operation);
  ExportView view{released_ ? nullptr : do_hold_storage_locked(), dlpack_info()};
  refuse_composite_part_locked(operation, owner);
  return view;
}

void Carrier::check_export_hold(const char* operation,
                                const std::shared_ptr<const void>& hold) const {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  require_not_being_written_locked(operation);
  refuse_composite_part_locked(operation, owner);
  if (hold && do_host_data() != hold.get()) {
    throw BufferError(std::string(operation) + ": the storage of " + label() +
                      " was replaced while the export ran; nothing is exported");
  }
}

void Carrier::require_writable_locked(const char* operation, const WritePath& path,
                                      std::shared_ptr<Carrier>& owner) const {
  require_live_locked(operation);
  const bool own_lease = path.kind == WritePath::Kind::kLease && path.pin_id == pin_id_;
  if (pin_id_ != 0 && !own_lease) {
    throw RuntimeError(std::string(operation) + " on " + label() + ", which is pinned by " +
                       pinned_by_);
  }
  if (!constructed_mutable_) {
    throw RuntimeError(std::string(operation) + " on " + label() +
                       ", which was constructed immutable");
  }
  owner = owner_.lock();
  if (path.kind == WritePath::Kind::kPublic && owner) {
    throw RuntimeError(std::string(operation) + " on " + label() + ", which is owned by " +
                       owner->label());
  }
  if (path.kind == WritePath::Kind::kOwner && owner.get() != path.owner) {
    throw RuntimeError(std::string(operation) + " through the owner path of " +
                       path.owner->label() + " on " + label() + ", which it no longer owns");
  }
}

void Carrier::require_slot_locked(int64_t slot) const {
  if (slot < 0 || slot >= slots_) {
    throw IndexError("slot " + std::to_string(slot) + " is out of range for " + label() + " with " +
                     std::to_string(slots_) + " slots");
  }
}

void Carrier::require_range_locked(int64_t first, int64_t count) const {
  if (count < 0) {
    throw ValueError("range count " + std::to_string(count) + " is negative for " + label());
  }
  if (first < 0 || first > slots_ || count > slots_ - first) {
    throw IndexError("slots [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                     std::to_string(count) + ") are out of range for " + label() + " with " +
                     std::to_string(slots_) + " slots");
  }
}

std::size_t Carrier::require_itemsize(const char* operation) const {
  const std::optional<std::size_t> size = dtype_.itemsize();
  if (!size) {
    throw TypeError(std::string(operation) + " on " + label() + ": its dtype " + dtype_.name() +
                    " has no native encoding; use element values");
  }
  return *size;
}

Value Carrier::read(int64_t slot) const {
  std::lock_guard lock(mu_);
  require_readable_locked("read");
  require_slot_locked(slot);
  return do_read(slot);
}

void Carrier::write(int64_t slot, const Value& value) { write_via(WritePath{}, slot, value); }

void Carrier::gather(const Layout& layout, int64_t offset, std::byte* dst) const {
  if (!dtype_.itemsize()) {
    throw TypeError("gather on " + label() + ": the abstract dtype " + dtype_.name() +
                    " has no encoding");
  }
  read_locked("gather", [&](const SlotReader& reader) {
    if (layout.size() == 0) return;
    if (offset < 0 || offset > slots_ || layout.cosize() > slots_ - offset) {
      throw IndexError("gather window [" + std::to_string(offset) + ", " + std::to_string(offset) +
                       " + " + std::to_string(layout.cosize()) + ") exceeds the " +
                       std::to_string(slots_) + " slots of " + label());
    }
    reader.gather(layout, offset, dst, compact_col_major(layout.shape()));
  });
}

void Carrier::write_via(const WritePath& path, int64_t slot, const Value& value) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  const WritePath effective = effective_path_locked(path);
  require_writable_locked("write", effective, owner);
  require_slot_locked(slot);
  do_write(slot, coerce(dtype_, value));
  count_write_locked(effective);
}

void Carrier::read_range(int64_t first, int64_t count, std::span<std::byte> out) const {
  std::lock_guard lock(mu_);
  require_readable_locked("read_range");
  const std::size_t itemsize = require_itemsize("read_range");
  require_range_locked(first, count);
  if (out.size() != static_cast<std::size_t>(count) * itemsize) {
    throw ValueError("read_range: the output holds " + std::to_string(out.size()) +
                     " bytes, not the " + std::to_string(count) + " items of " +
                     std::to_string(itemsize) + " bytes requested");
  }
  if (count > 0) do_read_range(first, count, out.data());
}

std::vector<std::byte> Carrier::read_range(int64_t first, int64_t count) const {
  std::lock_guard lock(mu_);
  require_readable_locked("read_range");
  const std::size_t itemsize = require_itemsize("read_range");
  require_range_locked(first, count);
  std::vector<std::byte> out(static_cast<std::size_t>(count) * itemsize);
  if (count > 0) do_read_range(first, count, out.data());
  return out;
}

std::vector<Value> Carrier::read_range_values(int64_t first, int64_t count) const {
  std::lock_guard lock(mu_);
  require_readable_locked("read_range");
  require_range_locked(first, count);
  std::vector<Value> out(static_cast<std::size_t>(count));
  if (count > 0) do_read_values(first, count, out.data());
  return out;
}

void Carrier::write_range(int64_t first, std::span<const std::byte> in) {
  write_range_via(WritePath{}, first, in);
}

void Carrier::write_range_via(const WritePath& path, int64_t first, std::span<const std::byte> in) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  const WritePath effective = effective_path_locked(path);
  require_writable_locked("write_range", effective, owner);
  const std::size_t itemsize = require_itemsize("write_range");
  if (in.size() % itemsize != 0) {
    throw ValueError("write_range: " + std::to_string(in.size()) +
                     " bytes are not a whole number of " + std::to_string(itemsize) +
                     "-byte items of " + dtype_.name());
  }
  const auto count = static_cast<int64_t>(in.size() / itemsize);
  require_range_locked(first, count);
  validate_encoding(dtype_, in.data(), count);
  if (count > 0) do_write_range(first, count, in.data());
  count_write_locked(effective);
}

void Carrier::write_range_values(int64_t first, std::span<const Value> values) {
  write_range_values_via(WritePath{}, first, values);
}

void Carrier::write_range_values_via(const WritePath& path, int64_t first,
                                     std::span<const Value> values) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  const WritePath effective = effective_path_locked(path);
  require_writable_locked("write_range", effective, owner);
  const auto count = static_cast<int64_t>(values.size());
  require_range_locked(first, count);
  std::vector<Value> coerced;
  coerced.reserve(values.size());
  for (const Value& v : values) coerced.push_back(coerce(dtype_, v));
  if (count > 0) do_write_values(first, count, coerced.data());
  count_write_locked(effective);
}

void Carrier::allocate(int64_t n) { allocate_via(WritePath{}, n); }

void Carrier::allocate_via(const WritePath& path, int64_t n, bool for_overwrite) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  const WritePath effective = effective_path_locked(path);
  require_writable_locked("allocate", effective, owner);
  if (n < 0) throw ValueError("allocate: slot count " + std::to_string(n) + " is negative");
  if (!supports_allocation()) {
    throw RuntimeError("allocate: " + carrier_class().name() + " does not support allocation");
  }
  if (slots_ != 0) {
    throw RuntimeError("allocate on " + label() + ", which already holds " +
                       std::to_string(slots_) + " slots");
  }
  bool unzeroed = false;
  if (for_overwrite) {
    unzeroed = do_allocate_for_overwrite(n);
  } else {
    do_allocate(n);
  }
  slots_ = n;
  count_write_locked(effective);
  pin_left_unzeroed_ = unzeroed && effective.kind == WritePath::Kind::kLease;
}

void Carrier::initialize_slots(int64_t n) {
  // No lock: the release publishes the storage set up before it to any thread
  // that reads the count (slots(), or under the mutex).
  slots_.store(n, std::memory_order_release);
}

VersionToken Carrier::version_token() const {
  return VersionToken(weak_from_this(), id_, version_.load());
}

void Carrier::release() { release_via(WritePath{}); }

void Carrier::release_via(const WritePath& path) {
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(mu_);
  if (released_) return;
  if (pin_id_ != 0) {
    throw RuntimeError("release of " + label() + ", which is pinned by " + pinned_by_);
  }
  owner = owner_.lock();
  if (path.kind == WritePath::Kind::kPublic && owner) {
    throw RuntimeError("release of " + label() + ", which is owned by " + owner->label());
  }
  if (path.kind == WritePath::Kind::kOwner && owner.get() != path.owner) {
    throw RuntimeError("release through the owner path of " + path.owner->label() + " of " +
                       label() + ", which it no longer owns");
  }
  do_release();
  released_ = true;
  slots_ = 0;
}

bool Carrier::is_released() const { return released_.load(); }

bool Carrier::is_mutable() const {
  return !released_.load() && constructed_mutable_ && !owned_.load() && !pinned_.load();
}

Lease Carrier::pin(std::string operation, PinAccess access) {
  std::lock_guard lock(mu_);
  require_live_locked("pin");
  if (pin_id_ != 0) {
    throw RuntimeError(operation + " cannot pin " + label() + ", which is pinned by " + pinned_by_);
  }
  static std::atomic<uint64_t> next_pin_id{1};
  pin_id_ = next_pin_id++;
  pinned_by_ = operation;
  pin_refuses_reads_ = access == PinAccess::kWriting;
  pinned_ = true;
  return Lease(shared_from_this(), pin_id_, std::move(operation));
}

std::optional<std::string> Carrier::pinned_by() const {
  std::lock_guard lock(mu_);
  if (pin_id_ == 0) return std::nullopt;
  return pinned_by_;
}

void Carrier::end_pin(uint64_t pin_id) noexcept {
  std::lock_guard lock(mu_);
  if (pin_id_ == pin_id) end_pin_locked();
}

void Carrier::end_pin_locked() noexcept {
  if (pin_left_unzeroed_) {
    pin_left_unzeroed_ = false;
    try {
      do_allocate(slots_);  // fresh zeroed storage in place of the unwritten one
    } catch (...) {  // out of memory: the slots stay unspecified, as a failed move leaves them
    }
  }
  if (pin_wrote_) ++version_;
  pin_wrote_ = false;
  pin_id_ = 0;
  pinned_by_.clear();
  pin_refuses_reads_ = false;
  pinned_ = false;
}

void Carrier::release_pinned(uint64_t pin_id) {
  std::lock_guard lock(mu_);
  if (pin_id_ != pin_id) {
    throw RuntimeError("release through an ended lease of " + label());
  }
  do_release();
  released_ = true;
  slots_ = 0;
  pin_left_unzeroed_ = false;
  end_pin_locked();
}

void Carrier::mark_pin_written(uint64_t pin_id) {
  std::lock_guard lock(mu_);
  if (pin_id_ != pin_id) {
    throw RuntimeError("a write mark through an ended lease of " + label());
  }
  pin_wrote_ = true;
  pin_left_unzeroed_ = false;
}

void Carrier::commit_received_move(uint64_t pin_id) {
  std::lock_guard lock(mu_);
  if (pin_id_ != pin_id) {
    throw RuntimeError("a move's commit through an ended lease of " + label());
  }
  pin_wrote_ = false;          // the move's writes are no in-place mutation
  pin_left_unzeroed_ = false;  // its transfer wrote every slot
  ++moves_received_;
  end_pin_locked();
}

Carrier::WritePath Carrier::effective_path_locked(const WritePath& path) const {
  if (path.kind != WritePath::Kind::kPublic || pin_id_ == 0) return path;
  if (Lease::Admission::held(this, pin_id_)) {
    return WritePath{WritePath::Kind::kLease, pin_id_, nullptr};
  }
  return path;
}

void Carrier::count_write_locked(const WritePath& path) {
  pin_left_unzeroed_ = false;
  if (path.kind == WritePath::Kind::kLease && path.pin_id == pin_id_ && pin_id_ != 0) {
    pin_wrote_ = true;
  } else {
    ++version_;
  }
}

OwnerPath Carrier::owner_path(Carrier& owned) {
  std::lock_guard lock(owned.mu_);
  if (owned.owner_.lock().get() != this) {
    throw ValueError(label() + " does not own " + owned.label());
  }
  return OwnerPath(*this, owned.shared_from_this());
}

std::shared_ptr<Carrier> Carrier::checked_new_like(const char* purpose) const {
  std::shared_ptr<Carrier> made = new_like();
  const auto refuse = [&](const std::string& what) {
    throw TypeError(std::string(purpose) + ": new_like() of " + label() + " returned " + what +
                    ", not an empty " + carrier_class().name() + " carrier of " + dtype().name());
  };
  if (made == nullptr) refuse("None");
  if (&made->carrier_class() != &carrier_class() || made->dtype() != dtype()) {
    refuse(made->label() + " (" + made->carrier_class().name() + " of " + made->dtype().name() +
           ")");
  }
  if (made->is_released() || made->slots() != 0 || !made->is_mutable()) {
    refuse(made->label() + ", which is " +
           (made->is_released()  ? std::string("released")
            : made->slots() != 0 ? "holding " + std::to_string(made->slots()) + " slots"
                                 : std::string("not publicly mutable")));
  }
  return made;
}

std::shared_ptr<Carrier> Carrier::owner() const {
  if (!owned_.load()) return nullptr;  // as of this call, as the locked answer would be
  std::lock_guard lock(mu_);
  return owner_.lock();
}

namespace {

// Serializes the calls that add an ownership edge, so that two concurrent
// calls cannot close a cycle between them. Taken before any carrier's mutex
// and never while holding one (docs/threading.md). Never destroyed.
CoreMutex& ownership_edges_mu() {
  static auto* mu = new CoreMutex();
  return *mu;
}

}  // namespace

namespace {

// Ownership calls take the ownership-edge mutex, then wait for the two
// carriers' mutexes. A Python carrier's storage method (a thread holding a
// gate) must not: another thread may hold the edge mutex while it waits for
// that gate (carrier_mutex.h).
void require_no_gate_held(const char* call, const Carrier& carrier) {
  if (CarrierMutex::gates_held() > 0) {
    throw RuntimeError(std::string(call) + " on " + carrier.label() +
                       " from a Python carrier's storage method, which must not change "
                       "ownership");
  }
}

}  // namespace

void Carrier::take_ownership(Carrier& other) {
  if (&other == this) throw ValueError(label() + " cannot take ownership of itself");
  require_no_gate_held("take_ownership", *this);
  const std::scoped_lock edges(ownership_edges_mu());
  // Refuses a cycle: `other` owning this carrier, directly or through the
  // carriers it owns. Reads one owner at a time, each under its own lock.
  for (std::shared_ptr<Carrier> up = owner(); up != nullptr; up = up->owner()) {
    if (up.get() == &other) {
      throw ValueError(label() + " cannot take ownership of " + other.label() + ", which owns " +
                       label() +
                       " (directly or through the carriers it owns): ownership cannot form a "
                       "cycle");
    }
  }
  std::shared_ptr<Carrier> current;  // dropped after the locks: it may be the last reference
  std::scoped_lock lock(mu_, other.mu_);
  if (other.released_) {
    throw RuntimeError(label() + " cannot take ownership of " + other.label() +
                       ", which is released");
  }
  if (other.pin_id_ != 0) {
    throw RuntimeError(label() + " cannot take ownership of " + other.label() +
                       ", which is pinned by " + other.pinned_by_);
  }
  current = other.owner_.lock();
  if (current) {
    throw RuntimeError(label() + " cannot take ownership of " + other.label() +
                       ", which is owned by " + current->label());
  }
  other.owner_ = weak_from_this();
  other.owned_ = true;
  owned_carriers_.push_back(other.shared_from_this());
}

void Carrier::relinquish(Carrier& other) { relinquish_via(other, true); }

void Carrier::relinquish_owned(Carrier& other) { relinquish_via(other, false); }

void Carrier::relinquish_via(Carrier& other, bool is_public) {
  if (is_public) require_no_gate_held("relinquish", *this);
  std::scoped_lock lock(mu_, other.mu_);
  const auto it =
      std::find_if(owned_carriers_.begin(), owned_carriers_.end(),
                   [&](const std::shared_ptr<Carrier>& c) { return c.get() == &other; });
  if (it == owned_carriers_.end()) {
    throw ValueError(label() + " does not own " + other.label());
  }
  if (is_public && keeps_owned_carriers()) {
    throw RuntimeError(label() + " keeps " + other.label() +
                       ", one of its parts: only it ends that ownership");
  }
  other.owner_.reset();
  other.owned_ = false;
  owned_carriers_.erase(it);
}

int64_t initial_slot_count(const char* carrier, std::optional<int64_t> n,
                           const std::optional<std::vector<Value>>& values) {
  if (n && *n < 0) {
    throw ValueError(std::string(carrier) + ": slot count n=" + std::to_string(*n) +
                     " is negative");
  }
  if (values) {
    const auto count = static_cast<int64_t>(values->size());
    if (n && *n != count) {
      throw ValueError(std::string(carrier) + ": n=" + std::to_string(*n) + " disagrees with the " +
                       std::to_string(count) + " values given");
    }
    return count;
  }
  return n.value_or(0);
}

DLPackInfo Carrier::dlpack_info() const {
  throw BufferError(carrier_class().name() + " does not support DLPack export");
}

}  // namespace strideweave
