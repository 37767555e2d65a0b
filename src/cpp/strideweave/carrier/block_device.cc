#include "strideweave/carrier/block_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "strideweave/carrier/temporary_file.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

constexpr const char* kName = "BlockDeviceCarrier";

// The alignment assumed when the system does not report the direct-I/O one.
constexpr int64_t kPageBytes = 4096;

std::atomic<bool> refuse_direct_io{false};
std::atomic<int> failing_sync{0};
std::atomic<int64_t> syncs{0};

std::size_t block_itemsize(const DType& dtype) {
  const std::optional<std::size_t> size = dtype.itemsize();
  if (!size) {
    throw TypeError(std::string(kName) + " cannot hold the abstract dtype " + dtype.name() +
                    ": it has no item size");
  }
  return *size;
}

bool is_power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }

std::optional<int64_t> checked_block_size(std::optional<int64_t> block_size) {
  if (block_size && (!is_power_of_two(*block_size) ||
                     *block_size > static_cast<int64_t>(BlockDeviceCarrier::kBounceBytes))) {
    throw ValueError(std::string(kName) + ": block_size=" + std::to_string(*block_size) +
                     " is not a power of two from 1 to " +
                     std::to_string(BlockDeviceCarrier::kBounceBytes));
  }
  return block_size;
}

// The bytes of n slots rounded up to whole blocks; ValueError when they do
// not fit a file offset.
int64_t padded_bytes(int64_t n, std::size_t itemsize, int64_t block_size, const DType& dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes) ||
      __builtin_add_overflow(bytes, block_size - 1, &bytes)) {
    throw ValueError(std::string(kName) + ": " + std::to_string(n) + " slots of " + dtype.name() +
                     " need more bytes than a file can hold (at most 2**63 - 1)");
  }
  return bytes / block_size * block_size;
}

// Opens `path` with O_DIRECT, or buffered where the file system refuses
// O_DIRECT (EINVAL); `direct` says which. OSError naming the path otherwise.
int open_storage(const std::filesystem::path& path, int flags, bool& direct) {
  int fd = -1;
  if (refuse_direct_io.load()) {
    errno = EINVAL;
  } else {
    fd = ::open(path.c_str(), flags | O_DIRECT, 0666);
  }
  direct = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) throw_os_error(errno, path, std::string(kName) + ": cannot open");
  return fd;
}

// An aligned bounce buffer, grown on demand, at least page-aligned.
class Bounce {
 public:
  explicit Bounce(int64_t alignment)
      : alignment_(static_cast<std::size_t>(std::max(alignment, kPageBytes))) {}

  // At least `size` bytes (a multiple of the block size, so of the alignment).
  std::byte* get(std::size_t size) {
    if (size > size_) {
      auto* grown = static_cast<std::byte*>(std::aligned_alloc(alignment_, size));
      if (grown == nullptr) throw std::bad_alloc();
      buffer_.reset(grown);
      size_ = size;
    }
    return buffer_.get();
  }

 private:
  struct Free {
    void operator()(std::byte* buffer) const noexcept { std::free(buffer); }
  };
  std::size_t alignment_;
  std::size_t size_ = 0;
  std::unique_ptr<std::byte, Free> buffer_;
};

}  // namespace

void refuse_direct_io_for_testing(bool refuse) { refuse_direct_io.store(refuse); }

void fail_next_sync_for_testing(int error) { failing_sync.store(error); }

int64_t syncs_for_testing() { return syncs.load(); }

const ClassDescriptor& BlockDeviceCarrier::static_class() {
  static const ClassDescriptor& descriptor = builtin_carrier_class(kName, &Carrier::static_class());
  return descriptor;
}

