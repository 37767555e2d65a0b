// Error types of the StrideWeave core.
//
// Each class mirrors the Python exception the specs name, so the binding can
// translate them 1:1 (see src/bindings/errors.cc). Messages name the
// offending argument, value, class or carrier.
#pragma once

#include <stdexcept>
#include <string>

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

}  // namespace strideweave
