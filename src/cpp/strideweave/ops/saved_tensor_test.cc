// SavedTensor refuses an input whose carrier changed since it was saved: a new
// version, a move received, a release (spec/autograd, "Saved inputs are
// checked against their versions"; spec/carrier-storage, "A successful move
// changes neither carrier's version").
#include "strideweave/ops/saved_tensor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave::autograd {
namespace {

using testing_util::message_of;

std::shared_ptr<CPU> carrier(std::vector<Value> values) {
  return std::make_shared<CPU>(DType::Float32(), std::nullopt, std::move(values));
}

TEST(carrier_storage__a_successful_move_changes_neither_carriers_version,
     refuse_backward_over_a_saved_input_whose_carrier_received_a_move) {
  const auto destination = carrier({3.0, 4.0});
  const SavedTensor saved(Tensor::make(destination, Layout(2)));
  EXPECT_NE(saved.unpack("mul", 1), nullptr);

  const uint64_t version = destination->version();
  MoveRequest::initiate(Tensor::make(carrier({7.0, 8.0}), Layout(2)), destination)
      ->completion()
      .wait();
  EXPECT_EQ(destination->version(), version);
  EXPECT_EQ(destination->moves_received(), 1u);

  const std::string m = message_of<RuntimeError>([&] { saved.unpack("mul", 1); });
  EXPECT_NE(m.find("mul: saved input 1 in " + destination->label() +
                   " received a move after it was saved: 0 moves received when saved, now 1"),
            std::string::npos)
      << m;
  // Saved after the move, the same carrier unpacks.
  EXPECT_NE(SavedTensor(Tensor::make(destination, Layout(2))).unpack("mul", 1), nullptr);
}

TEST(carrier_storage__a_successful_move_changes_neither_carriers_version,
     clause6__a_new_version_is_reported_before_a_move) {
  const auto destination = carrier({3.0, 4.0});
  const SavedTensor saved(Tensor::make(destination, Layout(2)));
  MoveRequest::initiate(Tensor::make(carrier({7.0, 8.0}), Layout(2)), destination)
      ->completion()
      .wait();
  destination->write(0, 1.0);
  const std::string m = message_of<RuntimeError>([&] { saved.unpack("mul", 1); });
  EXPECT_NE(m.find("was modified after it was saved: version 0 when saved, now 1"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace strideweave::autograd
