#include "strideweave/move/move_operation.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// A built-in's static descriptor: created once, never destroyed.
// A new instance of the built-in class Operation (every built-in's maker).
template <class Operation>
std::shared_ptr<MoveOperation> make(const ClassDescriptor&) {
  return std::make_shared<Operation>();
}

// The static descriptor of the built-in class Operation, created on first
// use and never destroyed (worker threads may still name it at exit).
template <class Operation>
const ClassDescriptor& builtin_operation_class(std::string name, const ClassDescriptor* parent,
                                               const ClassDescriptor* source,
                                               const ClassDescriptor* destination) {
  return *ClassDescriptor::move_operation(std::move(name), parent, source, destination,
                                          &make<Operation>)
              .release();
}

}  // namespace

MoveOperation::~MoveOperation() = default;

const ClassDescriptor& MoveOperation::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_operation_class<MoveOperation>("MoveOperation", nullptr, nullptr, nullptr);
  return descriptor;
}

void MoveOperation::check_pair(const ClassDescriptor& source_class,
                               const ClassDescriptor& destination_class) const {
  const ClassDescriptor& operation = operation_class();
  for (const auto& [side, pinned, given] :
       {std::tuple{"source", operation.pinned_source(), &source_class},
        std::tuple{"destination", operation.pinned_destination(), &destination_class}}) {
    if (pinned != nullptr && pinned != given) {
      throw TypeError("the move operation " + operation.name() + " requires a " + side +
                      " carrier of exact class " + pinned->name() + ", not " + given->name());
    }
  }
}

void MoveOperation::copy(const MoveTransfer&) {
  throw NotImplementedError("the move operation " + operation_class().name() +
                            " does not implement the copy hook _copy");
}

void MoveOperation::start(const MoveTransfer& transfer, TransferDone done) {
  copy(transfer);
  done();
}

bool MoveOperation::supports_dtype(const DType&) const { return true; }

namespace {

// Copies source slots offset + footprint(i) into destination slots
// footprint(i), for every i, as stored (`itemsize` bytes each), holding the
// source's lock, then the destination's through the lease: both carriers are
// pinned by this move, so no caller takes them in the other order.
void copy_stored(const MoveTransfer& transfer, const Layout& footprint, std::size_t itemsize) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const int64_t offset = source.offset;
  const int64_t count = transfer.element_count;
  if (count == 0) return;
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    transfer.destination_lease->write_locked([&](const SlotWriter& writer) {
      const std::byte* from = reader.host_range(offset, count);
      std::byte* to = writer.host_range(0, count);
      if (from != nullptr && to != nullptr) {
        copy_strided(from, footprint, 0, to, footprint, 0, itemsize);
        return;
      }
      std::vector<std::byte> buffer;  // one run, when neither side is host memory
      RunPlan(footprint, offset).for_each_run([&](int64_t first, int64_t run) {
        const auto at = static_cast<std::size_t>(first - offset) * itemsize;
        if (to != nullptr) {
          reader.read_range(first, run, to + at);
        } else if (from != nullptr) {
          writer.write_range(first - offset, run, from + at);
        } else {
          buffer.resize(static_cast<std::size_t>(run) * itemsize);
          reader.read_range(first, run, buffer.data());
          writer.write_range(first - offset, run, buffer.data());
        }
      });
    });
  });
}

// The element values of the slots `footprint` reaches from `offset`, from one
// snapshot, then written through the lease's value writes (abstract dtypes).
void copy_values(const MoveTransfer& transfer, const Layout& footprint) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const RunPlan plan(footprint, source.offset);
  std::vector<Value> image(static_cast<std::size_t>(plan.size()));
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    Value* cursor = image.data();
    plan.for_each_run([&](int64_t first, int64_t count) {
      reader.read_values(first, count, cursor);
      cursor += count;
    });
  });
  const Value* cursor = image.data();
  plan.for_each_run([&](int64_t first, int64_t count) {
    transfer.destination_lease->write_range_values(first - source.offset,
                                                   {cursor, static_cast<std::size_t>(count)});
    cursor += count;
  });
}

// The whole physical span [offset, offset + cosize), holes included.
void copy_span(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  copy_stored(transfer, Layout(transfer.element_count), *source.carrier->dtype().itemsize());
}

}  // namespace

