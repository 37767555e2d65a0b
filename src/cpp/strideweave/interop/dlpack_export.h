// DLPack export of a Tensor (spec/interop-movement): builds the managed
// tensor a capsule carries. No Python here: the binding wraps the result in
// a PyCapsule and supplies the keep-alive that holds the exporting Tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "strideweave/interop/dlpack.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

// A (first, second) integer pair from the consumer: a version or a device.
using IntPair = std::pair<int64_t, int64_t>;

// The consumer's demands, already converted from the protocol's arguments.
struct ExportRequest {
  std::optional<IntPair> max_version;  // nullopt: produce the legacy structure
  std::optional<IntPair> dl_device;    // nullopt: no device demanded
  bool copy = false;                   // the truth value of the copy argument
};

// What keeps the exporting tensor alive while a managed tensor exists: an
// opaque object and the function that lets it go. The managed tensor's
// deleter calls release(object) exactly once, on whatever thread deletes it.
struct KeepAlive {
  void* object = nullptr;
  void (*release)(void* object) = nullptr;
};

// One produced managed tensor; exactly one of the pointers is set. The
// receiver owns it and must eventually call its deleter exactly once.
struct ExportedTensor {
  dlpack::DLManagedTensor* legacy = nullptr;
  dlpack::DLManagedTensorVersioned* versioned = nullptr;
};

// The exporting carrier's DLPack device, from its dlpack_info() hook.
// Throws NotImplementedError for a multi-subtensor tensor (before touching
// any carrier) and whatever the hook throws (BufferError by default).
IntPair dlpack_device(const Tensor& tensor);

// Exports `tensor` without copying. Checks, in order: one subtensor
// (NotImplementedError); max_version components non-negative (ValueError);
// copy false (BufferError); the carrier's dlpack_info() hook (its own
// exceptions, unchanged); dtype Float32 or Int32 (BufferError); dl_device
// equal to the reported device (BufferError); a non-null pointer when the
// tensor has elements (BufferError). Changes no version.
//
// The managed tensor holds `keepalive` until its deleter runs (on failure the
// keep-alive is left untouched: the caller still owns it); shape and strides
// are the layout's leaf modes (elements, never null arrays, even for rank 0),
// data the carrier's pointer, byte_offset the offset times the item size; a
// versioned tensor has version 1.0 and sets READ_ONLY exactly when the tensor
// is not publicly mutable. One allocation holds the managed tensor, its
// arrays (up to eight modes inline) and the keep-alive.
ExportedTensor export_dlpack(const Tensor& tensor, const ExportRequest& request,
                             KeepAlive keepalive);

// Managed tensors produced and not yet deleted, process-wide (for tests of
// exactly-once deletion).
int64_t live_dlpack_exports() noexcept;

}  // namespace strideweave
