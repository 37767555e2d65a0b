#include "strideweave/util/mapped_memory.h"

#include <sys/mman.h>

#include <cstring>

namespace strideweave {

std::byte* map_zeroed_memory(std::size_t size) noexcept {
  void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  ::madvise(mapped, size, MADV_HUGEPAGE);  // a hint: without huge pages the memory still works
  if (::madvise(mapped, size, MADV_POPULATE_WRITE) != 0) std::memset(mapped, 0, size);
  return static_cast<std::byte*>(mapped);
}

void unmap_memory(std::byte* p, std::size_t size) noexcept { ::munmap(p, size); }

}  // namespace strideweave
