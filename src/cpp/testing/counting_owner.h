// A DLPack ExportOwner for tests: heap blocks, counted, so a test can check
// that a managed tensor is released exactly once and that a failed export
// allocates nothing.
#pragma once

#include <cstddef>

#include "strideweave/interop/dlpack_export.h"

namespace strideweave::testing_util {

struct CountingOwner {
  int allocations = 0;
  int releases = 0;

  int live() const { return allocations - releases; }

  ExportOwner owner() { return ExportOwner{this, &allocate, &release}; }

 private:
  static void* allocate(void* self, std::size_t bytes) noexcept {
    ++static_cast<CountingOwner*>(self)->allocations;
    return ExportOwner::heap_allocate(nullptr, bytes);
  }
  static void release(void* self, void* block) noexcept {
    ++static_cast<CountingOwner*>(self)->releases;
    ExportOwner::heap_release(nullptr, block);
  }
};

}  // namespace strideweave::testing_util
