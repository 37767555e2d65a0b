#include "strideweave/util/mapped_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "strideweave/util/env.h"

namespace strideweave {

namespace {

// Freed mappings, most recently freed last. Small (a few entries of the sizes
// in use), so a linear search is the lookup.
struct MappedCache {
  std::mutex mu;
  std::vector<std::pair<std::byte*, std::size_t>> free;
  std::size_t bytes = 0;
  std::size_t budget = kDefaultMappedCacheBytes;
};

MappedCache& cache() {
  static MappedCache* instance = [] {
    auto* made = new MappedCache();  // never destroyed: buffers may be freed at exit
    if (const std::optional<uint64_t> budget =
            env_integer("STRIDEWEAVE_HOST_CACHE_BYTES", {.max = SIZE_MAX, .clamp_above = true})) {
      made->budget = static_cast<std::size_t>(*budget);
    }
    return made;
  }();
  return *instance;
}

std::byte* take_cached(std::size_t size) noexcept {
  MappedCache& c = cache();
  std::lock_guard lock(c.mu);
  for (auto it = c.free.rbegin(); it != c.free.rend(); ++it) {
    if (it->second == size) {
      std::byte* p = it->first;
      c.free.erase(std::next(it).base());
      c.bytes -= size;
      return p;
    }
  }
  return nullptr;
}

}  // namespace

std::byte* map_memory(std::size_t size, bool zeroed) noexcept {
  if (std::byte* cached = take_cached(size)) {
    if (zeroed) std::memset(cached, 0, size);
    return cached;
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  ::madvise(mapped, size, MADV_HUGEPAGE);  // a hint: without huge pages the memory still works
  if (::madvise(mapped, size, MADV_POPULATE_WRITE) != 0) std::memset(mapped, 0, size);
  return static_cast<std::byte*>(mapped);
}

namespace {

using Mappings = std::vector<std::pair<std::byte*, std::size_t>>;

// Moves the least recently freed mappings into `evicted` until `room` more
// bytes fit under the budget. Caller holds c.mu; room <= c.budget.
void make_room_locked(MappedCache& c, std::size_t room, Mappings& evicted) {
  while (c.bytes + room > c.budget) {
    evicted.push_back(c.free.front());
    c.bytes -= c.free.front().second;
    c.free.erase(c.free.begin());
  }
}

// Unmaps them, outside the cache's lock: munmap is slow.
std::size_t unmap_all(const Mappings& mappings) noexcept {
  std::size_t freed = 0;
  for (const auto& [p, n] : mappings) {
    ::munmap(p, n);
    freed += n;
  }
  return freed;
}

}  // namespace

void unmap_memory(std::byte* p, std::size_t size) noexcept {
  Mappings evicted;
  {
    MappedCache& c = cache();
    std::lock_guard lock(c.mu);
    if (size <= c.budget) {
      make_room_locked(c, size, evicted);
      c.free.emplace_back(p, size);
      c.bytes += size;
    } else {
      evicted.emplace_back(p, size);
    }
  }
  unmap_all(evicted);
}

namespace {

// Bytes retired and not yet unmapped. Never destroyed: buffers may be freed at exit.
std::atomic<std::size_t>& retired_bytes() {
  static auto* bytes = new std::atomic<std::size_t>(0);
  return *bytes;
}

}  // namespace

void retire_memory(std::byte* p, std::size_t size) noexcept {
  // One call replaces the pages with a fresh inaccessible reservation of the
  // same range: no moment exists at which the range is unmapped and another
  // mapping could take it.
  void* reserved =
      ::mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    // The kernel refused a new mapping (its mapping count): the same effect in
    // place, the range staying mapped throughout.
    ::mprotect(p, size, PROT_NONE);
    ::madvise(p, size, MADV_DONTNEED);
  }
  retired_bytes().fetch_add(size, std::memory_order_relaxed);
}

void unmap_retired_memory(std::byte* p, std::size_t size) noexcept {
  ::munmap(p, size);
  retired_bytes().fetch_sub(size, std::memory_order_relaxed);
}

std::size_t retired_mapped_bytes() noexcept {
  return retired_bytes().load(std::memory_order_relaxed);
}

std::size_t set_mapped_cache_budget(std::size_t budget) noexcept {
  Mappings evicted;
  std::size_t previous = 0;
  {
    MappedCache& c = cache();
    std::lock_guard lock(c.mu);
    previous = std::exchange(c.budget, budget);
    make_room_locked(c, 0, evicted);
  }
  unmap_all(evicted);
  return previous;
}

std::size_t empty_mapped_cache() noexcept {
  Mappings evicted;
  {
    MappedCache& c = cache();
    std::lock_guard lock(c.mu);
    evicted.swap(c.free);
    c.bytes = 0;
  }
  return unmap_all(evicted);
}

std::size_t mapped_cache_bytes() noexcept {
  MappedCache& c = cache();
  std::lock_guard lock(c.mu);
  return c.bytes;
}

std::size_t mapped_cache_budget() noexcept {
  MappedCache& c = cache();
  std::lock_guard lock(c.mu);
  return c.budget;
}

}  // namespace strideweave
