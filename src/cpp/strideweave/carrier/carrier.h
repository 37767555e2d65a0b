// Carrier: one instance of storage for slots of one dtype (spec/carrier-storage).
//
// The base class owns the bookkeeping every tensor, export and move relies
// on: the version counter, release state, construction-time immutability and
// ownership. Subclasses implement storage through the protected do_* hooks,
// which the base calls only after its own checks.
//
// Thread safety: every public member may be called from any thread; state
// changes are serialized by the carrier's mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "strideweave/carrier/carrier_class.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/dtype/value.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

class Carrier;

// DLPack's device type for host memory (kDLCPU in strideweave/interop/dlpack.h).
inline constexpr int32_t kDLPackDeviceCPU = 1;

// What a carrier reports to DLPack export: the address its tensors' offsets
// are relative to and the DLPack device holding it.
struct DLPackInfo {
  uint64_t pointer = 0;
  int32_t device_type = 0;
  int32_t device_id = 0;
};

// A snapshot of (carrier identity, version).
class VersionToken {
 public:
  // True while the carrier is alive and still at the snapshot's version.
  bool is_current() const;
  uint64_t version() const noexcept { return version_; }
  uint64_t carrier_id() const noexcept { return carrier_id_; }
  friend bool operator==(const VersionToken& a, const VersionToken& b) noexcept {
    return a.carrier_id_ == b.carrier_id_ && a.version_ == b.version_;
  }

 private:
  friend class Carrier;
  VersionToken(std::weak_ptr<const Carrier> carrier, uint64_t carrier_id, uint64_t version)
      : carrier_(std::move(carrier)), carrier_id_(carrier_id), version_(version) {}

  std::weak_ptr<const Carrier> carrier_;
  uint64_t carrier_id_;
  uint64_t version_;
};

class Carrier : public std::enable_shared_from_this<Carrier> {
 public:
  virtual ~Carrier();
  Carrier(const Carrier&) = delete;
  Carrier& operator=(const Carrier&) = delete;

  // The descriptor of the root class of all carriers.
  static const CarrierClass& static_class();

  // The descriptor of this object's exact class.
  virtual const CarrierClass& carrier_class() const = 0;

  const DType& dtype() const noexcept { return dtype_; }

  // The number of slots; 0 for an empty or released carrier.
  int64_t slots() const;

  // A process-unique number naming this carrier in messages and tokens.
  uint64_t id() const noexcept { return id_; }

  // "CPU carrier #7": how messages name this carrier.
  std::string label() const;

  // The value in `slot`. Throws RuntimeError when released, IndexError naming
  // the slot and the capacity when out of range.
  Value read(int64_t slot) const;

  // Copies the values in slots offset + layout(i), for i in [0, size) in flat
  // order, into `dst`, each encoded as encode() does (itemsize bytes, packed).
  // The carrier's mutex is taken once for the whole copy; no version changes.
  // Throws TypeError naming the dtype when it is abstract (no encoding),
  // RuntimeError naming the carrier when released, and IndexError naming the
  // window and the slots when a layout of non-zero size leaves the slots.
  void gather(const Layout& layout, int64_t offset, std::byte* dst) const;

  // Stores `value` converted to dtype() in `slot` and increments the version.
  // Throws RuntimeError when not publicly mutable, IndexError for a slot out
  // of range, TypeError / ValueError when the dtype cannot represent `value`.
  // A failed write changes nothing.
  void write(int64_t slot, const Value& value);

  // Gives an empty carrier `n` zero slots and increments the version. Throws
  // RuntimeError when released, not publicly mutable, already holding slots or
  // when the class does not support allocation; ValueError for n < 0.
  void allocate(int64_t n);

  uint64_t version() const noexcept { return version_.load(); }
  VersionToken version_token() const;

  // Relinquishes the storage (freeing what the carrier owns) and marks the
  // carrier released. Idempotent; never changes the version.
  void release();
  bool is_released() const;

  // Neither constructed immutable, nor owned by another carrier, nor released.
  bool is_mutable() const;
  bool constructed_mutable() const noexcept { return constructed_mutable_; }

  // The carrier owning this one, or nullptr.
  std::shared_ptr<Carrier> owner() const;

  // Makes this carrier the owner of `other`. Throws ValueError when `other` is
  // this carrier, RuntimeError when it is released or already owned.
  void take_ownership(Carrier& other);

  // Ends this carrier's ownership of `other`; ValueError if it does not own it.
  void relinquish(Carrier& other);

  // A new, empty, publicly mutable, unowned carrier of the same exact class
  // and dtype. Valid on a released carrier.
  virtual std::shared_ptr<Carrier> new_like() const = 0;

  // The DLPack opt-in hook. The default throws BufferError naming the class.
  virtual DLPackInfo dlpack_info() const;

 protected:
  Carrier(DType dtype, bool mutable_);

  // Storage hooks, called with the carrier's mutex held and its checks done.
  virtual Value do_read(int64_t slot) const = 0;
  // Storage hook of gather. The default encodes do_read() slot by slot along
  // the layout's spans; host-addressable carriers copy the spans.
  virtual void do_gather(const Layout& layout, int64_t offset, std::byte* dst) const;
  virtual void do_write(int64_t slot, const Value& coerced) = 0;
  virtual void do_allocate(int64_t n) = 0;
  virtual void do_release() = 0;
  virtual bool supports_allocation() const { return true; }

  // For subclass constructors: set the initial slot count without a version bump.
  void initialize_slots(int64_t n);

  // Throws RuntimeError naming this carrier when it is released. Caller holds mu_.
  void require_live_locked(const char* operation) const;

  mutable std::mutex mu_;

 private:
  void require_publicly_mutable_locked(const char* operation) const;
  void require_slot_locked(int64_t slot) const;

  DType dtype_;
  uint64_t id_;
  bool constructed_mutable_;
  int64_t slots_ = 0;
  std::atomic<uint64_t> version_{0};
  // Written under mu_; read without it by is_released() and is_mutable().
  std::atomic<bool> released_{false};
  std::atomic<bool> owned_{false};  // owner_ is set
  std::weak_ptr<Carrier> owner_;
  std::vector<std::shared_ptr<Carrier>> owned_carriers_;
};

// For built-in constructors taking (n, values): the slot count, len(values)
// when values are given and n otherwise (0 when neither). Throws ValueError
// naming `carrier` for a negative n or an n that disagrees with len(values).
int64_t initial_slot_count(const char* carrier, std::optional<int64_t> n,
                           const std::optional<std::vector<Value>>& values);

}  // namespace strideweave
