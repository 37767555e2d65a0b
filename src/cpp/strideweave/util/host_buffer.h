// HostBuffer: host memory a carrier keeps its slots in, and the holds of the
// DLPack exports that address it. Memory an export addresses never becomes
// another allocation's memory (spec/carrier-storage): relinquished while a
// hold lives, it is retired instead of freed for reuse.
#pragma once

#include <cstddef>
#include <memory>

namespace strideweave {

class HostBuffer {
 public:
  // Holds no memory.
  HostBuffer() noexcept = default;

  // `size` bytes aligned to `alignment` (a power of two no larger than a page;
  // `size` a positive multiple of it): an anonymous mapping (map_memory) when
  // `size` is at least kMappedBytes, else heap memory. Zeroed unless `zeroed`
  // is false (then unspecified until written). Holds no memory when the
  // allocation fails.
  static HostBuffer allocate(std::size_t size, std::size_t alignment, bool zeroed) noexcept;

  HostBuffer(HostBuffer&& other) noexcept;
  // reset(), then takes `other`'s memory, leaving `other` without memory.
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  // reset().
  ~HostBuffer();

  std::byte* get() const noexcept { return data_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  void swap(HostBuffer& other) noexcept;

  // A hold on the memory for a DLPack export that addresses it: it points at
  // get() (null when there is no memory), may be copied, and may be destroyed
  // on any thread, with or without any lock. While a hold lives, the memory
  // is not given to another allocation, whatever becomes of this object.
  // The first hold allocates the record every hold of this memory shares
  // (std::bad_alloc when it cannot). Must not run concurrently with reset(),
  // swap() or an assignment of this object (a carrier calls them all under
  // its mutex); holds are destroyed concurrently with anything.
  std::shared_ptr<const void> hold_for_export();

  // Lets the memory go; the object then holds none. With no hold alive the
  // memory is freed for reuse: a mapping into the cache of freed mappings
  // (unmap_memory), heap memory to the heap. While a hold lives the memory is
  // retired instead: a mapping's pages go back to the kernel and its address
  // range stays reserved and inaccessible (retire_memory), so a stale view
  // traps; heap memory stays allocated with its bytes, so a stale view reads
  // the old values. The last hold to end then frees it, a mapping by
  // unmapping it (never into the cache).
  void reset() noexcept;

 private:
  // The memory once it has been held: owned by the record from the first
  // hold on, and freed when the buffer and every hold have let it go.
  struct Exported;

  std::byte* data_ = nullptr;
  std::size_t mapped_ = 0;  // the mapping's bytes; 0 for heap memory
  std::shared_ptr<Exported> exported_;
};

}  // namespace strideweave
