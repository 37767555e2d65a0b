// Large host allocations as anonymous mappings, for storage that is written
// right after it is allocated (CPU buffers, the emulated device's buffers),
// and the cache of freed mappings that lets a fresh buffer skip the kernel's
// page faults and zeroing.
#pragma once

#include <cstddef>

namespace strideweave {

// Allocations of at least this many bytes are mapped instead of taken from the
// heap. 1 MiB: glibc gives a freed heap chunk of a megabyte or more back to the
// kernel, so the next one page-faults its way in again (a 1e6-element result
// took about 650 faults per operation); a freed mapping is kept in the cache
// below and reused without faults.
inline constexpr std::size_t kMappedBytes = std::size_t{1} << 20;

// The default of the cache's budget (STRIDEWEAVE_HOST_CACHE_BYTES overrides it
// at first use; 0 turns the cache off).
inline constexpr std::size_t kDefaultMappedCacheBytes = std::size_t{256} << 20;

// `size` bytes in an anonymous private mapping: a freed mapping of exactly
// `size` bytes from the cache when one is there (its pages already faulted in;
// memset to zero when `zeroed`), else a new mapping with transparent huge pages
// requested (MADV_HUGEPAGE, as NumPy requests them for its large arrays) and
// faulted in by the kernel, which zeroes them (MADV_POPULATE_WRITE; a memset
// where the kernel lacks it), so a copy into it takes no page faults. With
// `zeroed` false the bytes are unspecified: for a producer that writes every
// byte before anything reads them. nullptr when the mapping fails. Free with
// unmap_memory.
std::byte* map_memory(std::size_t size, bool zeroed = true) noexcept;

// Frees `size` bytes at `p` (from map_memory with that size): into the cache
// while it has room under its budget, else unmapped.
void unmap_memory(std::byte* p, std::size_t size) noexcept;

// Retires `size` bytes at `p` (from map_memory with that size) that a view
// outside the library may still address: their pages go back to the kernel
// and the address range stays reserved but inaccessible, so an access through
// such a view traps instead of reaching memory a later allocation received.
// Free with unmap_retired_memory, never unmap_memory: the cache never holds a
// retired mapping.
void retire_memory(std::byte* p, std::size_t size) noexcept;

// Unmaps a mapping retire_memory retired (its address range becomes free).
void unmap_retired_memory(std::byte* p, std::size_t size) noexcept;

// The bytes of the mappings retired and not yet unmapped.
std::size_t retired_mapped_bytes() noexcept;

// Unmaps every cached mapping; returns the bytes given back.
std::size_t empty_mapped_cache() noexcept;

// The bytes the cache holds now, and its budget.
std::size_t mapped_cache_bytes() noexcept;
std::size_t mapped_cache_budget() noexcept;

// Sets the budget (0 turns the cache off), unmapping the least recently freed
// mappings beyond it; returns the previous budget.
std::size_t set_mapped_cache_budget(std::size_t budget) noexcept;

}  // namespace strideweave
