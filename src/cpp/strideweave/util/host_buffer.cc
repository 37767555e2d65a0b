#include "strideweave/util/host_buffer.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "strideweave/util/mapped_memory.h"

namespace strideweave {

namespace {

// Heap memory of `size` bytes aligned to `alignment`: a malloc'd block
// `alignment` + one pointer longer, the address of the block kept in the
// pointer just below the aligned bytes. glibc's malloc serves such small
// blocks from its per-thread cache in tens of instructions, where
// aligned_alloc (memalign) always takes the arena's slow path and splits the
// block: about 700 instructions per buffer, two per 8-element move
// (docs/performance.md). Free with free_aligned. nullptr when malloc fails.
std::byte* allocate_aligned(std::size_t size, std::size_t alignment) noexcept {
  if (size > SIZE_MAX - alignment - sizeof(void*)) return nullptr;
  void* block = std::malloc(size + alignment + sizeof(void*));
  if (block == nullptr) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(block) + sizeof(void*);
  const std::uintptr_t aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
  std::memcpy(reinterpret_cast<void*>(aligned - sizeof(void*)), &block, sizeof(void*));
  return reinterpret_cast<std::byte*>(aligned);
}

void free_aligned(std::byte* p) noexcept {
  void* block = nullptr;
  std::memcpy(&block, p - sizeof(void*), sizeof(void*));
  std::free(block);
}

// Frees memory from HostBuffer::allocate: a mapping of `mapped` bytes (into
// the cache unless `retired`), or heap memory when `mapped` is 0.
void free_memory(std::byte* p, std::size_t mapped, bool retired) noexcept {
  if (mapped == 0) {
    free_aligned(p);
  } else if (retired) {
    unmap_retired_memory(p, mapped);
  } else {
    unmap_memory(p, mapped);
  }
}

}  // namespace

struct HostBuffer::Exported {
  std::byte* data;
  std::size_t mapped;
  // Set by the buffer before it drops its reference, read by whoever drops
  // the last one: the reference count's release and acquire order the two.
  bool retired = false;

  Exported(std::byte* d, std::size_t m) noexcept : data(d), mapped(m) {}
  Exported(const Exported&) = delete;
  Exported& operator=(const Exported&) = delete;
  ~Exported() { free_memory(data, mapped, retired); }
};

HostBuffer HostBuffer::allocate(std::size_t size, std::size_t alignment, bool zeroed) noexcept {
  HostBuffer buffer;
  if (size >= kMappedBytes) {
    buffer.data_ = map_memory(size, zeroed);  // page-aligned
    if (buffer.data_ != nullptr) buffer.mapped_ = size;
    return buffer;
  }
  buffer.data_ = allocate_aligned(size, alignment);
  if (buffer.data_ != nullptr && zeroed) std::memset(buffer.data_, 0, size);
  return buffer;
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept { swap(other); }

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    swap(other);
  }
  return *this;
}

HostBuffer::~HostBuffer() { reset(); }

void HostBuffer::swap(HostBuffer& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(mapped_, other.mapped_);
  exported_.swap(other.exported_);
}

std::shared_ptr<const void> HostBuffer::hold_for_export() {
  if (data_ == nullptr) return nullptr;
  if (!exported_) exported_ = std::make_shared<Exported>(data_, mapped_);
  return {exported_, data_};  // shares the record's count; points at the memory
}

void HostBuffer::reset() noexcept {
  if (exported_) {
    // The count is this buffer's reference and one per live hold. Holds are
    // made only from this object, never concurrently with this call, so the
    // count cannot grow meanwhile; a hold ending meanwhile at worst retires
    // memory that no view addresses any more, which is then unmapped.
    if (exported_.use_count() > 1) {
      if (mapped_ != 0) retire_memory(data_, mapped_);
      exported_->retired = true;
    }
    exported_.reset();  // frees the memory unless a hold lives
  } else if (data_ != nullptr) {
    free_memory(data_, mapped_, false);
  }
  data_ = nullptr;
  mapped_ = 0;
}

}  // namespace strideweave
