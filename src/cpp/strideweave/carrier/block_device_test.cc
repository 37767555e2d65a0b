// BlockDeviceCarrier: slots in whole aligned blocks (spec/carrier-storage).
#include "strideweave/carrier/block_device.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strideweave/carrier/lease.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

namespace fs = std::filesystem;
using testing_util::message_of;

// A fresh directory under `root` that no other test uses.
fs::path scratch_dir(const fs::path& root) {
  static std::atomic<int> next{0};
  fs::path dir =
      root / ("sw-blockdevice-" + std::to_string(::getpid()) + "-" + std::to_string(next++));
  fs::create_directories(dir);
  return dir;
}

std::vector<Value> ints(int64_t first, int64_t count) {
  std::vector<Value> out;
  for (int64_t i = 0; i < count; ++i) out.emplace_back(static_cast<int32_t>(first + i));
  return out;
}

// The flags of descriptor `fd` as /proc reports them.
long open_flags(int fd) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  std::string key;
  while (info >> key) {
    if (key == "flags:") {
      std::string octal;
      info >> octal;
      return std::stol(octal, nullptr, 8);
    }
  }
  return -1;
}

// The descriptor of this process open on `path`, or -1.
int descriptor_of(const fs::path& path) {
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    if (fs::read_symlink(entry.path(), ignored) == path) {
      return std::stoi(entry.path().filename().string());
    }
  }
  return -1;
}

class BlockDeviceTest : public ::testing::TestWithParam<bool> {
 protected:
  // The parameter: true runs on the buffered fallback.
  void SetUp() override { refuse_direct_io_for_testing(GetParam()); }
  void TearDown() override { refuse_direct_io_for_testing(false); }
  fs::path dir_ = scratch_dir(::testing::TempDir());
};

INSTANTIATE_TEST_SUITE_P(Paths, BlockDeviceTest, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "buffered" : "direct";
                         });

TEST_P(BlockDeviceTest, slots_round_trip_in_native_encoding_padded_to_whole_blocks) {
  const fs::path path = dir_ / "slots.i32";
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 3000, path);
  EXPECT_EQ(carrier->direct_io(), !GetParam());
  carrier->write_range_values(0, ints(0, 3000));
  EXPECT_EQ(carrier->read_range_values(0, 3000), ints(0, 3000));
  EXPECT_EQ(fs::file_size(path) % static_cast<uintmax_t>(carrier->io_block_size()), 0u);
  EXPECT_GE(fs::file_size(path), 3000u * 4u);
  std::ifstream in(path, std::ios::binary);
  std::vector<int32_t> raw(3000);
  in.read(reinterpret_cast<char*>(raw.data()), 3000 * 4);
  for (int32_t i = 0; i < 3000; ++i) ASSERT_EQ(raw[static_cast<std::size_t>(i)], i);
}

TEST_P(BlockDeviceTest, a_partial_block_write_keeps_every_other_slot) {
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 5000, dir_ / "rmw.i32", 4096);
  carrier->write_range_values(0, ints(0, 5000));
  carrier->write(1500, Value(int32_t{-1}));
  carrier->write_range_values(1000, ints(-3000, 1100));  // starts and ends inside blocks
  std::vector<Value> expected = ints(0, 5000);
  expected[1500] = Value(int32_t{-1});
  for (int64_t i = 0; i < 1100; ++i) {
    expected[static_cast<std::size_t>(1000 + i)] = Value(static_cast<int32_t>(-3000 + i));
  }
  EXPECT_EQ(carrier->read_range_values(0, 5000), expected);
  EXPECT_EQ(carrier->read(1023), expected[1023]);
}

TEST_P(BlockDeviceTest, unaligned_caller_memory_goes_through_the_bounce_buffer) {
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 4096, dir_ / "b.i32");
  std::vector<std::byte> bytes(4096 * 4 + 1);
  for (std::size_t i = 0; i < 4096; ++i) {
    const auto v = static_cast<int32_t>(i * 7);
    std::memcpy(bytes.data() + 1 + i * 4, &v, 4);
  }
  carrier->write_range(0, std::span<const std::byte>(bytes.data() + 1, 4096 * 4));
  std::vector<std::byte> back(4096 * 4 + 1);
  carrier->read_range(0, 4096, std::span<std::byte>(back.data() + 1, 4096 * 4));
  EXPECT_EQ(std::memcmp(back.data() + 1, bytes.data() + 1, 4096 * 4), 0);
}

