// FileBacked: slots in a file (spec/carrier-storage).
#include "strideweave/carrier/file_backed.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "strideweave/layout/layout.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

namespace fs = std::filesystem;
using testing_util::message_of;

// A path in gtest's temporary directory that no other test uses.
fs::path scratch(const std::string& name) {
  static std::atomic<int> next{0};
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("sw-filebacked-" + std::to_string(::getpid()) + "-" + std::to_string(next++));
  fs::create_directories(dir);
  return dir / name;
}

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

template <class T>
std::vector<std::byte> items(std::initializer_list<T> xs) {
  std::vector<std::byte> out(xs.size() * sizeof(T));
  std::memcpy(out.data(), std::data(xs), out.size());
  return out;
}

void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

bool names(const std::string& message, const fs::path& path) {
  return message.find(path.string()) != std::string::npos;
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, clause1__the_file_holds_raw_native_items) {
  const fs::path path = scratch("raw.f32");
  auto c = std::make_shared<FileBacked>(DType::Float32(), 4, path);
  c->write_range(1, items<float>({1.5f, -2.0f}));
  c->write(3, 7.25);
  EXPECT_EQ(file_bytes(path), items<float>({0.0f, 1.5f, -2.0f, 7.25f}));
  EXPECT_EQ(std::get<double>(c->read(1)), 1.5);
  EXPECT_EQ(c->read_range(0, 4), items<float>({0.0f, 1.5f, -2.0f, 7.25f}));
  EXPECT_EQ(c->version(), 2u);
  EXPECT_EQ(c->path(), path);
  EXPECT_FALSE(c->is_temporary());
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, clause3__values_replace_the_file) {
  const fs::path path = scratch("values.i32");
  write_file(path, items<int32_t>({9, 9, 9, 9, 9}));
  auto c = std::make_shared<FileBacked>(DType::Int32(), std::nullopt, path,
                                        std::vector<Value>{int64_t{1}, int64_t{2}});
  EXPECT_EQ(c->slots(), 2);
  EXPECT_EQ(file_bytes(path), items<int32_t>({1, 2}));
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file,
     take_the_slot_count_from_an_existing_file) {
  const fs::path path = scratch("existing.i32");
  write_file(path, items<int32_t>({4, -5, 6}));
  auto c = std::make_shared<FileBacked>(DType::Int32(), std::nullopt, path);
  EXPECT_EQ(c->slots(), 3);
  EXPECT_EQ(c->read_range(0, 3), items<int32_t>({4, -5, 6}));
  EXPECT_EQ(c->version(), 0u);
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, refuse_a_file_of_partial_items) {
  const fs::path path = scratch("partial.f32");
  const std::vector<std::byte> before(10, std::byte{7});
  write_file(path, before);
  const std::string m =
      message_of<ValueError>([&] { FileBacked(DType::Float32(), std::nullopt, path); });
  EXPECT_TRUE(names(m, path)) << m;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, resize_a_file_to_n_slots) {
  const fs::path short_file = scratch("short.i32");
  const fs::path long_file = scratch("long.i32");
  write_file(short_file, items<int32_t>({1, 2}));
  write_file(long_file, items<int32_t>({1, 2, 3, 4, 5, 6}));
  auto grown = std::make_shared<FileBacked>(DType::Int32(), 4, short_file);
  auto cut = std::make_shared<FileBacked>(DType::Int32(), 4, long_file);
  EXPECT_EQ(file_bytes(short_file), items<int32_t>({1, 2, 0, 0}));
  EXPECT_EQ(file_bytes(long_file), items<int32_t>({1, 2, 3, 4}));
  EXPECT_EQ(grown->read_range(0, 4), items<int32_t>({1, 2, 0, 0}));
  EXPECT_EQ(cut->slots(), 4);
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file,
     clause6__an_immutable_filebacked_never_resizes_its_file) {
  const fs::path path = scratch("frozen.i32");
  write_file(path, items<int32_t>({1, 2}));
  const std::string m =
      message_of<ValueError>([&] { FileBacked(DType::Int32(), 3, path, std::nullopt, false); });
  EXPECT_TRUE(names(m, path)) << m;
  EXPECT_EQ(file_bytes(path), items<int32_t>({1, 2}));
  auto c = std::make_shared<FileBacked>(DType::Int32(), 2, path, std::nullopt, false);
  EXPECT_THROW(c->write(0, int64_t{5}), RuntimeError);
  EXPECT_EQ(c->read_range(0, 2), items<int32_t>({1, 2}));
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, reject_an_abstract_dtype_for_a_file) {
  const fs::path path = scratch("abstract");
  for (const DType& dtype : {DType::Floating(), DType::Any()}) {
    const std::string m = message_of<TypeError>([&] { FileBacked(dtype, 2, path); });
    EXPECT_NE(m.find("FileBacked"), std::string::npos) << m;
    EXPECT_NE(m.find(dtype.name()), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, remove_a_temporary_file_at_release) {
  auto temp = std::make_shared<FileBacked>(DType::Float32(), 3);
  const fs::path temp_path = temp->path();
  EXPECT_TRUE(temp->is_temporary());
  EXPECT_EQ(fs::file_size(temp_path), 12u);
  const fs::path kept = scratch("kept.f32");
  auto given = std::make_shared<FileBacked>(DType::Float32(), 3, kept);
  temp->release();
  given->release();
  EXPECT_FALSE(fs::exists(temp_path));
  EXPECT_EQ(fs::file_size(kept), 12u);
  EXPECT_EQ(temp->path(), temp_path);
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file,
     clause2__a_destroyed_carrier_removes_its_temporary_file) {
  fs::path path;
  {
    FileBacked c(DType::Int32(), 2);
    path = c.path();
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, close_the_file_at_release) {
  const fs::path path = scratch("closed.f32");
  auto c = std::make_shared<FileBacked>(DType::Float32(), 2, path);
  c->write(1, 3.0);
  c->release();
  c->release();
  EXPECT_TRUE(c->is_released());
  EXPECT_EQ(c->slots(), 0);
  EXPECT_EQ(c->version(), 1u);
  const std::string m = message_of<RuntimeError>([&] { c->read(0); });
  EXPECT_NE(m.find(c->label()), std::string::npos) << m;
  EXPECT_EQ(file_bytes(path), items<float>({0.0f, 3.0f}));
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    EXPECT_NE(fs::read_symlink(entry.path(), ignored), path);
  }
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file,
     create_an_empty_temporary_filebacked_like_another) {
  auto c = std::make_shared<FileBacked>(DType::Int32(), 2, scratch("like.i32"));
  const std::shared_ptr<Carrier> live_like = c->new_like();
  c->release();
  const std::shared_ptr<Carrier> released_like = c->new_like();
  for (const std::shared_ptr<Carrier>& like : {live_like, released_like}) {
    const auto* f = dynamic_cast<const FileBacked*>(like.get());
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->is_temporary());
    EXPECT_EQ(like->slots(), 0);
    EXPECT_TRUE(like->is_mutable());
    EXPECT_EQ(like->dtype(), DType::Int32());
  }
  EXPECT_NE(dynamic_cast<const FileBacked&>(*live_like).path(),
            dynamic_cast<const FileBacked&>(*released_like).path());
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, clause10__allocate_extends_the_file) {
  const fs::path path = scratch("empty.i32");
  auto c = std::make_shared<FileBacked>(DType::Int32(), 0, path);
  c->allocate(3);
  EXPECT_EQ(c->slots(), 3);
  EXPECT_EQ(file_bytes(path), items<int32_t>({0, 0, 0}));
  EXPECT_EQ(c->version(), 1u);
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file, clause11__refuse_dlpack_export) {
  FileBacked c(DType::Float32(), 1);
  const std::string m = message_of<BufferError>([&] { c.dlpack_info(); });
  EXPECT_NE(m.find("FileBacked"), std::string::npos) << m;
}

TEST(carrier_storage__filebacked_stores_slots_in_a_file,
     clause9__the_span_walker_reads_the_file_run_by_run) {
  const fs::path path = scratch("walk.i32");
  write_file(path, items<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}));
  auto c = std::make_shared<FileBacked>(DType::Int32(), std::nullopt, path);
  std::vector<std::byte> out(4 * sizeof(int32_t));
  c->gather(Layout(IntTuple::tuple({2, 2}), IntTuple::tuple({1, 4})), 1, out.data());
  EXPECT_EQ(out, items<int32_t>({1, 2, 5, 6}));
}

