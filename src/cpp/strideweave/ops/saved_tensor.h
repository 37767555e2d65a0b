// SavedTensor (spec/autograd): an input a node saves for backward, with the
// version of its carrier and the count of moves it received at saving time, so
// that backward refuses a value that was modified, replaced by a move
// (spec/carrier-storage, "A successful move changes neither carrier's
// version") or released since. Part of autograd (namespace autograd); it
// lives with the operations whose nodes save their inputs.
//
// Thread safety: internally synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "strideweave/tensor/tensor.h"

namespace strideweave::autograd {

// An input tensor saved for backward, with the version token of its carrier
// and its Carrier::moves_received() at saving time.
class SavedTensor {
 public:
  // Saves `tensor` (single-subtensor), its carrier's current version and
  // moves_received();
  // nullptr saves nothing (unpack then returns nullptr until released).
  explicit SavedTensor(std::shared_ptr<const Tensor> tensor);
  SavedTensor(const SavedTensor&) = delete;
  SavedTensor& operator=(const SavedTensor&) = delete;

  // The saved tensor. Throws RuntimeError naming `operation`:
  //   - after release(): the graph was freed (backward through it a second
  //     time needs retain_graph=True);
  //   - when the carrier was released since saving, naming input `input` and
  //     the carrier;
  //   - when the carrier's version changed since saving, naming input `input`,
  //     the carrier and both versions;
  //   - when the carrier received a move since saving, naming input `input`,
  //     the carrier and both counts of moves received.
  std::shared_ptr<const Tensor> unpack(const std::string& operation, std::size_t input) const;

  // Drops the tensor; later unpacks fail as described.
  void release();

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Tensor> tensor_;
  uint64_t version_ = 0;
  uint64_t moves_received_ = 0;
  bool released_ = false;
};

}  // namespace strideweave::autograd
