// Large zeroed host allocations as anonymous mappings, for storage that is
// written right after it is allocated (CPU buffers, the emulated device's
// buffers).
#pragma once

#include <cstddef>

namespace strideweave {

// Allocations of at least this many bytes are mapped instead of taken from the
// heap.
inline constexpr std::size_t kMappedBytes = std::size_t{4} << 20;

// `size` zero bytes in an anonymous private mapping, with transparent huge
// pages requested (MADV_HUGEPAGE, as NumPy requests them for its large arrays)
// and faulted in by the kernel, which zeroes them (MADV_POPULATE_WRITE; a
// memset where the kernel lacks it): their bytes are written once before first
// use instead of twice (page zeroing, then memset), and a copy into them takes
// no page faults. nullptr when the mapping fails. Free with unmap_memory.
std::byte* map_zeroed_memory(std::size_t size) noexcept;

// Unmaps `size` bytes at `p` (from map_zeroed_memory with that size).
void unmap_memory(std::byte* p, std::size_t size) noexcept;

}  // namespace strideweave
