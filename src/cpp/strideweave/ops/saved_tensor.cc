#include "strideweave/ops/saved_tensor.h"

#include <string>
#include <utility>

#include "strideweave/carrier/carrier.h"
#include "strideweave/util/error.h"

namespace strideweave::autograd {

SavedTensor::SavedTensor(std::shared_ptr<const Tensor> tensor) : tensor_(std::move(tensor)) {
  if (!tensor_) return;
  const Carrier& carrier = *tensor_->subtensor("autograd").carrier;
  version_ = carrier.version();
  moves_received_ = carrier.moves_received();
}

std::shared_ptr<const Tensor> SavedTensor::unpack(const std::string& operation,
                                                  std::size_t input) const {
  std::shared_ptr<const Tensor> tensor;
  {
    std::lock_guard lock(mu_);
    if (released_) {
      throw RuntimeError(operation +
                         ": trying to backward through the graph a second time; its saved "
                         "tensors were freed by the first backward (use retain_graph=True to "
                         "backward through it again)");
    }
    tensor = tensor_;
  }
  if (!tensor) return tensor;
  const Carrier& carrier = *tensor->subtensor("autograd").carrier;
  if (carrier.is_released()) {
    throw RuntimeError(operation + ": saved input " + std::to_string(input) + " lives in " +
                       carrier.label() + ", which was released since it was saved");
  }
  const uint64_t now = carrier.version();
  if (now != version_) {
    throw RuntimeError(operation + ": saved input " + std::to_string(input) + " in " +
                       carrier.label() + " was modified after it was saved: version " +
                       std::to_string(version_) + " when saved, now " + std::to_string(now));
  }
  const uint64_t moves = carrier.moves_received();
  if (moves != moves_received_) {
    throw RuntimeError(operation + ": saved input " + std::to_string(input) + " in " +
                       carrier.label() +
                       " received a move after it was saved: " + std::to_string(moves_received_) +
                       " moves received when saved, now " + std::to_string(moves));
  }
  return tensor;
}

void SavedTensor::release() {
  std::shared_ptr<const Tensor> dropped;
  std::lock_guard lock(mu_);
  dropped.swap(tensor_);
  released_ = true;
}

}  // namespace strideweave::autograd
