#include "strideweave/interop/dlpack_export.h"

#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// One export: the managed tensor and its owner, followed in the same block
// by the shape and stride arrays (2 * rank int64 values). manager_ctx points
// back at the block.
template <typename Managed>
struct ExportBlock {
  Managed managed{};
  ExportOwner owner;
  // The carrier's hold on the storage the export addresses
  // (Carrier::hold_storage_for_export); ends before the owner is released.
  std::shared_ptr<const void> storage;

  int64_t* dims() noexcept { return reinterpret_cast<int64_t*>(this + 1); }

  static void deleter(Managed* self) {
    if (self == nullptr) return;
    auto* block = static_cast<ExportBlock*>(self->manager_ctx);
    const ExportOwner owner = block->owner;
    block->~ExportBlock();
    owner.release(owner.object, block);
  }
};

// Allocates and fills the block for the checked export.
template <typename Managed>
Managed* make_managed(const Subtensor& s, const DLPackInfo& info, dlpack::DLDataType dtype,
                      const ExportOwner& owner, std::shared_ptr<const void> storage) {
  static_assert(std::is_nothrow_destructible_v<ExportBlock<Managed>>);
  static_assert(sizeof(ExportBlock<Managed>) % alignof(int64_t) == 0);
  const std::vector<LeafMode>& modes = s.layout.leaf_modes();
  const std::size_t rank = modes.size();
  void* memory =
      owner.allocate(owner.object, sizeof(ExportBlock<Managed>) + 2 * rank * sizeof(int64_t));
  if (memory == nullptr) throw std::bad_alloc();
  auto* block = new (memory) ExportBlock<Managed>{};
  block->owner = owner;
  block->storage = std::move(storage);
  int64_t* dims = block->dims();
  for (std::size_t k = 0; k < rank; ++k) {
    dims[k] = modes[k].extent;
    dims[rank + k] = modes[k].stride;
  }
  dlpack::DLTensor& dl = block->managed.dl_tensor;
  dl.data = reinterpret_cast<void*>(info.pointer);
  dl.device = {static_cast<dlpack::DLDeviceType>(info.device_type), info.device_id};
  dl.ndim = static_cast<int32_t>(rank);
  dl.dtype = dtype;
  dl.shape = dims;
  dl.strides = dims + rank;
  dl.byte_offset = static_cast<uint64_t>(s.offset) * (dtype.bits / 8u);
  block->managed.manager_ctx = block;
  block->managed.deleter = &ExportBlock<Managed>::deleter;
  return &block->managed;
}

std::optional<dlpack::DLDataType> dlpack_dtype(const DType& dtype) {
  switch (dtype.kind()) {
    case DTypeKind::kFloat32:
      return dlpack::DLDataType{dlpack::kDLFloat, 32, 1};
    case DTypeKind::kInt32:
      return dlpack::DLDataType{dlpack::kDLInt, 32, 1};
    default:
      return std::nullopt;
  }
}

constexpr const char* kOperation = "DLPack export (__dlpack__)";

std::string pair_text(const IntPair& p) {
  return "(" + std::to_string(p.first) + ", " + std::to_string(p.second) + ")";
}

}  // namespace

IntPair dlpack_device(const Tensor& tensor) {
  const Subtensor& s = tensor.subtensor("DLPack export (__dlpack_device__)");
  const DLPackInfo info = s.carrier->dlpack_info();
  return {info.device_type, info.device_id};
}

ExportedTensor export_dlpack(const Tensor& tensor, const ExportRequest& request,
                             const ExportOwner& owner) {
  const Subtensor& s = tensor.subtensor(kOperation);
  if (request.max_version && (request.max_version->first < 0 || request.max_version->second < 0)) {
    throw ValueError("max_version " + pair_text(*request.max_version) +
                     " has a negative component");
  }
  if (request.copy) {
    throw BufferError(
        "copy=True: StrideWeave exports alias storage; copy exports are not "
        "implemented");
  }
  std::shared_ptr<const void> storage;
  DLPackInfo info;
  if (!s.carrier->dlpack_info_runs_caller_code()) {
    // A built-in's hook: the hold, the answer and the checks in one lock hold.
    Carrier::ExportView view = s.carrier->export_view(kOperation);
    storage = std::move(view.hold);
    info = view.info;
  } else {
    // Held from before the hook reports a pointer: the storage it reports
    // cannot be recycled meanwhile, whatever another thread or the hook does.
    storage = s.carrier->hold_storage_for_export(kOperation);
    const bool released_before = s.carrier->is_released();
    info = s.carrier->dlpack_info();
    // The hook is a caller's code: what it did to the carrier is checked
    // before its answer is used. A carrier it released (directly, or by moving
    // a Tensor out of it) holds no storage to export; one it pinned for writing
    // refuses readers as before the call. (A carrier released before the call
    // is the rows below: a null pointer fails unless nothing is addressed.)
    if (!released_before && s.carrier->is_released()) {
      throw BufferError(std::string(kOperation) + ": " + s.carrier->label() +
                        " was released by its dlpack_info() hook; nothing is exported");
    }
    s.carrier->check_export_hold(kOperation, storage);
  }
  const std::optional<dlpack::DLDataType> dtype = dlpack_dtype(tensor.dtype());
  if (!dtype) {
    throw BufferError("dtype " + tensor.dtype().name() +
                      " is not exportable; DLPack export supports Float32 and Int32");
  }
  const IntPair device{info.device_type, info.device_id};
  if (request.dl_device && *request.dl_device != device) {
    throw BufferError("dl_device " + pair_text(*request.dl_device) + " differs from the device " +
                      pair_text(device) + " of " + s.carrier->label() +
                      "; cross-device exports are not implemented");
  }
  if (info.pointer == 0 && s.layout.size() > 0) {
    throw BufferError(s.carrier->label() + " reports a null data pointer" +
                      (s.carrier->is_released() ? " (it is released)" : "") +
                      "; DLPack needs a non-null pointer for a tensor with elements");
  }

  // Nothing may throw once the block is allocated.
  ExportedTensor out;
  if (request.max_version && request.max_version->first >= 1) {
    const uint64_t flags = tensor.is_mutable() ? 0 : dlpack::kFlagBitmaskReadOnly;
    out.versioned =
        make_managed<dlpack::DLManagedTensorVersioned>(s, info, *dtype, owner, std::move(storage));
    out.versioned->version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    out.versioned->flags = flags;
  } else {
    out.legacy = make_managed<dlpack::DLManagedTensor>(s, info, *dtype, owner, std::move(storage));
  }
  return out;
}

void* ExportOwner::heap_allocate(void* /*object*/, std::size_t bytes) noexcept {
  return ::operator new(bytes, std::nothrow);
}

void ExportOwner::heap_release(void* /*object*/, void* block) noexcept { ::operator delete(block); }

}  // namespace strideweave
