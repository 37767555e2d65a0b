// Error types of the StrideWeave core.
//
// Each class mirrors the Python exception the specs name, so the binding can
// translate them 1:1 (see src/bindings/errors.cc). Messages name the
// offending argument, value, class or carrier.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace strideweave {

// The Python exception a core error stands for.
enum class ErrorKind {
  kTypeError,
  kValueError,
  kIndexError,
  kKeyError,
  kRuntimeError,
  kBufferError,
  kNotImplementedError,
  kMemoryError,
  kOSError,
};

// Base of every error the core throws on purpose.
class Error : public std::runtime_error {
 public:
  ErrorKind kind() const noexcept { return kind_; }

 protected:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

 private:
  ErrorKind kind_;
};

#define STRIDEWEAVE_DEFINE_ERROR(Name)                                                \
  class Name : public Error {                                                         \
   public:                                                                            \
    explicit Name(const std::string& message) : Error(ErrorKind::k##Name, message) {} \
  }

STRIDEWEAVE_DEFINE_ERROR(TypeError);
STRIDEWEAVE_DEFINE_ERROR(ValueError);
STRIDEWEAVE_DEFINE_ERROR(IndexError);
STRIDEWEAVE_DEFINE_ERROR(KeyError);
STRIDEWEAVE_DEFINE_ERROR(RuntimeError);
STRIDEWEAVE_DEFINE_ERROR(BufferError);
STRIDEWEAVE_DEFINE_ERROR(NotImplementedError);
STRIDEWEAVE_DEFINE_ERROR(MemoryError);

#undef STRIDEWEAVE_DEFINE_ERROR

// A failed operating-system call: the errno it set and the file it concerned.
// The binding raises the OSError subclass Python maps the errno to
// (FileNotFoundError for ENOENT, PermissionError for EACCES and EPERM, plain
// OSError for ENOSPC, EFBIG and others) with errno and filename set.
class OSError : public Error {
 public:
  OSError(int error_number, std::string path, const std::string& message)
      : Error(ErrorKind::kOSError, message), errno_(error_number), path_(std::move(path)) {}

  int error_number() const noexcept { return errno_; }
  const std::string& path() const noexcept { return path_; }

 private:
  int errno_;
  std::string path_;
};

}  // namespace strideweave
