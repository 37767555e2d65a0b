#include "strideweave/carrier/file_backed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "strideweave/carrier/temporary_file.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::size_t file_itemsize(const DType& dtype) {
  const std::optional<std::size_t> size = dtype.itemsize();
  if (!size) {
    throw TypeError("FileBacked cannot hold the abstract dtype " + dtype.name() +
                    ": it has no item size");
  }
  return *size;
}

// The bytes of n slots as a file offset; ValueError when they do not fit one.
off_t file_bytes(int64_t n, std::size_t itemsize, const DType& dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes)) {
    throw ValueError("FileBacked: " + std::to_string(n) + " slots of " + dtype.name() +
                     " need more bytes than a file can hold (at most 2**63 - 1)");
  }
  return static_cast<off_t>(bytes);
}

}  // namespace

const ClassDescriptor& FileBacked::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_carrier_class("FileBacked", &Carrier::static_class());
  return descriptor;
}

FileBacked::FileBacked(DType dtype, std::optional<int64_t> n,
                       std::optional<std::filesystem::path> path,
                       std::optional<std::vector<Value>> values, bool mutable_)
    : Carrier(std::move(dtype), mutable_), itemsize_(file_itemsize(this->dtype())) {
  int64_t count = initial_slot_count("FileBacked", n, values);
  const off_t bytes = file_bytes(count, itemsize_, this->dtype());
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
    fd_ = ::open(path_.c_str(), flags, 0666);
    if (fd_ < 0) throw_os_error(errno, path_, "FileBacked: cannot open");
  } else {
    path_ = make_temporary_file("FileBacked", temporary_directory(), "filebacked", fd_);
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

FileBacked::~FileBacked() { close_file(); }

std::shared_ptr<Carrier> FileBacked::new_like() const {
  return std::make_shared<FileBacked>(dtype());
}

void FileBacked::close_file() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (temporary_) remove_temporary_file(path_);
}

void FileBacked::resize(int64_t n) const {
  if (::ftruncate(fd_, file_bytes(n, itemsize_, dtype())) != 0) {
    throw_os_error(errno, path_,
                   label() + " cannot resize to " + std::to_string(n) + " slots its file");
  }
}

std::string FileBacked::slot_span(int64_t first, std::size_t size) const {
  return "[" + std::to_string(first) + ", " +
         std::to_string(first + static_cast<int64_t>(size / itemsize_)) + ")";
}

void FileBacked::read_bytes(int64_t first, std::byte* out, std::size_t size) const {
  const auto start = static_cast<off_t>(first) * static_cast<off_t>(itemsize_);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, out + done, size - done, start + static_cast<off_t>(done));
    if (got > 0) {
      done += static_cast<std::size_t>(got);
    } else if (got == 0) {
      throw RuntimeError(label() + ": its file " + quoted(path_) + " ends at byte " +
                         std::to_string(start + static_cast<off_t>(done)) + ", inside its slots " +
                         slot_span(first, size) + " (shortened outside StrideWeave)");
    } else if (errno != EINTR) {
      throw_os_error(errno, path_,
                     label() + " cannot read slots " + slot_span(first, size) + " of its file");
    }
  }
}

void FileBacked::write_bytes(int64_t first, const std::byte* in, std::size_t size) {
  const auto start = static_cast<off_t>(first) * static_cast<off_t>(itemsize_);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t put = ::pwrite(fd_, in + done, size - done, start + static_cast<off_t>(done));
    if (put >= 0) {
      done += static_cast<std::size_t>(put);
    } else if (errno != EINTR) {
      throw_os_error(errno, path_,
                     label() + " cannot write slots " + slot_span(first, size) + " of its file");
    }
  }
}

Value FileBacked::do_read(int64_t slot) const {
  std::vector<std::byte> item(itemsize_);
  read_bytes(slot, item.data(), itemsize_);
  return decode(dtype(), item.data());
}

void FileBacked::do_write(int64_t slot, const Value& coerced) {
  std::vector<std::byte> item(itemsize_);
  encode(dtype(), coerced, item.data());
  write_bytes(slot, item.data(), itemsize_);
}

void FileBacked::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  read_bytes(first, out, static_cast<std::size_t>(count) * itemsize_);
}

void FileBacked::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  write_bytes(first, in, static_cast<std::size_t>(count) * itemsize_);
}

void FileBacked::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  read_bytes(first, items.data(), items.size());
  for (int64_t i = 0; i < count; ++i) out[i] = decode(dtype(), items.data() + i * itemsize_);
}

void FileBacked::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  for (int64_t i = 0; i < count; ++i) encode(dtype(), coerced[i], items.data() + i * itemsize_);
  write_bytes(first, items.data(), items.size());
}

void FileBacked::do_allocate(int64_t n) { resize(n); }

void FileBacked::do_release() { close_file(); }

}  // namespace strideweave
