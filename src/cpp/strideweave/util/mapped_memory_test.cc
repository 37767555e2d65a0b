// The cache of freed mappings (util/mapped_memory.h): a freed mapping is
// reused for the next allocation of its size, zeroed when asked, and
// emptied on request.
#include "strideweave/util/mapped_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace strideweave {
namespace {

bool all_zero(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

TEST(MappedMemory, a_freed_mapping_is_reused_zeroed_or_as_left) {
  if (mapped_cache_budget() < 2 * kMappedBytes) GTEST_SKIP() << "the cache is off";
  empty_mapped_cache();
  const std::size_t size = kMappedBytes + 4096;
  std::byte* first = map_memory(size);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(all_zero(first, size));
  std::memset(first, 0x5a, size);
  unmap_memory(first, size);
  EXPECT_EQ(mapped_cache_bytes(), size);

  std::byte* reused = map_memory(size, false);  // the cached mapping, as it was left
  EXPECT_EQ(reused, first);
  EXPECT_EQ(mapped_cache_bytes(), 0u);
  EXPECT_EQ(reused[size - 1], std::byte{0x5a});
  unmap_memory(reused, size);

  std::byte* zeroed = map_memory(size);  // the cached mapping, zeroed
  EXPECT_EQ(zeroed, first);
  EXPECT_TRUE(all_zero(zeroed, size));
  unmap_memory(zeroed, size);

  std::byte* other = map_memory(size + 4096);  // another size: a new mapping
  EXPECT_NE(other, first);
  unmap_memory(other, size + 4096);
  EXPECT_EQ(mapped_cache_bytes(), 2 * size + 4096);
  EXPECT_EQ(empty_mapped_cache(), 2 * size + 4096);
  EXPECT_EQ(mapped_cache_bytes(), 0u);
}

TEST(MappedMemory, a_budget_of_zero_turns_the_cache_off) {
  const std::size_t budget = set_mapped_cache_budget(4 * kMappedBytes);
  std::byte* p = map_memory(kMappedBytes, false);
  ASSERT_NE(p, nullptr);
  unmap_memory(p, kMappedBytes);
  EXPECT_GE(mapped_cache_bytes(), kMappedBytes);
  EXPECT_EQ(set_mapped_cache_budget(0), 4 * kMappedBytes);  // unmaps what it held
  EXPECT_EQ(mapped_cache_bytes(), 0u);
  p = map_memory(kMappedBytes, false);
  ASSERT_NE(p, nullptr);
  unmap_memory(p, kMappedBytes);  // unmapped at once
  EXPECT_EQ(mapped_cache_bytes(), 0u);
  set_mapped_cache_budget(budget);
}

TEST(MappedMemory, the_cache_never_holds_more_than_its_budget) {
  empty_mapped_cache();
  const std::size_t previous = set_mapped_cache_budget(3 * kMappedBytes + 4096);
  const std::size_t budget = mapped_cache_budget();
  const std::size_t size = kMappedBytes;
  const std::size_t count = budget / size + 2;
  std::vector<std::byte*> mappings;
  for (std::size_t i = 0; i < count; ++i) mappings.push_back(map_memory(size, false));
  for (std::byte* p : mappings) {
    ASSERT_NE(p, nullptr);
    unmap_memory(p, size);
    EXPECT_LE(mapped_cache_bytes(), budget);
  }
  EXPECT_EQ(mapped_cache_bytes(), 3 * kMappedBytes);
  set_mapped_cache_budget(previous);
  empty_mapped_cache();
}

}  // namespace
}  // namespace strideweave