void ElementwiseMoveOperation::copy(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const Layout footprint = storage_order(source.layout);
  if (const std::optional<std::size_t> itemsize = source.carrier->dtype().itemsize()) {
    copy_stored(transfer, footprint, *itemsize);
  } else {
    copy_values(transfer, footprint);
  }
}

void CpuToFileBackedMoveOperation::copy(const MoveTransfer& transfer) { copy_span(transfer); }

void FileBackedToCpuMoveOperation::copy(const MoveTransfer& transfer) { copy_span(transfer); }

void CpuToBlockDeviceMoveOperation::copy(const MoveTransfer& transfer) { copy_span(transfer); }

void BlockDeviceToCpuMoveOperation::copy(const MoveTransfer& transfer) { copy_span(transfer); }

// The Metal pairs ------------------------------------------------------------------

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

MetalMoveOperation::Submission CpuToMetalMoveOperation::submit(const MoveTransfer& transfer,
                                                               bool stage) const {
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

MetalMoveOperation::Submission MetalToCpuMoveOperation::submit(const MoveTransfer& transfer,
                                                               bool stage) const {
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

MetalMoveOperation::Submission MetalToMetalMoveOperation::submit(const MoveTransfer& transfer,
                                                                 bool stage) const {
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

const ClassDescriptor& CpuToMetalMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<CpuToMetalMoveOperation>(
      "CpuToMetalMoveOperation", &MoveOperation::static_class(), &CPU::static_class(),
      &Metal::static_class());
  return descriptor;
}

const ClassDescriptor& MetalToCpuMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<MetalToCpuMoveOperation>(
      "MetalToCpuMoveOperation", &MoveOperation::static_class(), &Metal::static_class(),
      &CPU::static_class());
  return descriptor;
}

const ClassDescriptor& MetalToMetalMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<MetalToMetalMoveOperation>(
      "MetalToMetalMoveOperation", &MoveOperation::static_class(), &Metal::static_class(),
      &Metal::static_class());
  return descriptor;
}

const ClassDescriptor& ElementwiseMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<ElementwiseMoveOperation>(
      "ElementwiseMoveOperation", &MoveOperation::static_class(), nullptr, nullptr);
  return descriptor;
}

const ClassDescriptor& CpuToFileBackedMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<CpuToFileBackedMoveOperation>(
      "CpuToFileBackedMoveOperation", &MoveOperation::static_class(), &CPU::static_class(),
      &FileBacked::static_class());
  return descriptor;
}

const ClassDescriptor& FileBackedToCpuMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<FileBackedToCpuMoveOperation>(
      "FileBackedToCpuMoveOperation", &MoveOperation::static_class(), &FileBacked::static_class(),
      &CPU::static_class());
  return descriptor;
}

const ClassDescriptor& CpuToBlockDeviceMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<CpuToBlockDeviceMoveOperation>(
      "CpuToBlockDeviceMoveOperation", &MoveOperation::static_class(), &CPU::static_class(),
      &BlockDeviceCarrier::static_class());
  return descriptor;
}

const ClassDescriptor& BlockDeviceToCpuMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<BlockDeviceToCpuMoveOperation>(
      "BlockDeviceToCpuMoveOperation", &MoveOperation::static_class(),
      &BlockDeviceCarrier::static_class(), &CPU::static_class());
  return descriptor;
}

namespace {

// The static descriptors of the built-in classes, the root first.
constexpr const ClassDescriptor& (*kBuiltinOperations[])() = {
    &MoveOperation::static_class,
    &ElementwiseMoveOperation::static_class,
    &CpuToFileBackedMoveOperation::static_class,
    &FileBackedToCpuMoveOperation::static_class,
    &CpuToBlockDeviceMoveOperation::static_class,
    &BlockDeviceToCpuMoveOperation::static_class,
    &CpuToMetalMoveOperation::static_class,
    &MetalToCpuMoveOperation::static_class,
    &MetalToMetalMoveOperation::static_class,
};

}  // namespace

std::span<const ClassDescriptor* const> builtin_move_operation_classes() {
  static const std::vector<const ClassDescriptor*> classes = [] {
    std::vector<const ClassDescriptor*> out;
    for (const auto& operation_class : kBuiltinOperations) out.push_back(&operation_class());
    return out;
  }();
  return classes;
}

}  // namespace strideweave