TEST(carrier_storage__filebacked_reports_failed_i_o_as_oserror, report_a_missing_file) {
  const fs::path missing = scratch("missing.f32");
  const fs::path no_dir = missing.parent_path() / "no-such-dir" / "x.f32";
  for (const auto& [n, path] : {std::pair{std::optional<int64_t>{}, missing},
                                std::pair{std::optional<int64_t>{2}, no_dir}}) {
    try {
      FileBacked(DType::Float32(), n, path);
      ADD_FAILURE() << "expected OSError for " << path;
    } catch (const OSError& e) {
      EXPECT_EQ(e.error_number(), ENOENT);
      EXPECT_EQ(e.path(), path.string());
      EXPECT_TRUE(names(e.what(), path)) << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
  }
}

TEST(carrier_storage__filebacked_reports_failed_i_o_as_oserror,
     clause3__refuse_a_read_past_a_shortened_file) {
  const fs::path path = scratch("shortened.i32");
  auto c = std::make_shared<FileBacked>(DType::Int32(), 4, path);
  fs::resize_file(path, 8);
  const std::string m = message_of<RuntimeError>([&] { c->read_range(0, 4); });
  EXPECT_NE(m.find(c->label()), std::string::npos) << m;
  EXPECT_TRUE(names(m, path)) << m;
  EXPECT_EQ(c->read_range(0, 2), items<int32_t>({0, 0}));
}

TEST(FileBacked, a_long_read_split_across_threads_names_where_a_shortened_file_ends) {
  // 4 MiB of slots, read in stretches on several threads (file_io.h read_at);
  // the file cut inside the second MiB, outside StrideWeave: the error names
  // the byte where it ends, as one serial read would, and the slots before it
  // still read.
  const fs::path path = scratch("long_shortened.i32");
  const int64_t n = int64_t{1} << 20;
  auto c = std::make_shared<FileBacked>(DType::Int32(), n, path);
  std::vector<int32_t> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 3 + 1);
  c->write_range(0, std::as_bytes(std::span(values)));
  const std::uintmax_t end = (std::uintmax_t{1} << 20) + 4 * 1000 + 2;
  fs::resize_file(path, end);
  const std::string m = message_of<RuntimeError>([&] { c->read_range(0, n); });
  EXPECT_NE(m.find("ends at byte " + std::to_string(end) + ","), std::string::npos) << m;
  EXPECT_TRUE(names(m, path)) << m;
  const int64_t whole = static_cast<int64_t>(end / 4);
  std::vector<int32_t> got(static_cast<std::size_t>(whole));
  c->read_range(0, whole, std::as_writable_bytes(std::span(got)));
  EXPECT_TRUE(std::equal(got.begin(), got.end(), values.begin()));
}

