// FileBacked: slots in a file, item size bytes per slot in native encoding
// with no header, so the file is exactly what np.fromfile / np.memmap read
// (spec/carrier-storage). Ranges go through one pread / pwrite per range
// (docs/carrier-bulk.md says why not a mapping); the storage is not host
// memory, so the span walker reads it one range call per run. FileBacked is
// definition-free and keeps the default dlpack_info (BufferError).
//
// Construction, given the dtype (scalar or compound with an item size; an
// abstract dtype is TypeError naming FileBacked), checks every argument and
// converts every value before it touches the file system:
//   values given  the file is created or truncated and holds the values;
//   path absent   a new temporary file (mkstemp in $TMPDIR, else /tmp) of n
//                 zero slots (empty when n is absent);
//   n absent      the existing file at path, its slot count taken from its
//                 size (ValueError naming the path when the size is not a
//                 whole number of items);
//   n given       the file at path, created when missing, then cut or
//                 extended to exactly n slots: slots it held keep their
//                 bytes, new ones read zero.
// A carrier constructed immutable without values opens its file read-only
// and never resizes it: n must then equal the file's slot count (ValueError
// naming the path otherwise). Every failed system call is OSError naming the
// path; a failed construction leaves no temporary file behind.
//
// A temporary file is removed at release, when the carrier is destroyed, and
// at normal process exit (an atexit hook removes the temporary files of live
// carriers created by this process); _exit, a kill or a crash skip it. A given
// path is never removed. release() closes the file.
//
// I/O errors: a failed pread / pwrite throws OSError (errno, path). The carrier
// stays usable and its version unchanged; after a failed write the slots of
// the failed range hold unspecified values (any prefix of the range may have
// been written). A read past the end of a file shortened outside StrideWeave
// throws RuntimeError naming the carrier and the path.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strideweave/carrier/file_carrier.h"

namespace strideweave {

class FileBacked : public FileCarrier {
 public:
  // See the file comment. Throws TypeError for an abstract dtype, ValueError
  // for n < 0, n disagreeing with values, a file size that is not whole items
  // or n slots too large for a file, the conversion errors of coerce, and
  // OSError for a failed system call.
  FileBacked(DType dtype, std::optional<int64_t> n = std::nullopt,
             std::optional<std::filesystem::path> path = std::nullopt,
             std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // An empty FileBacked of the same dtype over a new temporary file.
  std::shared_ptr<Carrier> new_like() const override;

  // The file's path, also after release (a removed temporary file's path).
  const std::filesystem::path& path() const noexcept { return path_; }

  // True when the carrier created its file as a temporary file.
  bool is_temporary() const noexcept { return temporary_; }

 private:
  // Makes the file exactly n slots long (ValueError when n slots overflow a
  // file offset, OSError when the system refuses).
  void resize(int64_t n) const override;
  // Reads / writes `size` bytes starting at byte `start`, looping over short
  // transfers and EINTR; OSError (errno, path) when the system call fails.
  void read_bytes(int64_t start, std::byte* out, std::size_t size) const override;
  void write_bytes(int64_t start, const std::byte* in, std::size_t size) override;
  // "[first, first + size / itemsize)" for messages.
  std::string slot_span(int64_t first, std::size_t size) const;
};

}  // namespace strideweave
