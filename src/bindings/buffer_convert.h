// Python buffers (NumPy arrays, bytearray, memoryview, ...) as natively
// encoded carrier items, and native items as Python objects.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strideweave/dtype/dtype.h"

namespace strideweave::bindings {

// Whether `obj` is a buffer-protocol object to be read as raw items rather
// than iterated (lists and tuples are iterated even when they could be).
bool is_buffer(pybind11::handle obj);

// A C-contiguous view of a buffer whose items are natively encoded values of
// `dtype`: its format is dtype's own ('?', 'i', 'f'; any format of the item
// size for a compound dtype) or raw bytes ('B', 'b', 'c'). Releases the view
// on destruction.
class NativeBuffer {
 public:
  // Throws TypeError naming `what` when `obj` is not a C-contiguous buffer,
  // is read-only while `writable` is requested, or has a format that is not
  // dtype's or raw bytes.
  NativeBuffer(pybind11::handle obj, const DType& dtype, bool writable, const char* what);
  ~NativeBuffer();
  NativeBuffer(const NativeBuffer&) = delete;
  NativeBuffer& operator=(const NativeBuffer&) = delete;

  std::span<std::byte> bytes() const noexcept {
    return {static_cast<std::byte*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// The `count` natively encoded items of `dtype` at `data` as a list of Python
// bools, ints, floats or field tuples.
pybind11::list decode_items(const DType& dtype, const std::byte* data, int64_t count);

// Items in nested-list order (first leaf outermost) as nested lists, one
// level per extent; a single value when `extents` is empty.
pybind11::object nest_items(const DType& dtype, const std::byte* data,
                            const std::vector<int64_t>& extents);

}  // namespace strideweave::bindings