TEST_P(BlockDeviceTest, alignment_and_block_size_follow_the_io_path) {
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Float32(), 4, dir_ / "a.f32");
  EXPECT_GE(carrier->io_block_size(), 4096);
  if (GetParam()) {
    EXPECT_EQ(carrier->io_alignment(), 1);
  } else {
    EXPECT_GE(carrier->io_alignment(), 512);
    EXPECT_EQ(carrier->io_block_size() % carrier->io_alignment(), 0);
  }
}

TEST(carrier_storage__blockdevicecarrier_stores_slots_in_aligned_blocks,
     use_direct_i_o_on_a_disk_file_system) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 8, dir / "d.i32");
  if (!carrier->direct_io()) GTEST_SKIP() << ::testing::TempDir() << " refuses O_DIRECT";
  const int fd = descriptor_of(dir / "d.i32");
  ASSERT_GE(fd, 0);
  EXPECT_NE(open_flags(fd) & O_DIRECT, 0);
  carrier->release();
  EXPECT_EQ(descriptor_of(dir / "d.i32"), -1);
  EXPECT_TRUE(fs::exists(dir / "d.i32"));  // a given path is never removed
}

TEST(carrier_storage__blockdevicecarrier_stores_slots_in_aligned_blocks, reject_a_bad_block_size) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  for (const int64_t block_size : {int64_t{0}, int64_t{1000}, int64_t{-4096}}) {
    const std::string m = message_of<ValueError>(
        [&] { BlockDeviceCarrier(DType::Float32(), 4, dir / "bad.f32", block_size); });
    EXPECT_NE(m.find("block_size=" + std::to_string(block_size)), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(dir / "bad.f32"));
}

TEST(carrier_storage__blockdevicecarrier_stores_slots_in_aligned_blocks, clause8) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  const std::string m =
      message_of<TypeError>([&] { BlockDeviceCarrier(DType::Floating(), 2, dir / "abstract"); });
  EXPECT_NE(m.find("BlockDeviceCarrier"), std::string::npos) << m;
  EXPECT_NE(m.find("Floating"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(dir / "abstract"));
}

TEST(BlockDeviceCarrier, a_temporary_file_is_removed_at_release_and_new_like_stays_beside_it) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 2, dir / "given.i32", 8192);
  const auto like = std::dynamic_pointer_cast<BlockDeviceCarrier>(carrier->new_like());
  ASSERT_NE(like, nullptr);
  EXPECT_EQ(like->slots(), 0);
  EXPECT_EQ(like->io_block_size(), 8192);
  EXPECT_EQ(like->path().parent_path(), dir);
  EXPECT_TRUE(like->is_temporary());
  EXPECT_TRUE(fs::exists(like->path()));
  like->allocate(3);
  EXPECT_EQ(like->read_range_values(0, 3), std::vector<Value>(3, Value(int32_t{0})));
  like->release();
  EXPECT_FALSE(fs::exists(like->path()));
}

TEST(BlockDeviceCarrier, sync_through_a_lease_calls_fdatasync_and_reports_its_failure) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 4, dir / "s.i32");
  Lease lease = carrier->pin("test move", Carrier::PinAccess::kWriting);
  const int64_t before = syncs_for_testing();
  lease.sync();
  EXPECT_EQ(syncs_for_testing(), before + 1);
  fail_next_sync_for_testing(EIO);
  try {
    lease.sync();
    ADD_FAILURE() << "no OSError";
  } catch (const OSError& e) {
    EXPECT_EQ(e.error_number(), EIO);
    EXPECT_NE(std::string(e.what()).find((dir / "s.i32").string()), std::string::npos);
  }
  EXPECT_EQ(syncs_for_testing(), before + 1);
}

TEST(BlockDeviceCarrier, a_file_shortened_outside_is_a_runtime_error_naming_the_path) {
  const fs::path dir = scratch_dir(::testing::TempDir());
  auto carrier = std::make_shared<BlockDeviceCarrier>(DType::Int32(), 4, dir / "short.i32");
  fs::resize_file(dir / "short.i32", 8);
  const std::string m = message_of<RuntimeError>([&] { carrier->read_range_values(0, 4); });
  EXPECT_NE(m.find("short.i32"), std::string::npos) << m;
  EXPECT_EQ(carrier->read_range_values(0, 2), std::vector<Value>(2, Value(int32_t{0})));
}

}  // namespace
}  // namespace strideweave
