// ABI checks of strideweave/interop/dlpack.h: the sizes and offsets the
// standard fixes, and, where Debian's libdlpack-dev is installed, identity
// with the legacy structures of the packaged header (version 0.6 has no
// versioned structures, so only those are compared).
#include "strideweave/interop/dlpack.h"

#include <gtest/gtest.h>

#include <cstddef>

#if defined(SW_HAVE_SYSTEM_DLPACK)
#include <dlpack/dlpack.h>
#endif

namespace sdl = strideweave::dlpack;

static_assert(sizeof(void*) != 8 || sizeof(sdl::DLTensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(sdl::DLManagedTensor) == 64);
static_assert(sizeof(void*) != 8 || sizeof(sdl::DLManagedTensorVersioned) == 80);
static_assert(sizeof(void*) != 8 || offsetof(sdl::DLManagedTensorVersioned, flags) == 24);
static_assert(sizeof(void*) != 8 || offsetof(sdl::DLManagedTensorVersioned, dl_tensor) == 32);
static_assert(sizeof(sdl::DLDevice) == 8);
static_assert(sizeof(sdl::DLDataType) == 4);
static_assert(sizeof(sdl::DLPackVersion) == 8);

#if defined(SW_HAVE_SYSTEM_DLPACK)
#define SW_SAME_FIELD(ours, theirs, field)                                \
  static_assert(offsetof(sdl::ours, field) == offsetof(::theirs, field)); \
  static_assert(sizeof(sdl::ours::field) == sizeof(::theirs::field))

static_assert(sizeof(sdl::DLDevice) == sizeof(::DLDevice));
SW_SAME_FIELD(DLDevice, DLDevice, device_type);
SW_SAME_FIELD(DLDevice, DLDevice, device_id);
static_assert(sizeof(sdl::DLDataType) == sizeof(::DLDataType));
SW_SAME_FIELD(DLDataType, DLDataType, code);
SW_SAME_FIELD(DLDataType, DLDataType, bits);
SW_SAME_FIELD(DLDataType, DLDataType, lanes);
static_assert(sizeof(sdl::DLTensor) == sizeof(::DLTensor));
SW_SAME_FIELD(DLTensor, DLTensor, data);
SW_SAME_FIELD(DLTensor, DLTensor, device);
SW_SAME_FIELD(DLTensor, DLTensor, ndim);
SW_SAME_FIELD(DLTensor, DLTensor, dtype);
SW_SAME_FIELD(DLTensor, DLTensor, shape);
SW_SAME_FIELD(DLTensor, DLTensor, strides);
SW_SAME_FIELD(DLTensor, DLTensor, byte_offset);
static_assert(sizeof(sdl::DLManagedTensor) == sizeof(::DLManagedTensor));
SW_SAME_FIELD(DLManagedTensor, DLManagedTensor, dl_tensor);
SW_SAME_FIELD(DLManagedTensor, DLManagedTensor, manager_ctx);
SW_SAME_FIELD(DLManagedTensor, DLManagedTensor, deleter);
#undef SW_SAME_FIELD

#define SW_SAME_ENUM(name) static_assert(static_cast<int>(sdl::name) == static_cast<int>(::name))
SW_SAME_ENUM(kDLCPU);
SW_SAME_ENUM(kDLCUDA);
SW_SAME_ENUM(kDLCUDAHost);
SW_SAME_ENUM(kDLOpenCL);
SW_SAME_ENUM(kDLVulkan);
SW_SAME_ENUM(kDLMetal);
SW_SAME_ENUM(kDLVPI);
SW_SAME_ENUM(kDLROCM);
SW_SAME_ENUM(kDLROCMHost);
SW_SAME_ENUM(kDLExtDev);
SW_SAME_ENUM(kDLCUDAManaged);
SW_SAME_ENUM(kDLInt);
SW_SAME_ENUM(kDLUInt);
SW_SAME_ENUM(kDLFloat);
SW_SAME_ENUM(kDLOpaqueHandle);
SW_SAME_ENUM(kDLBfloat);
SW_SAME_ENUM(kDLComplex);
#undef SW_SAME_ENUM
#endif

TEST(DLPackAbi, VersionIsOnePointZero) {
  EXPECT_EQ(sdl::kMajorVersion, 1u);
  EXPECT_EQ(sdl::kMinorVersion, 0u);
  EXPECT_EQ(sdl::kFlagBitmaskReadOnly, 1u);
  EXPECT_EQ(sdl::kFlagBitmaskIsCopied, 2u);
}

TEST(DLPackAbi, ComparedWithPackagedHeader) {
#if defined(SW_HAVE_SYSTEM_DLPACK)
  // The static_asserts above did the comparison; record which header it was.
  RecordProperty("packaged_dlpack_version", DLPACK_VERSION);
  EXPECT_GE(DLPACK_VERSION, 60);
#else
  GTEST_SKIP() << "dlpack/dlpack.h is not installed; only the standard's sizes were checked";
#endif
}
