#include "strideweave/carrier/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "strideweave/carrier/temporary_file.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// Calls `call(done)`, a pread or pwrite of the bytes from `done` on, until
// `size` bytes moved, over short transfers and EINTR. Stops at a failed call
// (its errno) and at a call that moves nothing (`at_zero`: 0 for the end of
// the file a read meets).
template <class Call>
FileTransfer transfer_all(std::size_t size, int at_zero, Call&& call) noexcept {
  FileTransfer transfer;
  while (transfer.done < size) {
    const ssize_t moved = call(transfer.done);
    if (moved > 0) {
      transfer.done += static_cast<std::size_t>(moved);
    } else if (moved == 0) {
      transfer.error = at_zero;
      break;
    } else if (errno != EINTR) {
      transfer.error = errno;
      break;
    }
  }
  return transfer;
}

}  // namespace

int64_t file_bytes(const char* carrier, int64_t n, std::size_t itemsize, int64_t block_size,
                   const DType& dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes) ||
      __builtin_add_overflow(bytes, block_size - 1, &bytes)) {
    throw ValueError(std::string(carrier) + ": " + std::to_string(n) + " slots of " + dtype.name() +
                     " need more bytes than a file can hold (at most 2**63 - 1)");
  }
  return bytes / block_size * block_size;
}

int open_file(const char* carrier, const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) throw_os_error(errno, path, std::string(carrier) + ": cannot open");
  return fd;
}

void resize_file(int fd, const std::filesystem::path& path, int64_t bytes,
                 const std::string& carrier, int64_t n) {
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    throw_os_error(errno, path,
                   carrier + " cannot resize to " + std::to_string(n) + " slots its file");
  }
}

namespace {

FileTransfer read_serially(int fd, int64_t offset, std::byte* out, std::size_t size) noexcept {
  return transfer_all(size, 0, [&](std::size_t done) {
    return ::pread(fd, out + done, size - done,
                   static_cast<off_t>(offset) + static_cast<off_t>(done));
  });
}

}  // namespace

FileTransfer read_at(int fd, int64_t offset, std::byte* out, std::size_t size) noexcept {
  // From the page cache a pread is a copy by the kernel: long ones split
  // across the pool as parallel_memcpy splits memory copies. The outcome is
  // the serial read's: the bytes before the first stretch that came up short,
  // and that stretch's error (0 at the end of the file).
  std::mutex mu;
  FileTransfer first_short{size, 0};
  parallel_for(static_cast<int64_t>(size), kParallelCopyGrain,
               [&](int64_t begin, int64_t end) noexcept {
                 const auto length = static_cast<std::size_t>(end - begin);
                 const FileTransfer part = read_serially(fd, offset + begin, out + begin, length);
                 if (part.done == length) return;
                 const std::lock_guard lock(mu);
                 const std::size_t reached = static_cast<std::size_t>(begin) + part.done;
                 if (reached < first_short.done) first_short = {reached, part.error};
               });
  return first_short;
}

FileTransfer write_at(int fd, int64_t offset, const std::byte* in, std::size_t size) noexcept {
  return transfer_all(size, EIO, [&](std::size_t done) {
    return ::pwrite(fd, in + done, size - done,
                    static_cast<off_t>(offset) + static_cast<off_t>(done));
  });
}

void throw_file_shortened(const std::string& carrier, const std::filesystem::path& path, int64_t at,
                          const std::string& slots) {
  throw RuntimeError(carrier + ": its file " + quoted(path) + " ends at byte " +
                     std::to_string(at) + ", inside its slots " + slots +
                     " (shortened outside StrideWeave)");
}

}  // namespace strideweave
