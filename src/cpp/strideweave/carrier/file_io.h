// The file I/O the file carriers (FileBacked, BlockDeviceCarrier) share: the
// size check of their files, opening and sizing a file, positioned reads and
// writes that loop over short transfers and EINTR, and the errors both raise
// in the same words. Each carrier keeps its own discipline over these:
// FileBacked reads and writes any byte range, BlockDeviceCarrier whole aligned
// blocks (block_device.h). What they hold in common, the file and the storage
// hooks over it, is their base FileCarrier's (file_carrier.h); their temporary
// files and the OSError they throw are temporary_file.h's.
//
// Messages name the carrier as the caller passes it: its class name in a
// constructor, its label() afterwards.
//
// Thread safety: no state of its own; a carrier calls these on its own file,
// with its mutex held once it is constructed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "strideweave/dtype/dtype.h"

namespace strideweave {

// The bytes of n slots of `itemsize` bytes, rounded up to whole blocks of
// `block_size` bytes (1: exactly n * itemsize). Throws ValueError naming
// `carrier`, n and the dtype when they do not fit a file offset.
int64_t file_bytes(const char* carrier, int64_t n, std::size_t itemsize, int64_t block_size,
                   const DType& dtype);

// Opens `path` with open(2) `flags`, mode 0666 when it creates the file.
// Throws OSError (errno, path) naming `carrier` when the system refuses.
int open_file(const char* carrier, const std::filesystem::path& path, int flags);

// Cuts or extends the file open at `fd` to `bytes` (ftruncate), which hold
// n slots: OSError (errno, path) naming `carrier` (its label) and n when the
// system refuses.
void resize_file(int fd, const std::filesystem::path& path, int64_t bytes,
                 const std::string& carrier, int64_t n);

// What a positioned read or write moved: `done` bytes before it stopped, and
// the errno of the system call that stopped it (0 when none did).
struct FileTransfer {
  std::size_t done = 0;
  int error = 0;
};

// Reads bytes [offset, offset + size) of the file open at `fd` into `out`
// (pread), looping over short reads and EINTR. Stops early at the end of the
// file (done < size, error 0) or at a failed call (error: its errno). A read
// of 512 KiB or more is split into stretches read by the calling thread and
// the pool's free workers (parallel_for); `done` is then the bytes before the
// first stretch that came up short (bytes after it may have been written).
FileTransfer read_at(int fd, int64_t offset, std::byte* out, std::size_t size) noexcept;

// Writes the `size` bytes at `in` at `offset` of the file open at `fd`
// (pwrite), looping over short writes and EINTR. Stops early at a failed call
// (error: its errno) and at a call that writes nothing (error: EIO).
FileTransfer write_at(int fd, int64_t offset, const std::byte* in, std::size_t size) noexcept;

// Throws the RuntimeError of a read that met the end of a file shortened
// outside StrideWeave: it names `carrier` (its label), the file, the byte `at`
// which the file ends and the slots being read (`slots`, "[first, end)").
[[noreturn]] void throw_file_shortened(const std::string& carrier,
                                       const std::filesystem::path& path, int64_t at,
                                       const std::string& slots);

}  // namespace strideweave
