#include "strideweave/move/metal_move_operation.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// The side of a Metal pair's transfer, as the exact class the operation
// pins (a subclass's pins may name others: TypeError naming the operation).
template <class C>
const C& side_of(const Carrier& carrier, const MoveOperation& operation, const char* side) {
  const auto* exact = dynamic_cast<const C*>(&carrier);
  if (exact == nullptr || &carrier.carrier_class() != &C::static_class()) {
    throw TypeError("the move operation " + operation.name() + " copies a " + side +
                    " carrier of exact class " + C::static_class().name() + ", not " +
                    carrier.carrier_class().name());
  }
  return *exact;
}

struct SpanBytes {
  int64_t offset;  // of the source's first slot
  int64_t bytes;   // of the whole span
};

SpanBytes span_bytes(const MoveTransfer& transfer, const Subtensor& source) {
  const auto itemsize = static_cast<int64_t>(*source.carrier->dtype().itemsize());
  return {source.offset * itemsize, transfer.element_count * itemsize};
}

// A Metal destination's staged value: a fresh device buffer, installed as the
// destination's buffer.
class StagedDeviceBuffer final : public StagedValue {
 public:
  StagedDeviceBuffer(device::BufferRef buffer, int64_t slots)
      : buffer_(std::move(buffer)), slots_(slots) {}
  int64_t slots() const override { return slots_; }
  void install(Lease& destination) override {
    dynamic_cast<Metal&>(destination.carrier()).install(destination, buffer_, slots_);
  }

 private:
  device::BufferRef buffer_;
  int64_t slots_;
};

// A CPU destination's staged value: fresh host storage, installed as the
// buffer of an empty destination (`adopt`) or copied into a sized one's first
// slots with one memcpy.
class StagedHostStorage final : public StagedValue {
 public:
  StagedHostStorage(CPU::Storage storage, bool adopt, int64_t destination_slots)
      : storage_(std::move(storage)), adopt_(adopt), destination_slots_(destination_slots) {}
  int64_t slots() const override { return adopt_ ? storage_.slots() : destination_slots_; }
  std::byte* data() const noexcept { return storage_.data(); }
  void install(Lease& destination) override {
    if (adopt_) {
      dynamic_cast<CPU&>(destination.carrier()).install(destination, std::move(storage_));
      return;
    }
    destination.write_locked([&](const SlotWriter& writer) {
      const auto count = storage_.slots();
      const auto bytes =
          static_cast<std::size_t>(count) * *destination.carrier().dtype().itemsize();
      std::memcpy(writer.host_range(0, count), storage_.data(), bytes);
    });
  }

 private:
  CPU::Storage storage_;
  bool adopt_;
  int64_t destination_slots_;
};

// Fresh device storage for a Metal destination's value: as many slots as the
// destination holds, at least the span's; slots beyond the span keep their
// values through a device copy from the old buffer, submitted first (`tail`).
struct DeviceStage {
  device::BufferRef buffer;
  int64_t slots;
  device::EventRef tail;
};

DeviceStage stage_device(const MoveTransfer& transfer, const Metal& destination,
                         const std::string& label) {
  const int64_t held = destination.slots();
  const int64_t slots = std::max(held, transfer.element_count);
  DeviceStage stage{Metal::allocate_storage(destination.dtype(), slots), slots, nullptr};
  if (held > transfer.element_count) {
    const auto itemsize = static_cast<int64_t>(destination.itemsize());
    const int64_t first = transfer.element_count * itemsize;
    stage.tail = device::copy(destination.queue(), destination.buffer("move"), first, stage.buffer,
                              first, (held - transfer.element_count) * itemsize, label);
  }
  return stage;
}

}  // namespace

void MetalMoveOperation::start(const MoveTransfer& transfer, TransferDone done) {
  if (transfer.element_count == 0) {
    done();
    return;
  }
  Submission submission = submit(transfer, transfer.staged != nullptr);
  if (transfer.staged != nullptr) *transfer.staged = std::move(submission.staged);
  submission.event->on_complete(
      [done = std::move(done), earlier = std::move(submission.earlier)](std::exception_ptr error) {
        // An earlier command buffer of the move completed before this one (the
        // queue runs in order); its failure fails the move.
        if (error == nullptr && earlier != nullptr) {
          try {
            earlier->wait();
          } catch (...) {
            error = std::current_exception();
          }
        }
        // Reported complete only after the device synchronized: nothing submitted
        // before the report is still pending (the spec's synchronization step).
        if (error == nullptr) {
          try {
            device::metal_queue().synchronize();
          } catch (...) {
            error = std::current_exception();
          }
        }
        done(std::move(error));
      });
}

