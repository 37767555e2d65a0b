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

#include "strideweave/carrier/file_io.h"
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

// Opens `path` with O_DIRECT, or buffered where the file system refuses
// O_DIRECT (EINVAL); `direct` says which. OSError naming the path otherwise.
int open_storage(const std::filesystem::path& path, int flags, bool& direct) {
  direct = false;
  if (!refuse_direct_io.load()) {
    const int fd = ::open(path.c_str(), flags | O_DIRECT, 0666);
    if (fd >= 0) {
      direct = true;
      return fd;
    }
    if (errno != EINVAL) throw_os_error(errno, path, std::string(kName) + ": cannot open");
  }
  return open_file(kName, path, flags);
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

// A step of a transfer through the bounce buffer: the whole blocks
// [block, block + size) in `buffer`, of which the transfer covers bytes
// [pos, pos + take) (its first and last block maybe in part).
struct BounceStep {
  int64_t block;
  std::size_t size;
  std::byte* buffer;
  int64_t pos;
  int64_t take;
};

// Walks a transfer of bytes [start, start + size) of the storage to or from
// `memory` (the caller's bytes, the one of `start` first) by the block
// discipline of the file comment: whole blocks whose bytes in `memory` are
// aligned to `alignment` go straight, direct(pos, bytes); the rest goes through
// an aligned bounce buffer, bounced(step), one chunk of at most kBounceBytes at
// a time. A chunk that starts inside a block ends with that block when
// `memory` is aligned at the next one, so that the straight path resumes there.
template <class Direct, class Bounced>
void walk_blocks(int64_t start, std::size_t size, const std::byte* memory, int64_t block_size,
                 int64_t alignment, Direct&& direct, Bounced&& bounced) {
  const int64_t end = start + static_cast<int64_t>(size);
  const auto aligned = [&](int64_t at) {
    return reinterpret_cast<std::uintptr_t>(memory + (at - start)) %
               static_cast<std::uintptr_t>(alignment) ==
           0;
  };
  Bounce bounce(alignment);
  int64_t pos = start;
  while (pos < end) {
    const int64_t block = pos / block_size * block_size;
    if (pos == block && end - pos >= block_size && aligned(pos)) {
      const int64_t whole = (end - pos) / block_size * block_size;
      direct(pos, whole);
      pos += whole;
      continue;
    }
    const int64_t next = block + block_size;
    int64_t chunk_end = std::min(block + static_cast<int64_t>(BlockDeviceCarrier::kBounceBytes),
                                 (end + block_size - 1) / block_size * block_size);
    if (pos != block && next < end && aligned(next)) chunk_end = next;
    const auto chunk = static_cast<std::size_t>(chunk_end - block);
    const int64_t take = std::min(end, chunk_end) - pos;
    bounced(BounceStep{block, chunk, bounce.get(chunk), pos, take});
    pos += take;
  }
}

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
    : FileCarrier(kName, std::move(dtype), mutable_) {
  const int64_t count = initial_slot_count(kName, n, values);
  checked_block_size(block_size);
  file_bytes(kName, count, itemsize_, block_size.value_or(kPageBytes), this->dtype());
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
    const int64_t bytes = file_bytes(kName, count, itemsize_, block_size_, this->dtype());
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

void BlockDeviceCarrier::resize(int64_t n) const {
  const int64_t bytes = file_bytes(kName, n, itemsize_, block_size_, dtype());
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
  resize_file(fd_, path_, bytes, label(), n);
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
  const FileTransfer read = read_at(fd_, start, buffer, size);
  if (read.error != 0) fail_io(read.error, "read", start, size);
  return read.done;
}

void BlockDeviceCarrier::write_blocks(int64_t start, const std::byte* buffer,
                                      std::size_t size) const {
  const FileTransfer written = write_at(fd_, start, buffer, size);
  if (written.error != 0) fail_io(written.error, "write", start, size);
}

void BlockDeviceCarrier::read_bytes(int64_t start, std::byte* out, std::size_t size) const {
  const auto short_read = [&](int64_t at) {
    throw_file_shortened(label(), path_, at, byte_span(start, size));
  };
  walk_blocks(
      start, size, out, block_size_, alignment_,
      [&](int64_t pos, int64_t whole) {
        const std::size_t got =
            read_blocks(pos, out + (pos - start), static_cast<std::size_t>(whole));
        if (static_cast<int64_t>(got) < whole) short_read(pos + static_cast<int64_t>(got));
      },
      [&](const BounceStep& step) {
        const std::size_t got = read_blocks(step.block, step.buffer, step.size);
        if (static_cast<int64_t>(got) < step.pos - step.block + step.take) {
          short_read(step.block + static_cast<int64_t>(got));
        }
        std::memcpy(out + (step.pos - start), step.buffer + (step.pos - step.block),
                    static_cast<std::size_t>(step.take));
      });
}

void BlockDeviceCarrier::write_bytes(int64_t start, const std::byte* in, std::size_t size) {
  const int64_t end = start + static_cast<int64_t>(size);
  // Reads the block at `at` into `into` for a read-modify-write; past the end
  // of a file shortened outside StrideWeave it reads zero.
  const auto read_block = [&](int64_t at, std::byte* into) {
    const std::size_t got = read_blocks(at, into, static_cast<std::size_t>(block_size_));
    std::memset(into + got, 0, static_cast<std::size_t>(block_size_) - got);
  };
  walk_blocks(
      start, size, in, block_size_, alignment_,
      [&](int64_t pos, int64_t whole) {
        write_blocks(pos, in + (pos - start), static_cast<std::size_t>(whole));
      },
      [&](const BounceStep& step) {
        const int64_t chunk_end = step.block + static_cast<int64_t>(step.size);
        if (step.pos != step.block) read_block(step.block, step.buffer);
        if (end < chunk_end && (step.pos == step.block || chunk_end - step.block > block_size_)) {
          read_block(chunk_end - block_size_,
                     step.buffer + (step.size - static_cast<std::size_t>(block_size_)));
        }
        std::memcpy(step.buffer + (step.pos - step.block), in + (step.pos - start),
                    static_cast<std::size_t>(step.take));
        write_blocks(step.block, step.buffer, step.size);
      });
}

void BlockDeviceCarrier::do_sync() {
  const int injected = failing_sync.exchange(0);
  if (injected != 0 || ::fdatasync(fd_) != 0) {
    throw_os_error(injected != 0 ? injected : errno, path_,
                   label() + " cannot make durable (fdatasync) its file");
  }
  ++syncs;
}

}  // namespace strideweave
