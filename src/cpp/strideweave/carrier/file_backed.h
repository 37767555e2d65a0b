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

#include "strideweave/carrier/carrier.h"

namespace strideweave {

class FileBacked : public Carrier {
 public:
  // See the file comment. Throws TypeError for an abstract dtype, ValueError
  // for n < 0, n disagreeing with values, a file size that is not whole items
  // or n slots too large for a file, the conversion errors of coerce, and
  // OSError for a failed system call.
  FileBacked(DType dtype, std::optional<int64_t> n = std::nullopt,
             std::optional<std::filesystem::path> path = std::nullopt,
             std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);
  ~FileBacked() override;

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }

  // An empty FileBacked of the same dtype over a new temporary file.
  std::shared_ptr<Carrier> new_like() const override;

  // The file's path, also after release (a removed temporary file's path).
  const std::filesystem::path& path() const noexcept { return path_; }

  // True when the carrier created its file as a temporary file.
  bool is_temporary() const noexcept { return temporary_; }

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;

 private:
  // Closes the file and removes a temporary one; idempotent.
  void close_file() noexcept;
  // Makes the file exactly n slots long (ValueError when n slots overflow a
  // file offset, OSError when the system refuses).
  void resize(int64_t n) const;
  // Reads / writes `size` bytes starting at slot `first`, looping over short
  // transfers and EINTR; OSError (errno, path) when the system call fails.
  void read_bytes(int64_t first, std::byte* out, std::size_t size) const;
  void write_bytes(int64_t first, const std::byte* in, std::size_t size);
  // "[first, first + size / itemsize)" for messages.
  std::string slot_span(int64_t first, std::size_t size) const;

  std::size_t itemsize_;
  std::filesystem::path path_;
  bool temporary_ = false;
  int fd_ = -1;
};

}  // namespace strideweave
