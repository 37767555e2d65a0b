// Carrier: one instance of storage for slots of one dtype (spec/carrier-storage).
//
// The base class owns the bookkeeping every tensor, export and move relies
// on: the version counter, release state, construction-time immutability,
// ownership and pins. Subclasses implement storage through the protected
// do_* hooks, which the base calls only after its own checks.
//
// Entry points come in two granularities: one slot (read, write) and a range
// of consecutive slots (read_range, write_range in the dtype's native
// encoding; read_range_values, write_range_values as element values, for
// every dtype). A range call takes the carrier's lock once, checks liveness
// and mutability once and increments the version once.
//
// Three paths write slots: the public entry points; a Lease, the private
// path of the operation pinning the carrier; and an OwnerPath, the private
// path of the carrier owning it. Each refuses what the others exist for: the
// public path refuses owned and pinned carriers, a lease refuses nothing its
// own pin causes, an owner path refuses only what is not its ownership.
//
// Thread safety: every public member may be called from any thread; state
// changes are serialized by the carrier's mutex, a CarrierMutex: a core lock,
// or for a carrier with foreign storage (ForeignStorageCarrier) a gate.
// Storage hooks run under the mutex; they must not call back into the
// carrier, and only a foreign storage's hooks run Python (carrier_mutex.h). take_ownership and
// relinquish hold two carriers' mutexes at once, taken together by std::scoped_lock's
// deadlock-avoiding algorithm; the only other nestings are a move's copy, which holds its source's
// mutex while it writes its destination through Lease::write_locked, both carriers pinned by that
// move, and a binary math operation, which reads its operands under both mutexes taken in
// carrier-id order (docs/threading.md).
//
// The types that act on a carrier from outside have headers of their own, one
// concept each, and this one only forward-declares them: the lease of a pin
// (lease.h: Lease, Lease::Admission), the owner path (owner_path.h) and the
// slot access of the locked calls (slot_access.h: SlotReader, SlotWriter, and
// the definition of read_locked). Each includes this header, never the
// reverse; Carrier befriends them, as they reach its state and storage hooks.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strideweave/carrier/carrier_mutex.h"
#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/dtype/value.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

