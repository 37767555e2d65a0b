// HostBuffer (util/host_buffer.h): memory let go while an export holds it is
// retired, never reused, and freed when the last hold ends
// (spec/carrier-storage, "release relinquishes storage once").
#include "strideweave/util/host_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "strideweave/util/mapped_memory.h"

namespace strideweave {
namespace {

constexpr std::size_t kAlignment = 64;
constexpr std::size_t kHeapBytes = 256;

// The permissions ("rw-p", "---p") of the mapping holding `p`, from
// /proc/self/maps; nullopt when no mapping holds it.
std::optional<std::string> permissions_at(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range;
    std::string permissions;
    fields >> range >> permissions;
    const std::size_t dash = range.find('-');
    const std::uintptr_t first = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (first <= address && address < end) return permissions;
  }
  return std::nullopt;
}

TEST(HostBuffer, HeapMemoryIsAlignedAndZeroedAsAsked) {
  // Heap buffers (below kMappedBytes) of many sizes and alignments: the
  // address is a multiple of the alignment, every byte can be written (the
  // sanitizer build checks the bounds), and a zeroed buffer reads zeros even
  // where freed memory of the same size held other bytes before.
  for (const std::size_t alignment : {std::size_t{16}, std::size_t{64}, std::size_t{4096}}) {
    for (const std::size_t size : {alignment, 2 * alignment, 3 * alignment, 64 * alignment}) {
      {
        HostBuffer dirty = HostBuffer::allocate(size, alignment, false);
        ASSERT_TRUE(dirty);
        std::memset(dirty.get(), 0x5A, size);
      }
      for (const bool zeroed : {true, false}) {
        HostBuffer buffer = HostBuffer::allocate(size, alignment, zeroed);
        ASSERT_TRUE(buffer) << size;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.get()) % alignment, 0U)
            << size << " bytes aligned to " << alignment;
        if (zeroed) {
          const std::vector<std::byte> zeros(size, std::byte{0});
          EXPECT_EQ(std::memcmp(buffer.get(), zeros.data(), size), 0) << size;
        }
        std::memset(buffer.get(), 0xA5, size);
      }
    }
  }
}

TEST(carrier_storage__release_relinquishes_storage_once,
     clause8__a_held_mapping_is_retired_inaccessible) {
  const std::size_t size = kMappedBytes;
  HostBuffer buffer = HostBuffer::allocate(size, kAlignment, true);
  ASSERT_TRUE(buffer);
  const std::size_t retired = retired_mapped_bytes();
  const std::size_t cached = mapped_cache_bytes();
  std::byte* const p = buffer.get();
  std::memset(p, 0x5a, size);
  std::shared_ptr<const void> hold = buffer.hold_for_export();
  EXPECT_EQ(hold.get(), p);
  buffer.reset();
  EXPECT_FALSE(buffer);
  EXPECT_EQ(retired_mapped_bytes(), retired + size);
  EXPECT_EQ(mapped_cache_bytes(), cached);  // never into the cache
  EXPECT_EQ(permissions_at(p), "---p");     // reserved, inaccessible: a stale view traps

  std::vector<HostBuffer> fresh;
  for (int i = 0; i < 4; ++i) {
    fresh.push_back(HostBuffer::allocate(size, kAlignment, true));
    ASSERT_TRUE(fresh.back());
    EXPECT_NE(fresh.back().get(), p);
    EXPECT_EQ(fresh.back().get()[0], std::byte{0});
  }
}

TEST(carrier_storage__release_relinquishes_storage_once,
     clause9__the_last_hold_unmaps_a_retired_mapping) {
  const std::size_t size = kMappedBytes + 4096;
  HostBuffer buffer = HostBuffer::allocate(size, kAlignment, false);
  ASSERT_TRUE(buffer);
  const std::size_t retired = retired_mapped_bytes();
  const std::size_t cached = mapped_cache_bytes();
  std::byte* const p = buffer.get();
  std::shared_ptr<const void> first = buffer.hold_for_export();
  std::shared_ptr<const void> second = buffer.hold_for_export();
  buffer = HostBuffer();  // assignment lets the memory go as reset() does
  EXPECT_EQ(retired_mapped_bytes(), retired + size);
  first.reset();
  EXPECT_EQ(retired_mapped_bytes(), retired + size);  // the second hold still lives
  EXPECT_EQ(permissions_at(p), "---p");
  second.reset();
  EXPECT_EQ(retired_mapped_bytes(), retired);
  EXPECT_EQ(mapped_cache_bytes(), cached);
  EXPECT_NE(permissions_at(p), "---p");  // unmapped (or the address of a new mapping)
}

TEST(carrier_storage__release_relinquishes_storage_once,
     clause8__a_held_heap_buffer_keeps_its_bytes) {
  HostBuffer buffer = HostBuffer::allocate(kHeapBytes, kAlignment, true);
  ASSERT_TRUE(buffer);
  std::byte* const p = buffer.get();
  std::memset(p, 0x5a, kHeapBytes);
  std::shared_ptr<const void> hold = buffer.hold_for_export();
  buffer.reset();
  std::vector<HostBuffer> fresh;
  for (int i = 0; i < 16; ++i) {
    fresh.push_back(HostBuffer::allocate(kHeapBytes, kAlignment, true));
    ASSERT_TRUE(fresh.back());
    EXPECT_NE(fresh.back().get(), p);
  }
  const auto* kept = static_cast<const std::byte*>(hold.get());
  for (std::size_t i = 0; i < kHeapBytes; ++i) ASSERT_EQ(kept[i], std::byte{0x5a}) << i;
}

TEST(carrier_storage__release_relinquishes_storage_once,
     clause7__memory_no_hold_addresses_is_freed_for_reuse) {
  if (mapped_cache_budget() < 2 * kMappedBytes) GTEST_SKIP() << "the cache is off";
  empty_mapped_cache();
  const std::size_t retired = retired_mapped_bytes();
  HostBuffer buffer = HostBuffer::allocate(kMappedBytes, kAlignment, true);
  ASSERT_TRUE(buffer);
  std::byte* const p = buffer.get();
  buffer.hold_for_export().reset();  // an export that ended before the buffer was let go
  buffer.reset();
  EXPECT_EQ(retired_mapped_bytes(), retired);
  EXPECT_EQ(mapped_cache_bytes(), kMappedBytes);
  HostBuffer reused = HostBuffer::allocate(kMappedBytes, kAlignment, true);
  EXPECT_EQ(reused.get(), p);
  reused.reset();
  empty_mapped_cache();
}

TEST(HostBuffer, moves_and_swaps_carry_the_memory_and_its_holds) {
  HostBuffer a = HostBuffer::allocate(kHeapBytes, kAlignment, true);
  ASSERT_TRUE(a);
  std::byte* const p = a.get();
  std::shared_ptr<const void> hold = a.hold_for_export();
  HostBuffer b(std::move(a));
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from buffer holds nothing
  EXPECT_EQ(b.get(), p);
  HostBuffer c;
  c.swap(b);
  EXPECT_EQ(c.get(), p);
  const std::shared_ptr<const void> again = c.hold_for_export();
  EXPECT_EQ(again.get(), p);
  EXPECT_EQ(again.use_count(), hold.use_count());  // one record shared by every hold
  EXPECT_EQ(HostBuffer().hold_for_export(), nullptr);
}

}  // namespace
}  // namespace strideweave
