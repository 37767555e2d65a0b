// DLPack export of a Tensor (spec/interop-movement): builds the managed
// tensor a capsule carries. No Python here: the binding wraps the result in
// a PyCapsule and supplies the keep-alive that holds the exporting Tensor.
#pragma once

#include <cstddef>
#include <cstdint>
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

// Who provides a managed tensor's memory and what keeps the exporting tensor
// alive while the managed tensor exists.
//
// export_dlpack calls allocate(object, bytes) at most once, after every check
// has passed; a null result throws std::bad_alloc. The managed tensor's deleter
// then calls release(object, block) exactly once, on whatever thread deletes
// it (with or without any interpreter lock held): release must free `block`
// as allocate's partner and let `object` go. The defaults use the C++ heap and
// hold no object, for C++ consumers without a host runtime.
struct ExportOwner {
  void* object = nullptr;
  void* (*allocate)(void* object, std::size_t bytes) = &heap_allocate;
  void (*release)(void* object, void* block) = &heap_release;

  static void* heap_allocate(void* object, std::size_t bytes) noexcept;
  static void heap_release(void* object, void* block) noexcept;
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
// copy false (BufferError); the carrier not pinned for writing (RuntimeError);
// the carrier's dlpack_info() hook (its own exceptions, unchanged); the
// carrier not released by the hook (BufferError); the carrier not pinned for
// writing, not a part of a composite and its storage not replaced since before
// the hook (Carrier::check_export_hold: RuntimeError, BufferError); dtype
// Float32 or Int32 (BufferError); dl_device equal to the reported device
// (BufferError); a non-null pointer when the tensor has elements (BufferError).
// Changes no version.
//
// The managed tensor holds `owner` and the carrier's hold on its storage
// (Carrier::hold_storage_for_export, taken before the hook runs) until its
// deleter runs, which ends the hold before it releases the owner (on failure
// nothing was allocated, the hold has ended and the owner is left untouched);
// shape and strides are the layout's leaf modes (elements, never null arrays,
// even for rank 0), data the carrier's pointer, byte_offset the offset times
// the item size; a versioned tensor has version 1.0 and sets READ_ONLY
// exactly when the tensor is not publicly mutable. One block from
// owner.allocate holds the managed tensor, its shape and stride arrays, the
// owner and the hold; nothing else is allocated, except the record the holds
// of one CPU buffer share, made at its first export.
ExportedTensor export_dlpack(const Tensor& tensor, const ExportRequest& request,
                             const ExportOwner& owner);

}  // namespace strideweave