BlockDeviceCarrier::BlockDeviceCarrier(DType dtype, std::optional<int64_t> n,
                                       std::optional<std::filesystem::path> path,
                                       std::optional<int64_t> block_size,
                                       std::optional<std::vector<Value>> values, bool mutable_)
    : Carrier(std::move(dtype), mutable_), itemsize_(block_itemsize(this->dtype())) {
  const int64_t count = initial_slot_count(kName, n, values);
  checked_block_size(block_size);
  padded_bytes(count, itemsize_, block_size.value_or(kPageBytes), this->dtype());
  std::vector<std::byte> encoded;
  if (values) {
    encoded.resize(static_cast<std::size_t>(count) * itemsize_);
    for (std::size_t i = 0; i < values->size(); ++i) {
      encode(this->dtype(), coerce(this->dtype(), (*values)[i]), encoded.data() + i * itemsize_);
    }
  }
  const bool read_only = !mutable_ && !values && path;
  if (path) {
    path_ = *path;
  } else {
    int created = -1;
    path_ = make_temporary_file(kName, temporary_directory(), "blockdevice", created);
    ::close(created);
    temporary_ = true;
  }
  std::error_code ignored;
  const bool existed = std::filesystem::exists(path_, ignored);
  try {
    fd_ = open_storage(path_, O_CLOEXEC | (read_only ? O_RDONLY : O_RDWR | O_CREAT), direct_io_);
    struct statx info{};
    if (::statx(fd_, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_DIOALIGN, &info) != 0) {
      throw_os_error(errno, path_, std::string(kName) + ": cannot stat");
    }
    if (S_ISDIR(info.stx_mode)) throw_os_error(EISDIR, path_, std::string(kName) + ": cannot open");
    block_device_ = S_ISBLK(info.stx_mode);
    int64_t offset_alignment = 1;
    if (direct_io_) {
      const bool reported = (info.stx_mask & STATX_DIOALIGN) != 0 && info.stx_dio_mem_align != 0;
      alignment_ = reported ? info.stx_dio_mem_align : kPageBytes;
      offset_alignment = reported ? info.stx_dio_offset_align : kPageBytes;
    }
    block_size_ = block_size.value_or(std::max(kPageBytes, offset_alignment));
    if (block_size_ % offset_alignment != 0) {
      throw ValueError(std::string(kName) + ": block_size=" + std::to_string(block_size_) +
                       " is not a multiple of the direct-I/O offset alignment " +
                       std::to_string(offset_alignment) + " of " + quoted(path_));
    }
    const int64_t bytes = padded_bytes(count, itemsize_, block_size_, this->dtype());
    if (read_only) {
      if (static_cast<int64_t>(info.stx_size) < count * static_cast<int64_t>(itemsize_)) {
        throw ValueError(std::string(kName) + ": the file " + quoted(path_) + " holds " +
                         std::to_string(info.stx_size) + " bytes, fewer than the " +
                         std::to_string(count) + " slots of n (an immutable " + kName +
                         " never resizes its file)");
      }
    } else {
      if (values && !block_device_ && ::ftruncate(fd_, 0) != 0) {
        throw_os_error(errno, path_, std::string(kName) + ": cannot truncate");
      }
      if (block_device_ || static_cast<int64_t>(info.stx_size) != bytes) resize(count);
    }
    if (!encoded.empty()) write_bytes(0, encoded.data(), encoded.size());
  } catch (...) {
    close_file();
    if (temporary_) remove_temporary_file(path_);
    if (!existed && !temporary_) std::filesystem::remove(path_, ignored);
    throw;
  }
  initialize_slots(count);
}

BlockDeviceCarrier::~BlockDeviceCarrier() { close_file(); }

std::shared_ptr<Carrier> BlockDeviceCarrier::new_like() const {
  const std::filesystem::path directory =
      block_device_ ? temporary_directory() : path_.parent_path();
  int created = -1;
  const std::filesystem::path path =
      make_temporary_file(kName, directory.empty() ? "." : directory, "blockdevice", created);
  ::close(created);
  try {
    auto like = std::make_shared<BlockDeviceCarrier>(dtype(), std::nullopt, path, block_size_);
    like->temporary_ = true;
    return like;
  } catch (...) {
    remove_temporary_file(path);
    throw;
  }
}

void BlockDeviceCarrier::close_file() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (temporary_) remove_temporary_file(path_);
}

