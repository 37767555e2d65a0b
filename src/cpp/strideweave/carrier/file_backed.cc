#include "strideweave/carrier/file_backed.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "strideweave/carrier/file_io.h"
#include "strideweave/carrier/temporary_file.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

constexpr const char* kName = "FileBacked";

}  // namespace

const ClassDescriptor& FileBacked::static_class() {
  static const ClassDescriptor& descriptor = builtin_carrier_class(kName, &Carrier::static_class());
  return descriptor;
}

FileBacked::FileBacked(DType dtype, std::optional<int64_t> n,
                       std::optional<std::filesystem::path> path,
                       std::optional<std::vector<Value>> values, bool mutable_)
    : FileCarrier(kName, std::move(dtype), mutable_) {
  int64_t count = initial_slot_count(kName, n, values);
  const int64_t bytes = file_bytes(kName, count, itemsize_, 1, this->dtype());
  std::vector<std::byte> encoded;
  if (values) {
    encoded.resize(static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < values->size(); ++i) {
      encode(this->dtype(), coerce(this->dtype(), (*values)[i]), encoded.data() + i * itemsize_);
    }
  }
  if (path) {
    path_ = *path;
    const bool read_only = !mutable_ && !values;
    int flags = O_CLOEXEC | (read_only ? O_RDONLY : O_RDWR);
    if (values) flags |= O_CREAT | O_TRUNC;
    if (n && !read_only) flags |= O_CREAT;
    fd_ = open_file(kName, path_, flags);
  } else {
    path_ = make_temporary_file(kName, temporary_directory(), "filebacked", fd_);
    temporary_ = true;
  }
  try {
    struct stat info{};
    if (::fstat(fd_, &info) != 0) throw_os_error(errno, path_, "FileBacked: cannot stat");
    if (S_ISDIR(info.st_mode)) throw_os_error(EISDIR, path_, "FileBacked: cannot open");
    const auto size = static_cast<int64_t>(info.st_size);
    if (!n && !values && path) {
      if (size % static_cast<int64_t>(itemsize_) != 0) {
        throw ValueError("FileBacked: the file " + quoted(path_) + " holds " +
                         std::to_string(size) + " bytes, not a whole number of " +
                         std::to_string(itemsize_) + "-byte items of " + this->dtype().name());
      }
      count = size / static_cast<int64_t>(itemsize_);
    } else if (!constructed_mutable() && !values && path && size != bytes) {
      throw ValueError("FileBacked: the file " + quoted(path_) + " holds " + std::to_string(size) +
                       " bytes, not the " + std::to_string(count) +
                       " slots of n (an immutable FileBacked never resizes its file)");
    } else if (size != bytes) {
      resize(count);
    }
    if (!encoded.empty()) write_bytes(0, encoded.data(), encoded.size());
  } catch (...) {
    close_file();
    throw;
  }
  initialize_slots(count);
}

std::shared_ptr<Carrier> FileBacked::new_like() const {
  return std::make_shared<FileBacked>(dtype());
}

void FileBacked::resize(int64_t n) const {
  resize_file(fd_, path_, file_bytes(kName, n, itemsize_, 1, dtype()), label(), n);
}

std::string FileBacked::slot_span(int64_t first, std::size_t size) const {
  return "[" + std::to_string(first) + ", " +
         std::to_string(first + static_cast<int64_t>(size / itemsize_)) + ")";
}

void FileBacked::read_bytes(int64_t start, std::byte* out, std::size_t size) const {
  const int64_t first = start / static_cast<int64_t>(itemsize_);
  const FileTransfer read = read_at(fd_, start, out, size);
  if (read.error != 0) {
    throw_os_error(read.error, path_,
                   label() + " cannot read slots " + slot_span(first, size) + " of its file");
  }
  if (read.done < size) {
    throw_file_shortened(label(), path_, start + static_cast<int64_t>(read.done),
                         slot_span(first, size));
  }
}

void FileBacked::write_bytes(int64_t start, const std::byte* in, std::size_t size) {
  const FileTransfer written = write_at(fd_, start, in, size);
  if (written.error != 0) {
    const int64_t first = start / static_cast<int64_t>(itemsize_);
    throw_os_error(written.error, path_,
                   label() + " cannot write slots " + slot_span(first, size) + " of its file");
  }
}

}  // namespace strideweave
