#include "strideweave/backward/cotangent.h"

#include <string>

#include "strideweave/util/error.h"

namespace strideweave::autograd {

void check_cotangent(const Tensor& cotangent, const IntTuple& shape, const DType& dtype,
                     std::string_view operation) {
  const std::string op(operation);
  const Subtensor& s = cotangent.subtensor((op + " cotangent").c_str());
  if (s.carrier->is_released()) {
    throw RuntimeError(op + ": the cotangent lives in " + s.carrier->label() +
                       ", which is released");
  }
  if (cotangent.shape() != shape) {
    throw ValueError(op + ": the cotangent has shape " + cotangent.shape().to_string() +
                     ", the result has shape " + shape.to_string());
  }
  if (!s.layout.is_injective()) {
    throw ValueError(op + ": the cotangent's layout " + s.layout.to_string() +
                     " is not injective; an injective gradient Layout is required");
  }
  if (cotangent.dtype() != dtype) {
    throw TypeError(op + ": the cotangent has dtype " + cotangent.dtype().name() +
                    ", the result has dtype " + dtype.name());
  }
}

}  // namespace strideweave::autograd
