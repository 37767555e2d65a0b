// The cotangent contract (spec/autograd), shared by backward() and every node
// that receives a gradient from outside the engine (a move's reverse route).
#pragma once

#include <string_view>

#include "strideweave/dtype/dtype.h"
#include "strideweave/layout/int_tuple.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::autograd {

// Checks that `cotangent` can stand for the gradient of a result of `shape`
// and `dtype`, in this order, each error naming `operation`:
//   NotImplementedError for a multi-subtensor tensor;
//   RuntimeError naming the carrier when it is released;
//   ValueError naming both shapes when the shapes differ;
//   ValueError stating that an injective gradient Layout is required when the
//   layout is not injective;
//   TypeError naming both dtypes when the dtypes differ.
// A non-Tensor is the binding's TypeError (it names the object). Touches no
// carrier slot and changes nothing.
void check_cotangent(const Tensor& cotangent, const IntTuple& shape, const DType& dtype,
                     std::string_view operation);

}  // namespace strideweave::autograd