class Carrier;
class Lease;
class OwnerPath;
class SlotReader;
class SlotWriter;

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
  class Lease;
  class OwnerPath;
  class SlotReader;
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
  static const ClassDescriptor& static_class();

  // The descriptor of this object's exact class.
  virtual const ClassDescriptor& carrier_class() const = 0;

  const DType& dtype() const noexcept { return dtype_; }

  // The number of slots; 0 for an empty or released carrier.
  int64_t slots() const;

  // Whether the storage hooks run foreign code (ForeignStorageCarrier): the
  // mutex is then a gate, and code that holds another carrier's lock never
  // runs them (carrier_mutex.h).
  bool has_foreign_storage() const noexcept { return mu_.is_foreign_gate(); }

  // How a range write that may complete after its call returns reports its
  // outcome, once, from any thread: nullptr for success, or the failure
  // (SlotWriter::start_write_range).
  using WriteDone = std::function<void(std::exception_ptr)>;

  // A process-unique number naming this carrier in messages and tokens.
  uint64_t id() const noexcept { return id_; }

  // "CPU carrier #7": how messages name this carrier.
  std::string label() const;

  // The value in `slot`. Throws RuntimeError when released, IndexError naming
  // the slot and the capacity when out of range.
  Value read(int64_t slot) const;

  // Copies the values in slots offset + layout(i), for i in [0, size) in flat
  // order, into `dst`, each encoded as encode() does (itemsize bytes, packed).
  // The carrier's mutex is taken once for the whole copy, which goes through
  // the span walker (SlotReader::gather); no version changes.
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

  // Bulk range entry points. Range errors, checked in this order, after the
  // liveness (and, for writes, mutability) check:
  //   ValueError for count < 0 (or a byte span that is not whole items);
  //   IndexError naming the range and the capacity unless
  //   0 <= first <= first + count <= slots().
  // Encoded variants need a dtype with an item size (TypeError naming the
  // carrier and the dtype otherwise). A failed call changes nothing.

  // Copies slots [first, first + count) into `out` in native encoding
  // (count * itemsize bytes, ValueError otherwise). Never changes the version.
  void read_range(int64_t first, int64_t count, std::span<std::byte> out) const;

  // The same, into a new buffer allocated after the checks.
  std::vector<std::byte> read_range(int64_t first, int64_t count) const;

  // The values of slots [first, first + count); every dtype.
  std::vector<Value> read_range_values(int64_t first, int64_t count) const;

  // Stores the natively encoded items of `in` in slots [first, first + n),
  // n = in.size() / itemsize, and increments the version by exactly one (also
  // for n == 0). Throws RuntimeError when not publicly mutable and ValueError
  // naming the item for an encoded Bool that is neither 0 nor 1.
  void write_range(int64_t first, std::span<const std::byte> in);

  // Stores `values`, each converted to dtype(), in slots [first, first + n)
  // and increments the version by exactly one. Every value is converted
  // before any slot changes (the errors of coerce, naming the value).
  void write_range_values(int64_t first, std::span<const Value> values);

  // Calls fn(const SlotReader&) with the carrier's mutex held, after checking
  // that the carrier is live (RuntimeError naming `operation` otherwise): one
  // consistent snapshot of every slot read through the reader. `fn` must not
  // call back into this carrier or run Python. Never changes the version.
  // Defined in slot_access.h, with SlotReader.
  template <class F>
  void read_locked(const char* operation, F&& fn) const;

  uint64_t version() const noexcept { return version_.load(); }
  VersionToken version_token() const;

  // The number of successful moves this carrier received as their destination
  // (spec/carrier-storage, "A successful move changes neither carrier's
  // version"): 0 at construction, incremented by exactly one at each such
  // move's terminal commit (Lease::commit_move), by nothing else. A move
  // changes no version, so a reader that must notice a new value arriving by
  // a move (autograd::SavedTensor) keeps this count with the version.
  uint64_t moves_received() const noexcept { return moves_received_.load(); }

  // Relinquishes the storage (freeing what the carrier owns) and marks the
  // carrier released. Idempotent on a released carrier; never changes the
  // version. Throws RuntimeError naming the carrier and the operation holding
  // the pin while pinned, and naming the carrier and its owner while owned
  // (its owner releases it through its owner path); the carrier then stays
  // live.
  void release();
  bool is_released() const;

  // Neither constructed immutable, nor owned by another carrier, nor pinned,
  // nor released.
  bool is_mutable() const;

  // Whether a pin lets others read the pinned carrier.
  enum class PinAccess {
    kReadable,  // reads continue (a move's source: its value does not change)
    kWriting,   // reads are refused on every thread the pin does not admit
                // (a move's destination: its slots are incomplete until it ends)
  };

  // Pins this carrier for `operation` (named in every refusal while pinned)
  // and returns the lease through which the operation writes it. While the
  // lease is active, write, write_range, write_range_values, allocate,
  // release, take_ownership of this carrier and owner paths fail with
  // RuntimeError naming this carrier and `operation`; reads continue, or for
  // PinAccess::kWriting, read, read_range, read_range_values, gather, every
  // read_locked() and require_not_being_written() fail the same way except on a thread
  // holding an admission of the pin (Lease::admit). Throws RuntimeError when
  // released or already pinned (naming the holder). The carrier must be owned
  // by a std::shared_ptr; the lease keeps it alive.
  Lease pin(std::string operation, PinAccess access = PinAccess::kReadable);

  // Throws RuntimeError naming `operation` when this carrier is pinned for
  // writing (PinAccess::kWriting) by an operation that has not admitted the
  // calling thread: for readers outside the entry points (DLPack export).
  void require_not_being_written(const char* operation) const;

  // The operation pinning this carrier, or nullopt.
  std::optional<std::string> pinned_by() const;

  // The private write path of this carrier's owner for `owned`. Throws
  // ValueError when this carrier does not own `owned`. Each call through the
  // path re-checks the ownership (RuntimeError once it ended).
  OwnerPath owner_path(Carrier& owned);

  bool constructed_mutable() const noexcept { return constructed_mutable_; }

  // The carrier owning this one, or nullptr.
  std::shared_ptr<Carrier> owner() const;

  // Makes this carrier the owner of `other`. Throws ValueError when `other` is
  // this carrier or owns it (directly or through the carriers it owns: an
  // ownership cycle), RuntimeError when it is released, pinned or already
  // owned. A refused call changes no ownership.
  void take_ownership(Carrier& other);

  // Ends this carrier's ownership of `other`; ValueError if it does not own it,
  // then RuntimeError naming both when this carrier keeps what it owns (a
  // composite, whose parts hold its values: keeps_owned_carriers()).
  void relinquish(Carrier& other);

  // A new, empty, publicly mutable, unowned carrier of the same exact class
  // and dtype. Valid on a released carrier.
  virtual std::shared_ptr<Carrier> new_like() const = 0;

  // new_like(), checked before the library uses what it returned (a Python
  // subclass's override may return anything): throws TypeError naming
  // `purpose`, new_like, this carrier and what it returned unless that is a
  // live, empty, publicly mutable carrier of this exact class and dtype.
  std::shared_ptr<Carrier> checked_new_like(const char* purpose) const;

  // The DLPack opt-in hook. The default throws BufferError naming the class.
  // An override that acts on its carrier, or may block, must also override
  // dlpack_info_runs_caller_code() to return true.
  virtual DLPackInfo dlpack_info() const;

  // Whether dlpack_info() may run code the library does not control (a
  // Python subclass's override, which may release, pin or reallocate the
  // carrier): DLPack export then runs it between hold_storage_for_export and
  // check_export_hold, without the mutex. False for the built-ins, whose
  // export takes all three in one hold of the mutex (export_view).
  virtual bool dlpack_info_runs_caller_code() const { return false; }

  // What DLPack export reads of a carrier whose dlpack_info() runs no caller
  // code, in one hold of the mutex: the checks of hold_storage_for_export and
  // check_export_hold, the hold, and dlpack_info()'s answer (whose
  // BufferError it throws).
  struct ExportView {
    std::shared_ptr<const void> hold;
    DLPackInfo info;
  };
  ExportView export_view(const char* operation);

  // For DLPack export (interop/dlpack_export.h), before it runs the
  // dlpack_info() hook: the refusal of require_not_being_written, else a hold
  // on the storage the carrier has now, which the export keeps until its
  // deleter runs. While a hold lives, the memory the storage occupies is never
  // recycled into another allocation, even after the carrier lets it go
  // (released, moved from, its buffer replaced, destroyed): it is retired
  // instead (util/host_buffer.h). Null for a carrier without host storage the
  // library allocated (the default), and for a released carrier.
  std::shared_ptr<const void> hold_storage_for_export(const char* operation);

  // For DLPack export, after the dlpack_info() hook, with the hold taken
  // before it: the refusal of require_not_being_written; BufferError naming
  // `operation`, this carrier and its owner when the owner is a composite
  // (keeps_owned_carriers(): its parts' storage is the composite's to reuse
  // or release, so a part is never exported around it); BufferError naming
  // `operation` and this carrier when `hold` is not null and the carrier's
  // storage is no longer the held one (replaced while the export ran).
  // Changes nothing.
  void check_export_hold(const char* operation, const std::shared_ptr<const void>& hold) const;

  // The I/O constraints of the storage (spec/carrier-storage, surfaced to
  // providers through MoveTransfer): the byte alignment a host buffer
  // handed to its I/O needs, and the bytes of one block (its I/O covers whole
  // blocks at block-aligned file offsets). 1 and 1 for storage without a
  // constraint (the default).
  virtual int64_t io_alignment() const { return 1; }
  virtual int64_t io_block_size() const { return 1; }

 protected:
  Carrier(DType dtype, bool mutable_, CarrierMutex::Kind lock = CarrierMutex::Kind::kCore);

  // Storage hooks, called with the carrier's mutex held and its checks done
  // (slots in range, values coerced, encoded bytes validated).
  virtual Value do_read(int64_t slot) const = 0;
  virtual void do_write(int64_t slot, const Value& coerced) = 0;
  virtual void do_allocate(int64_t n) = 0;
  // do_allocate for a caller that writes every one of the n slots before
  // anything reads them (Lease::allocate_for_overwrite): the carrier may leave
  // them unzeroed, and returns whether it did. The default zeroes, as
  // do_allocate does, and returns false.
  virtual bool do_allocate_for_overwrite(int64_t n) {
    do_allocate(n);
    return false;
  }
  virtual void do_release() = 0;
  virtual bool supports_allocation() const { return true; }

  // Makes every slot written so far durable on the storage (Lease::sync);
  // called with the mutex held on a live carrier. The default does nothing
  // (storage without durability). Throws OSError naming the storage on failure.
  virtual void do_sync() {}

  // Range hooks: slots [first, first + count), count > 0, in native encoding
  // (only called for a dtype with an item size) or as element values.
  virtual void do_read_range(int64_t first, int64_t count, std::byte* out) const = 0;
  virtual void do_write_range(int64_t first, int64_t count, const std::byte* in) = 0;
  virtual void do_read_values(int64_t first, int64_t count, Value* out) const = 0;
  virtual void do_write_values(int64_t first, int64_t count, const Value* coerced) = 0;

  // do_write_range for a caller with nothing left to do after the write (a
  // move's last step: SlotWriter::start_write_range): the storage may finish
  // the write after the call returns and report through `done`, once, from
  // any thread; `in` is read before the call returns. A failure before the
  // write started may be thrown instead of reported. `done` may also run
  // before the call returns, with the mutex held, so it must not take this
  // carrier's lock. The default writes with do_write_range and reports
  // success.
  virtual void do_start_write_range(int64_t first, int64_t count, const std::byte* in,
                                    WriteDone done);

  // The storage as addressable host memory (slot i at itemsize * i), or
  // nullptr when the storage is not host memory. Valid while the mutex is
  // held; written in place only through a SlotWriter (Lease::write_locked).
  virtual std::byte* do_host_data() const { return nullptr; }

  // A hold on the storage for hold_storage_for_export, pointing at
  // do_host_data(), or null when the carrier keeps no host storage that the
  // library allocated (the default). Called with the mutex held.
  virtual std::shared_ptr<const void> do_hold_storage_locked() { return nullptr; }

  // For subclass constructors: set the initial slot count without a version bump.
  void initialize_slots(int64_t n);

  // Whether the public relinquish() refuses to end this carrier's ownership
  // of what it owns (a composite's parts); the default refuses nothing.
  virtual bool keeps_owned_carriers() const { return false; }

  // relinquish() without that refusal: a composite ending the ownership of a
  // part it replaced.
  void relinquish_owned(Carrier& other);

  // Throws RuntimeError naming this carrier when it is released. Caller holds mu_.
  void require_live_locked(const char* operation) const;
  // require_live_locked, then the refusal of require_not_being_written.
  void require_readable_locked(const char* operation) const;
  void require_not_being_written_locked(const char* operation) const;
  // DLPack export's refusal of a composite's part: BufferError naming
  // `operation`, this carrier and its owner when the owner keeps its parts.
  // Sets `owner`, for the caller to drop after the lock. Caller holds mu_.
  void refuse_composite_part_locked(const char* operation, std::shared_ptr<Carrier>& owner) const;

  // A core lock (docs/threading.md), under which no Python runs, or for
  // foreign storage a gate, under which only the storage hooks run Python.
  mutable CarrierMutex mu_;

 private:
  friend class Lease;
  friend class OwnerPath;
  friend class SlotReader;
  friend class SlotWriter;

  // Who is writing: the public entry points, the lease of pin `pin_id`, or
  // the owner `owner`.
  struct WritePath {
    enum class Kind { kPublic, kLease, kOwner } kind = Kind::kPublic;
    uint64_t pin_id = 0;
    const Carrier* owner = nullptr;
  };

  // Throws RuntimeError naming `operation`, this carrier and the reason when
  // `path` may not write now. Caller holds mu_. Stores the owner, if any, in
  // `owner`, which the caller must destroy only after unlocking: it may be the
  // owner's last reference, and destroying a carrier locks the carriers it owns
  // (and, for a Python subclass, takes the GIL).
  void require_writable_locked(const char* operation, const WritePath& path,
                               std::shared_ptr<Carrier>& owner) const;
  void require_slot_locked(int64_t slot) const;
  void require_range_locked(int64_t first, int64_t count) const;
  std::size_t require_itemsize(const char* operation) const;

  void write_via(const WritePath& path, int64_t slot, const Value& value);
  void write_range_via(const WritePath& path, int64_t first, std::span<const std::byte> in);
  void write_range_values_via(const WritePath& path, int64_t first, std::span<const Value> values);
  // `for_overwrite`: do_allocate_for_overwrite instead of do_allocate.
  void allocate_via(const WritePath& path, int64_t n, bool for_overwrite = false);
  void release_via(const WritePath& path);
  void relinquish_via(Carrier& other, bool is_public);
  void end_pin(uint64_t pin_id) noexcept;
  void release_pinned(uint64_t pin_id);
  void mark_pin_written(uint64_t pin_id);
  void commit_received_move(uint64_t pin_id);

  // `path`, or the lease path of the active pin when `path` is public and the
  // calling thread holds an admission of that pin. Caller holds mu_.
  WritePath effective_path_locked(const WritePath& path) const;
  // Counts one successful write through `path`: a version increment, or for
  // the active pin's lease, a mark that the pin wrote. Caller holds mu_.
  void count_write_locked(const WritePath& path);
  // Ends the active pin, incrementing the version when it wrote. Slots it
  // allocated unzeroed and never wrote (a move that failed before its
  // transfer wrote) are zeroed first, as allocate() would have left them.
  // Caller holds mu_.
  void end_pin_locked() noexcept;

  DType dtype_;
  uint64_t id_;
  bool constructed_mutable_;
  // Written under mu_; read without it by slots(), and as a plain value under it.
  std::atomic<int64_t> slots_{0};
  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> moves_received_{0};  // written under mu_
  // Written under mu_; read without it by is_released() and is_mutable().
  std::atomic<bool> released_{false};
  std::atomic<bool> owned_{false};   // owner_ is set
  std::atomic<bool> pinned_{false};  // pin_id_ != 0
  uint64_t pin_id_ = 0;              // the active pin; 0 when not pinned
  std::string pinned_by_;            // its operation
  bool pin_refuses_reads_ = false;   // it is a PinAccess::kWriting pin
  bool pin_wrote_ = false;           // a write through the active pin succeeded
  // The active pin allocated the slots unzeroed (do_allocate_for_overwrite)
  // and nothing was written since: a pin that ends so zeroes them first.
  bool pin_left_unzeroed_ = false;
  std::weak_ptr<Carrier> owner_;
  std::vector<std::shared_ptr<Carrier>> owned_carriers_;
};

// For built-in constructors taking (n, values): the slot count, len(values)
// when values are given and n otherwise (0 when neither). Throws ValueError
// naming `carrier` for a negative n or an n that disagrees with len(values).
int64_t initial_slot_count(const char* carrier, std::optional<int64_t> n,
                           const std::optional<std::vector<Value>>& values);

}  // namespace strideweave
