// The DLPack 1.0 ABI, written from the standard's field lists.
//
// StrideWeave produces DLPack (interop-movement); it never consumes it. The
// structures live in namespace strideweave::dlpack so this header can sit
// beside any other dlpack.h. Field order, widths and enum values are the ABI;
// dlpack_test.cc checks them against the packaged header where one exists.
#pragma once

#include <cstdint>

namespace strideweave::dlpack {

// The protocol version StrideWeave produces in versioned managed tensors.
inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 0;

// A protocol version: major changes break the ABI, minor ones extend it.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// Where the data lives.
enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
};

// A device: its type and its ordinal among devices of that type.
struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

// The kind of scalar in DLDataType::code.
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

// A scalar type: `lanes` vector lanes of `bits`-bit scalars of kind `code`.
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

// A strided view of memory. `data + byte_offset` addresses element 0;
// `strides` counts elements, not bytes; `shape` and `strides` have `ndim` entries.
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};

// The legacy (pre-1.0) managed tensor. `deleter` frees everything the producer
// allocated for it, including itself; `manager_ctx` is the producer's.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// flags bit: the consumer must not write through the tensor.
inline constexpr uint64_t kFlagBitmaskReadOnly = 1ULL << 0;
// flags bit: the producer copied the data for this export.
inline constexpr uint64_t kFlagBitmaskIsCopied = 1ULL << 1;

// The 1.0 managed tensor: an explicit version and a flags word precede the tensor.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace strideweave::dlpack