// Runs in a forked child: a file size limit inside the file makes a write past
// it fail with EFBIG (SIGXFSZ ignored); the carrier stays usable below the
// limit. Returns 0 when everything held, else the number of the failed check.
int write_past_a_file_size_limit(const fs::path& path) {
  std::signal(SIGXFSZ, SIG_IGN);
  auto c = std::make_shared<FileBacked>(DType::Int32(), 32, path);
  const rlimit limit{64, 64};
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
  const std::vector<std::byte> past(20 * sizeof(int32_t), std::byte{1});
  try {
    c->write_range(0, past);
    return 11;
  } catch (const OSError& e) {
    if (e.error_number() != EFBIG) return 12;
    if (e.path() != path.string() || !names(e.what(), path)) return 13;
  }
  if (c->version() != 0 || c->is_released() || c->slots() != 32) return 14;
  if (c->read_range(20, 2) != items<int32_t>({0, 0})) return 15;
  c->write_range(0, items<int32_t>({5, 6, 7, 8}));
  return c->read_range(0, 4) == items<int32_t>({5, 6, 7, 8}) && c->version() == 1 ? 0 : 16;
}

TEST(carrier_storage__filebacked_reports_failed_i_o_as_oserror, report_a_full_file_system) {
  const fs::path path = scratch("full.i32");
  // The pool's workers may exist already: the child re-executes the binary
  // rather than continuing a fork of a multi-threaded process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(write_past_a_file_size_limit(path)), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace strideweave