void MetalMoveOperation::copy(const MoveTransfer& transfer) {
  if (transfer.element_count == 0) return;
  submit(transfer, false).event->wait();
  device::metal_queue().synchronize();
}

bool MetalMoveOperation::supports_dtype(const DType& dtype) const { return Metal::supports(dtype); }

template <>
auto CpuToMetalMoveOperation::submit(const MoveTransfer& transfer, bool stage) const -> Submission {
  const Subtensor& source = transfer.tensor->subtensor("move");
  side_of<CPU>(*source.carrier, *this, "source");
  const Metal& destination = side_of<Metal>(*transfer.destination, *this, "destination");
  const SpanBytes span = span_bytes(transfer, source);
  const std::byte* from = nullptr;
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    from = reader.host_range(source.offset, transfer.element_count);
  });
  // The move pins the source readable until its terminal commit, after this
  // upload completed: its bytes can neither change nor be freed meanwhile.
  if (stage) {
    DeviceStage target = stage_device(transfer, destination, name());
    device::EventRef event =
        device::upload(destination.queue(), from, target.buffer, 0, span.bytes, name());
    return {std::move(event), std::move(target.tail),
            std::make_shared<StagedDeviceBuffer>(std::move(target.buffer), target.slots)};
  }
  transfer.destination_lease->mark_written();  // the device may write it from now on
  return {
      device::upload(destination.queue(), from, destination.buffer("move"), 0, span.bytes, name()),
      nullptr, nullptr};
}

template <>
auto MetalToCpuMoveOperation::submit(const MoveTransfer& transfer, bool stage) const -> Submission {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const Metal& metal = side_of<Metal>(*source.carrier, *this, "source");
  side_of<CPU>(*transfer.destination, *this, "destination");
  const SpanBytes span = span_bytes(transfer, source);
  if (stage) {
    const int64_t held = transfer.destination->slots();
    auto staged = std::make_shared<StagedHostStorage>(
        CPU::allocate_storage(transfer.destination->dtype(), transfer.element_count), held == 0,
        held);
    // The staged storage stays alive, unread, until the move installs or drops
    // it, after this download completed.
    device::EventRef event = device::download(metal.queue(), metal.buffer("move"), span.offset,
                                              span.bytes, staged->data(), name());
    return {std::move(event), nullptr, std::move(staged)};
  }
  std::byte* to = nullptr;
  transfer.destination_lease->write_locked(
      [&](const SlotWriter& writer) { to = writer.host_range(0, transfer.element_count); });
  // The destination is pinned for writing until the commit: no other thread
  // reads or frees it while the download fills it.
  return {
      device::download(metal.queue(), metal.buffer("move"), span.offset, span.bytes, to, name()),
      nullptr, nullptr};
}

template <>
auto MetalToMetalMoveOperation::submit(const MoveTransfer& transfer, bool stage) const
    -> Submission {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const Metal& from = side_of<Metal>(*source.carrier, *this, "source");
  const Metal& to = side_of<Metal>(*transfer.destination, *this, "destination");
  const SpanBytes span = span_bytes(transfer, source);
  if (stage) {
    DeviceStage target = stage_device(transfer, to, name());
    device::EventRef event = device::copy(from.queue(), from.buffer("move"), span.offset,
                                          target.buffer, 0, span.bytes, name());
    return {std::move(event), std::move(target.tail),
            std::make_shared<StagedDeviceBuffer>(std::move(target.buffer), target.slots)};
  }
  transfer.destination_lease->mark_written();  // the device may write it from now on
  return {device::copy(from.queue(), from.buffer("move"), span.offset, to.buffer("move"), 0,
                       span.bytes, name()),
          nullptr, nullptr};
}

namespace {

// The class name of each pair.
template <class Source, class Destination>
constexpr const char* kPairName = nullptr;
template <>
constexpr const char* kPairName<CPU, Metal> = "CpuToMetalMoveOperation";
template <>
constexpr const char* kPairName<Metal, CPU> = "MetalToCpuMoveOperation";
template <>
constexpr const char* kPairName<Metal, Metal> = "MetalToMetalMoveOperation";

}  // namespace

template <class Source, class Destination>
const ClassDescriptor& MetalPairMoveOperation<Source, Destination>::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<MetalPairMoveOperation>(
      kPairName<Source, Destination>, &MoveOperation::static_class(), &Source::static_class(),
      &Destination::static_class());
  return descriptor;
}

template class MetalPairMoveOperation<CPU, Metal>;
template class MetalPairMoveOperation<Metal, CPU>;
template class MetalPairMoveOperation<Metal, Metal>;

}  // namespace strideweave
