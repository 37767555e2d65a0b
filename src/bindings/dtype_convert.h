// The one conversion of dtype arguments, and the warning for NumPy and
// PyTorch data a factory narrows (spec/core-tensor-representation, "Dtype
// arguments name a strideweave dtype" and "Narrowing NumPy or PyTorch data
// warns").
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "strideweave/dtype/dtype.h"

namespace strideweave::bindings {

// The DType `obj` names: a strideweave DType as it is; Float32, Int32 or Bool
// for the NumPy dtypes float32, int32 and bool (an np.dtype or a scalar type
// such as np.float32), the PyTorch dtypes torch.float32, torch.int32 and
// torch.bool, and the strings "float32", "int32" and "bool". NumPy and
// PyTorch are recognised only when already imported (their objects cannot
// exist otherwise); neither is ever imported. Throws TypeError
// "<what> <object> is not a dtype StrideWeave accepts; ..." listing what is
// accepted for anything else, NumPy's and PyTorch's other dtypes included.
DType to_dtype(pybind11::handle obj, const std::string& what);

// None -> nullopt; anything else through to_dtype.
std::optional<DType> to_optional_dtype(pybind11::handle obj, const std::string& what);

// For a factory called without a dtype: when `data` is NumPy data (an
// ndarray or a NumPy scalar) or a PyTorch tensor of dtype float64 or int64,
// emits a UserWarning "<factory>: ... (float64 -> Float32) ...; pass
// dtype=..." attributed to the caller's line. Emits nothing for any other
// object. Returns whether it warned. A warning the filters turn into an
// exception propagates (thrown as pybind11::error_already_set) before the
// factory creates anything.
bool warn_if_narrowed(pybind11::handle data, const char* factory);

}  // namespace strideweave::bindings
