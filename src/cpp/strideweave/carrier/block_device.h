// BlockDeviceCarrier: slots on a file or block device, read and written in
// whole aligned blocks (spec/carrier-storage). The storage holds the slots'
// native encoding from byte 0, like FileBacked, followed by zero padding up to
// a whole number of blocks.
//
// Direct I/O: the storage is opened with O_DIRECT. Where the file system
// refuses it (open fails with EINVAL, as tmpfs did before Linux 6.6), it is
// opened for buffered I/O instead and direct_io() is false; the block
// discipline below is the same on both paths.
//
// Every I/O covers whole blocks of block_size() bytes at block-aligned
// offsets, from a host buffer aligned to io_alignment() bytes: whole blocks of
// a range go straight from / into the caller's memory when it is so aligned,
// otherwise through an aligned bounce buffer (at most kBounceBytes at a time);
// a block a range covers in part is read, patched and written back
// (read-modify-write), so the slots around a range keep their values.
// Alignment: the storage's direct-I/O memory alignment (statx
// STATX_DIOALIGN), 4096 when the system does not report it; 1 with buffered
// I/O. The default block size is the larger of 4096 and the direct-I/O offset
// alignment; a given block_size must be a power of two from 1 to kBounceBytes
// and, with direct I/O, a multiple of that offset alignment (ValueError naming
// block_size).
//
// Construction, given the dtype (a dtype with an item size; an abstract one is
// TypeError naming BlockDeviceCarrier), checks every argument and converts
// every value before it touches the file system:
//   path absent  a new temporary file in $TMPDIR (else /tmp), removed at
//                release, destruction and normal process exit;
//   path given   the file, created when missing; a block device is used as
//                it is (it must hold the blocks of n slots, ValueError
//                otherwise);
//   a regular file is then sized to the blocks of n slots (values: their
//   count; neither: 0, an empty carrier): slots it held keep their bytes, new
//   ones read zero. Constructed immutable without values, a given file is
//   opened read-only and never resized (it must hold the n slots' bytes).
//
// Durability: do_sync() is fdatasync; a move into the carrier calls it before
// its terminal commit (Lease::sync), so the move's result is durable when the
// move completes. Public writes are not synced.
//
// I/O errors: a failed system call throws OSError (errno, path); the carrier
// stays usable and its version unchanged, the slots of a failed write range
// hold unspecified values. A read past the end of a file shortened outside
// StrideWeave throws RuntimeError naming the carrier and the path.
// Definition-free; keeps the default dlpack_info (BufferError).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strideweave/carrier/file_carrier.h"

namespace strideweave {

class BlockDeviceCarrier : public FileCarrier {
 public:
  // The most bytes one I/O moves through the bounce buffer, and the largest
  // block size (a whole number of blocks of any smaller power of two).
  static constexpr std::size_t kBounceBytes = std::size_t{8} << 20;

  // See the file comment. Throws TypeError for an abstract dtype, ValueError
  // for n < 0, n disagreeing with values, a bad block_size, n slots too large
  // for a file or a block device, the conversion errors of coerce, and OSError
  // for a failed system call. A failed construction leaves no file it created.
  BlockDeviceCarrier(DType dtype, std::optional<int64_t> n = std::nullopt,
                     std::optional<std::filesystem::path> path = std::nullopt,
                     std::optional<int64_t> block_size = std::nullopt,
                     std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // An empty BlockDeviceCarrier of the same dtype and block size over a new
  // temporary file in the directory of this one's path (the same file
  // system), or in $TMPDIR for a block device.
  std::shared_ptr<Carrier> new_like() const override;

  // The storage's path, also after release.
  const std::filesystem::path& path() const noexcept { return path_; }
  bool is_temporary() const noexcept { return temporary_; }

  // Whether the storage is open with O_DIRECT (false: the buffered fallback).
  bool direct_io() const noexcept { return direct_io_; }

  int64_t io_alignment() const override { return alignment_; }
  int64_t io_block_size() const override { return block_size_; }

 protected:
  void do_sync() override;

 private:
  // Sizes a regular file to the blocks of n slots (nothing for a block device,
  // which must already hold them: ValueError otherwise).
  void resize(int64_t n) const override;
  // Bytes [start, start + size) of the storage, in whole blocks.
  void read_bytes(int64_t start, std::byte* out, std::size_t size) const override;
  void write_bytes(int64_t start, const std::byte* in, std::size_t size) override;
  // Whole blocks [start, start + size) (block-aligned) into / from `buffer`
  // (io_alignment()-aligned), looping over short transfers and EINTR. A read
  // may end early at the end of the file: it returns the bytes it read.
  std::size_t read_blocks(int64_t start, std::byte* buffer, std::size_t size) const;
  void write_blocks(int64_t start, const std::byte* buffer, std::size_t size) const;
  // "[first, first + count)" and the OSError of a failed call for messages.
  std::string byte_span(int64_t start, std::size_t size) const;
  [[noreturn]] void fail_io(int error, const char* what, int64_t start, std::size_t size) const;

  bool block_device_ = false;
  bool direct_io_ = false;
  int64_t alignment_ = 1;
  int64_t block_size_ = 1;
};

// Tests only. While set, opening storage with O_DIRECT is treated as refused
// with EINVAL, so the buffered fallback runs on file systems that accept
// O_DIRECT (Linux 6.6 and later accept it on tmpfs); affects carriers
// constructed while set.
void refuse_direct_io_for_testing(bool refuse);
// Tests only. The next do_sync of any BlockDeviceCarrier fails with errno
// `error` instead of calling fdatasync (0 disarms).
void fail_next_sync_for_testing(int error);
// Tests only. How many fdatasync calls of BlockDeviceCarriers succeeded.
int64_t syncs_for_testing();

}  // namespace strideweave
