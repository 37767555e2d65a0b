#include "strideweave/interop/dlpack_export.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::atomic<int64_t> live_exports{0};

constexpr std::size_t kInlineRank = 8;

// One export: the managed tensor, the arrays it points at and the keep-alive,
// in a single allocation that manager_ctx points back to.
template <typename Managed>
struct ExportBlock {
  Managed managed{};
  KeepAlive keepalive;
  int64_t inline_dims[2 * kInlineRank] = {};
  std::unique_ptr<int64_t[]> heap_dims;  // only for more than kInlineRank modes

  static void deleter(Managed* self) {
    if (self == nullptr) return;
    auto* block = static_cast<ExportBlock*>(self->manager_ctx);
    const KeepAlive keepalive = block->keepalive;
    delete block;
    --live_exports;
    if (keepalive.release != nullptr) keepalive.release(keepalive.object);
  }
};

// Fills `block` from the checked export.
template <typename Managed>
void fill(ExportBlock<Managed>& block, const Subtensor& s, const DLPackInfo& info,
          dlpack::DLDataType dtype) {
  const std::vector<LeafMode>& modes = s.layout.leaf_modes();
  const std::size_t rank = modes.size();
  int64_t* dims = block.inline_dims;
  if (rank > kInlineRank) {
    block.heap_dims = std::make_unique<int64_t[]>(2 * rank);
    dims = block.heap_dims.get();
  }
  for (std::size_t k = 0; k < rank; ++k) {
    dims[k] = modes[k].extent;
    dims[rank + k] = modes[k].stride;
  }
  dlpack::DLTensor& dl = block.managed.dl_tensor;
  dl.data = reinterpret_cast<void*>(info.pointer);
  dl.device = {static_cast<dlpack::DLDeviceType>(info.device_type), info.device_id};
  dl.ndim = static_cast<int32_t>(rank);
  dl.dtype = dtype;
  dl.shape = dims;
  dl.strides = dims + rank;
  dl.byte_offset = static_cast<uint64_t>(s.offset) * (dtype.bits / 8u);
  block.managed.manager_ctx = &block;
  block.managed.deleter = &ExportBlock<Managed>::deleter;
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
                             KeepAlive keepalive) {
  const Subtensor& s = tensor.subtensor("DLPack export (__dlpack__)");
  if (request.max_version && (request.max_version->first < 0 || request.max_version->second < 0)) {
    throw ValueError("max_version " + pair_text(*request.max_version) +
                     " has a negative component");
  }
  if (request.copy) {
    throw BufferError(
        "copy=True: StrideWeave exports alias storage; copy exports are not "
        "implemented");
  }
  const DLPackInfo info = s.carrier->dlpack_info();
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

  ExportedTensor out;
  if (request.max_version && request.max_version->first >= 1) {
    auto block = std::make_unique<ExportBlock<dlpack::DLManagedTensorVersioned>>();
    fill(*block, s, info, *dtype);
    block->managed.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    block->managed.flags = tensor.is_mutable() ? 0 : dlpack::kFlagBitmaskReadOnly;
    block->keepalive = keepalive;
    out.versioned = &block.release()->managed;
  } else {
    auto block = std::make_unique<ExportBlock<dlpack::DLManagedTensor>>();
    fill(*block, s, info, *dtype);
    block->keepalive = keepalive;
    out.legacy = &block.release()->managed;
  }
  ++live_exports;
  return out;
}

int64_t live_dlpack_exports() noexcept { return live_exports.load(); }

}  // namespace strideweave
