#include "strideweave/move/move_operation.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/layout/runs.h"
#include "strideweave/util/error.h"

namespace strideweave {

MoveOperation::~MoveOperation() = default;

const ClassDescriptor& MoveOperation::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_operation_class<MoveOperation>("MoveOperation", nullptr, nullptr, nullptr);
  return descriptor;
}

void MoveOperation::check_pair(const ClassDescriptor& operation,
                               const ClassDescriptor& source_class,
                               const ClassDescriptor& destination_class) {
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

// copy_stored when either carrier has foreign storage, whose hooks never run
// while the thread holds another carrier's lock (carrier/carrier_mutex.h): each
// carrier is locked alone, the source's span is taken first, then written into
// the destination. Both carriers are pinned by this move, so neither changes
// in between, and a host buffer found under a carrier's lock stays in place
// (no release, no write, no allocation while pinned): it is used after the
// lock is let go instead of being copied. A foreign side makes one range call
// over the whole span (a destination's holes are read first and written back
// as they were); a foreign source read straight into a host destination covering
// the span skips the buffer too. With `done` (given for a foreign destination
// only), the destination's write is started and reports through it
// (SlotWriter::start_write_range); without, the copy is finished when this
// returns.
void copy_staged(const MoveTransfer& transfer, const Layout& footprint, std::size_t itemsize,
                 const TransferDone* done) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const int64_t offset = source.offset;
  const int64_t span = transfer.element_count;
  const auto bytes = static_cast<std::size_t>(span) * itemsize;
  const RunPlan plan(footprint, offset);
  const bool whole_span = plan.is_one_run() && plan.size() == span;
  Lease& destination = *transfer.destination_lease;
  const bool foreign_destination = destination.carrier().has_foreign_storage();

  if (!foreign_destination && whole_span) {
    // A foreign source into a destination whose host memory takes the span.
    std::byte* to = nullptr;
    destination.write_locked([&](const SlotWriter& writer) { to = writer.host_range(0, span); });
    if (to != nullptr) {
      source.carrier->read_locked(
          "move", [&](const SlotReader& reader) { reader.read_range(offset, span, to); });
      return;
    }
  }
  std::unique_ptr<std::byte[]> staged;  // uninitialized: only the runs are read from it
  const std::byte* from = nullptr;      // the source's span: its host memory or `staged`
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    if ((from = reader.host_range(offset, span)) != nullptr) return;
    staged.reset(new std::byte[bytes]);
    if (source.carrier->has_foreign_storage()) {
      reader.read_range(offset, span, staged.get());
    } else {
      plan.for_each_run([&](int64_t first, int64_t run) {
        reader.read_range(first, run, staged.get() + (first - offset) * itemsize);
      });
    }
    from = staged.get();
  });
  destination.write_locked([&](const SlotWriter& writer) {
    if (!foreign_destination) {
      if (std::byte* to = writer.host_range(0, span)) {
        parallel_copy_strided(from, footprint, 0, to, footprint, 0, itemsize);
        return;
      }
      plan.for_each_run([&](int64_t first, int64_t run) {
        writer.write_range(first - offset, run, from + (first - offset) * itemsize);
      });
      return;
    }
    std::unique_ptr<std::byte[]> merged;
    if (!whole_span) {
      merged.reset(new std::byte[bytes]);
      writer.read_range(0, span, merged.get());
      plan.for_each_run([&](int64_t first, int64_t run) {
        const auto at = static_cast<std::size_t>(first - offset) * itemsize;
        std::memcpy(merged.get() + at, from + at, static_cast<std::size_t>(run) * itemsize);
      });
    }
    const std::byte* in = whole_span ? from : merged.get();
    if (done != nullptr) {
      writer.start_write_range(0, span, in, *done);
    } else {
      writer.write_range(0, span, in);
    }
  });
}

// Copies source slots offset + footprint(i) into destination slots
// footprint(i), for every i, as stored (`itemsize` bytes each), holding the
// source's lock, then the destination's through the lease: both carriers are
// pinned by this move, so no caller takes them in the other order. With
// foreign storage on either side, copy_staged instead.
void copy_stored(const MoveTransfer& transfer, const Layout& footprint, std::size_t itemsize) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const int64_t offset = source.offset;
  const int64_t count = transfer.element_count;
  if (count == 0) return;
  if (source.carrier->has_foreign_storage() ||
      transfer.destination_lease->carrier().has_foreign_storage()) {
    copy_staged(transfer, footprint, itemsize, nullptr);
    return;
  }
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    transfer.destination_lease->write_locked([&](const SlotWriter& writer) {
      const std::byte* from = reader.host_range(offset, count);
      std::byte* to = writer.host_range(0, count);
      if (from != nullptr && to != nullptr) {
        parallel_copy_strided(from, footprint, 0, to, footprint, 0, itemsize);
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

}  // namespace

void ElementwiseMoveOperation::copy(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  // The source's own layout when it is its footprint already (a compact one
  // is): no copy of its modes on a small move's path.
  std::optional<Layout> ordered;
  if (!is_in_storage_order(source.layout)) ordered = storage_order(source.layout);
  const Layout& footprint = ordered ? *ordered : source.layout;
  if (const std::optional<std::size_t> itemsize = source.carrier->dtype().itemsize()) {
    copy_stored(transfer, footprint, *itemsize);
  } else {
    copy_values(transfer, footprint);
  }
}

void ElementwiseMoveOperation::start(const MoveTransfer& transfer, TransferDone done) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const std::optional<std::size_t> itemsize = source.carrier->dtype().itemsize();
  if (!itemsize || transfer.element_count == 0 ||
      !transfer.destination_lease->carrier().has_foreign_storage()) {
    MoveOperation::start(transfer, std::move(done));
    return;
  }
  copy_staged(transfer, storage_order(source.layout), *itemsize, &done);
}

template <class Source, class Destination>
void SpanMoveOperation<Source, Destination>::copy(const MoveTransfer& transfer) {
  // The whole physical span [offset, offset + cosize), holes included.
  copy_stored(transfer, Layout(transfer.element_count), *transfer.source->dtype().itemsize());
}

const ClassDescriptor& ElementwiseMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<ElementwiseMoveOperation>(
      "ElementwiseMoveOperation", &MoveOperation::static_class(), nullptr, nullptr);
  return descriptor;
}

namespace {

// The class name of each span pair.
template <class Source, class Destination>
constexpr const char* kSpanPairName = nullptr;
template <>
constexpr const char* kSpanPairName<CPU, FileBacked> = "CpuToFileBackedMoveOperation";
template <>
constexpr const char* kSpanPairName<FileBacked, CPU> = "FileBackedToCpuMoveOperation";
template <>
constexpr const char* kSpanPairName<CPU, BlockDeviceCarrier> = "CpuToBlockDeviceMoveOperation";
template <>
constexpr const char* kSpanPairName<BlockDeviceCarrier, CPU> = "BlockDeviceToCpuMoveOperation";

}  // namespace

template <class Source, class Destination>
const ClassDescriptor& SpanMoveOperation<Source, Destination>::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class<SpanMoveOperation>(
      kSpanPairName<Source, Destination>, &MoveOperation::static_class(), &Source::static_class(),
      &Destination::static_class());
  return descriptor;
}

template class SpanMoveOperation<CPU, FileBacked>;
template class SpanMoveOperation<FileBacked, CPU>;
template class SpanMoveOperation<CPU, BlockDeviceCarrier>;
template class SpanMoveOperation<BlockDeviceCarrier, CPU>;

}  // namespace strideweave
