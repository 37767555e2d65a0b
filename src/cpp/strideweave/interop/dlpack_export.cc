#include "strideweave/interop/dlpack_export.h"

#include <atomic>
#include <string>
#include <vector>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::atomic<int64_t> live_exports{0};

// What a managed tensor's manager_ctx points at: the arrays it owns and the
// keep-alive of the exporting tensor.
struct ExportContext {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<void> keepalive;
};

template <typename Managed>
void delete_managed(Managed* self) {
  if (self == nullptr) return;
  delete static_cast<ExportContext*>(self->manager_ctx);  // drops the keep-alive
  delete self;
  --live_exports;
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
                             std::shared_ptr<void> keepalive) {
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

  auto ctx = std::make_unique<ExportContext>();
  for (const LeafMode& m : s.layout.leaf_modes()) {
    ctx->shape.push_back(m.extent);
    ctx->strides.push_back(m.stride);
  }
  ctx->keepalive = std::move(keepalive);

  dlpack::DLTensor dl{};
  dl.data = reinterpret_cast<void*>(info.pointer);
  dl.device = {static_cast<dlpack::DLDeviceType>(info.device_type), info.device_id};
  dl.ndim = static_cast<int32_t>(ctx->shape.size());
  dl.dtype = *dtype;
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = static_cast<uint64_t>(s.offset) * (dtype->bits / 8);

  ExportedTensor out;
  if (request.max_version && request.max_version->first >= 1) {
    auto* managed = new dlpack::DLManagedTensorVersioned{};
    managed->version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    managed->manager_ctx = ctx.release();
    managed->deleter = &delete_managed<dlpack::DLManagedTensorVersioned>;
    managed->flags = tensor.is_mutable() ? 0 : dlpack::kFlagBitmaskReadOnly;
    managed->dl_tensor = dl;
    out.versioned = managed;
  } else {
    auto* managed = new dlpack::DLManagedTensor{};
    managed->dl_tensor = dl;
    managed->manager_ctx = ctx.release();
    managed->deleter = &delete_managed<dlpack::DLManagedTensor>;
    out.legacy = managed;
  }
  ++live_exports;
  return out;
}

int64_t live_dlpack_exports() noexcept { return live_exports.load(); }

}  // namespace strideweave