void BlockDeviceCarrier::resize(int64_t n) const {
  const int64_t bytes = padded_bytes(n, itemsize_, block_size_, dtype());
  if (block_device_) {
    uint64_t capacity = 0;
    if (::ioctl(fd_, BLKGETSIZE64, &capacity) != 0) {
      throw_os_error(errno, path_, label() + " cannot read the size of its block device");
    }
    if (static_cast<uint64_t>(bytes) > capacity) {
      throw ValueError(label() + ": its block device " + quoted(path_) + " holds " +
                       std::to_string(capacity) + " bytes, fewer than the " +
                       std::to_string(bytes) + " bytes of the blocks of " + std::to_string(n) +
                       " slots");
    }
    return;
  }
  if (::ftruncate(fd_, bytes) != 0) {
    throw_os_error(errno, path_,
                   label() + " cannot resize to " + std::to_string(n) + " slots its file");
  }
}

std::string BlockDeviceCarrier::byte_span(int64_t start, std::size_t size) const {
  const auto item = static_cast<int64_t>(itemsize_);
  return "[" + std::to_string(start / item) + ", " +
         std::to_string((start + static_cast<int64_t>(size) + item - 1) / item) + ")";
}

void BlockDeviceCarrier::fail_io(int error, const char* what, int64_t start,
                                 std::size_t size) const {
  throw_os_error(
      error, path_,
      label() + " cannot " + what + " the blocks of slots " + byte_span(start, size) + " of");
}

std::size_t BlockDeviceCarrier::read_blocks(int64_t start, std::byte* buffer,
                                            std::size_t size) const {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, buffer + done, size - done,
                                static_cast<off_t>(start) + static_cast<off_t>(done));
    if (got > 0) {
      done += static_cast<std::size_t>(got);
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      fail_io(errno, "read", start, size);
    }
  }
  return done;
}

void BlockDeviceCarrier::write_blocks(int64_t start, const std::byte* buffer,
                                      std::size_t size) const {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t put = ::pwrite(fd_, buffer + done, size - done,
                                 static_cast<off_t>(start) + static_cast<off_t>(done));
    if (put > 0) {
      done += static_cast<std::size_t>(put);
    } else if (put == 0) {
      fail_io(EIO, "write", start, size);
    } else if (errno != EINTR) {
      fail_io(errno, "write", start, size);
    }
  }
}

void BlockDeviceCarrier::read_bytes(int64_t start, std::byte* out, std::size_t size) const {
  const int64_t end = start + static_cast<int64_t>(size);
  const auto aligned = [&](int64_t at) {
    return reinterpret_cast<std::uintptr_t>(out + (at - start)) %
               static_cast<std::uintptr_t>(alignment_) ==
           0;
  };
  const auto short_read = [&](int64_t at) {
    throw RuntimeError(label() + ": its file " + quoted(path_) + " ends at byte " +
                       std::to_string(at) + ", inside its slots " + byte_span(start, size) +
                       " (shortened outside StrideWeave)");
  };
  Bounce bounce(alignment_);
  int64_t pos = start;
  while (pos < end) {
    const int64_t block = pos / block_size_ * block_size_;
    if (pos == block && end - pos >= block_size_ && aligned(pos)) {
      const int64_t whole = (end - pos) / block_size_ * block_size_;
      const std::size_t got =
          read_blocks(pos, out + (pos - start), static_cast<std::size_t>(whole));
      if (static_cast<int64_t>(got) < whole) short_read(pos + static_cast<int64_t>(got));
      pos += whole;
      continue;
    }
    const int64_t next = block + block_size_;
    int64_t chunk_end = std::min(block + static_cast<int64_t>(kBounceBytes),
                                 (end + block_size_ - 1) / block_size_ * block_size_);
    if (pos != block && next < end && aligned(next)) chunk_end = next;
    const auto chunk = static_cast<std::size_t>(chunk_end - block);
    std::byte* buffer = bounce.get(chunk);
    const std::size_t got = read_blocks(block, buffer, chunk);
    const int64_t take = std::min(end, chunk_end) - pos;
    if (static_cast<int64_t>(got) < pos - block + take)
      short_read(block + static_cast<int64_t>(got));
    std::memcpy(out + (pos - start), buffer + (pos - block), static_cast<std::size_t>(take));
    pos += take;
  }
}

void BlockDeviceCarrier::write_bytes(int64_t start, const std::byte* in, std::size_t size) {
  const int64_t end = start + static_cast<int64_t>(size);
  const auto aligned = [&](int64_t at) {
    return reinterpret_cast<std::uintptr_t>(in + (at - start)) %
               static_cast<std::uintptr_t>(alignment_) ==
           0;
  };
  Bounce bounce(alignment_);
  // Reads the block at `at` into `into` for a read-modify-write; past the end
  // of a file shortened outside StrideWeave it reads zero.
  const auto read_block = [&](int64_t at, std::byte* into) {
    const std::size_t got = read_blocks(at, into, static_cast<std::size_t>(block_size_));
    std::memset(into + got, 0, static_cast<std::size_t>(block_size_) - got);
  };
  int64_t pos = start;
  while (pos < end) {
    const int64_t block = pos / block_size_ * block_size_;
    if (pos == block && end - pos >= block_size_ && aligned(pos)) {
      const int64_t whole = (end - pos) / block_size_ * block_size_;
      write_blocks(pos, in + (pos - start), static_cast<std::size_t>(whole));
      pos += whole;
      continue;
    }
    const int64_t next = block + block_size_;
    int64_t chunk_end = std::min(block + static_cast<int64_t>(kBounceBytes),
                                 (end + block_size_ - 1) / block_size_ * block_size_);
    if (pos != block && next < end && aligned(next)) chunk_end = next;
    const auto chunk = static_cast<std::size_t>(chunk_end - block);
    std::byte* buffer = bounce.get(chunk);
    if (pos != block) read_block(block, buffer);
    if (end < chunk_end && (pos == block || chunk_end - block > block_size_)) {
      read_block(chunk_end - block_size_, buffer + (chunk - static_cast<std::size_t>(block_size_)));
    }
    const int64_t take = std::min(end, chunk_end) - pos;
    std::memcpy(buffer + (pos - block), in + (pos - start), static_cast<std::size_t>(take));
    write_blocks(block, buffer, chunk);
    pos += take;
  }
}

Value BlockDeviceCarrier::do_read(int64_t slot) const {
  std::vector<std::byte> item(itemsize_);
  read_bytes(slot * static_cast<int64_t>(itemsize_), item.data(), itemsize_);
  return decode(dtype(), item.data());
}

void BlockDeviceCarrier::do_write(int64_t slot, const Value& coerced) {
  std::vector<std::byte> item(itemsize_);
  encode(dtype(), coerced, item.data());
  write_bytes(slot * static_cast<int64_t>(itemsize_), item.data(), itemsize_);
}

void BlockDeviceCarrier::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  read_bytes(first * static_cast<int64_t>(itemsize_), out,
             static_cast<std::size_t>(count) * itemsize_);
}

void BlockDeviceCarrier::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  write_bytes(first * static_cast<int64_t>(itemsize_), in,
              static_cast<std::size_t>(count) * itemsize_);
}

void BlockDeviceCarrier::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  do_read_range(first, count, items.data());
  for (int64_t i = 0; i < count; ++i) out[i] = decode(dtype(), items.data() + i * itemsize_);
}

void BlockDeviceCarrier::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  for (int64_t i = 0; i < count; ++i) encode(dtype(), coerced[i], items.data() + i * itemsize_);
  do_write_range(first, count, items.data());
}

void BlockDeviceCarrier::do_allocate(int64_t n) { resize(n); }

void BlockDeviceCarrier::do_release() { close_file(); }

void BlockDeviceCarrier::do_sync() {
  const int injected = failing_sync.exchange(0);
  if (injected != 0 || ::fdatasync(fd_) != 0) {
    throw_os_error(injected != 0 ? injected : errno, path_,
                   label() + " cannot make durable (fdatasync) its file");
  }
  ++syncs;
}

}  // namespace strideweave
