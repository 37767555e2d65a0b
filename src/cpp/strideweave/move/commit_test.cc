// The terminal commit's order, observed at the moments it happens rather than
// by a watching thread (spec/interop-movement, "One asynchronous move
// publishes at one terminal boundary"; operation-profiling, the completion
// event "recorded ... before the handle records its outcome"): a move whose
// transfer the test completes, a source carrier that looks at the destination
// when it is released, and a completion callback, which runs on the recording
// thread right after the outcome is recorded.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/move/transfer.h"
#include "strideweave/profiling/profiler.h"
#include "strideweave/util/error.h"
#include "testing/classed_carrier.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::Classed;
using testing_util::message_of;

// A definition-free carrier class of its own, so that registering its pairs
// touches no pair another test uses.
const ClassDescriptor& carrier_class(const char* name) {
  return *ClassDescriptor::carrier(name, &Generic::static_class(),
                                   ClassDescriptor::Definition::kFree)
              .release();
}

// What the destination looked like when the source was released.
struct AtRelease {
  bool released = false;
  bool destination_pinned = true;
  uint64_t destination_version = 0;
  uint64_t destination_moves_received = 0;
};

// A source that records, in do_release, the destination's state.
class WatchingSource final : public Classed<Generic> {
 public:
  WatchingSource(const ClassDescriptor& exact, std::shared_ptr<Carrier> destination,
                 std::vector<Value> values)
      : Classed<Generic>(exact, DType::Int32(), std::nullopt, std::move(values)),
        destination_(std::move(destination)) {}
  AtRelease at_release;

 protected:
  void do_release() override {
    at_release = {true, destination_->pinned_by().has_value(), destination_->version(),
                  destination_->moves_received()};
    Generic::do_release();
  }

 private:
  std::shared_ptr<Carrier> destination_;
};

// The transfer of the move under test: held until the test reports it.
std::optional<TransferDone> held_done;

// Copies through the elementwise walk and holds its report (a synchronous
// start that leaves the outcome to the test).
class HeldMove final : public ElementwiseMoveOperation {
 public:
  static const ClassDescriptor& static_class() {
    static const ClassDescriptor& descriptor = builtin_operation_class<HeldMove>(
        "HeldMove", &MoveOperation::static_class(), nullptr, nullptr);
    return descriptor;
  }
  const ClassDescriptor& operation_class() const override { return static_class(); }
  void start(const MoveTransfer& transfer, TransferDone done) override {
    copy(transfer);
    held_done.emplace(std::move(done));
  }
};

// A staged value of too few slots.
class ShortStage final : public StagedValue {
 public:
  explicit ShortStage(int64_t slots) : slots_(slots) {}
  int64_t slots() const override { return slots_; }
  void install(Lease&) override { ADD_FAILURE() << "a value that failed validation was installed"; }

 private:
  int64_t slots_;
};

// Stages a value one slot short of the result and reports success.
class ShortStagingMove final : public MoveOperation {
 public:
  static const ClassDescriptor& static_class() {
    static const ClassDescriptor& descriptor = builtin_operation_class<ShortStagingMove>(
        "ShortStagingMove", &MoveOperation::static_class(), nullptr, nullptr);
    return descriptor;
  }
  const ClassDescriptor& operation_class() const override { return static_class(); }
  bool stages_destination() const override { return true; }
  void start(const MoveTransfer& transfer, TransferDone done) override {
    *transfer.staged = std::make_shared<ShortStage>(transfer.element_count - 1);
    done();
  }
};

std::vector<Value> ints(std::initializer_list<int32_t> items) {
  return std::vector<Value>(items.begin(), items.end());
}

TEST(MoveCommit, publishes_the_destination_then_releases_the_source_then_records_the_outcome) {
  const ClassDescriptor& source_class = carrier_class("CommitSource");
  const ClassDescriptor& destination_class = carrier_class("CommitDestination");
  LegacyMoveRegistry::global().add(source_class, destination_class, HeldMove::static_class());
  auto destination = std::make_shared<Classed<Generic>>(destination_class, DType::Int32(), 3);
  auto source = std::make_shared<WatchingSource>(source_class, destination, ints({1, 2, 3}));
  const uint64_t destination_version = destination->version();

  const auto session = profiling::Session::start();
  const auto request = MoveRequest::initiate(Tensor::make(source, Layout(3)), destination);
  LegacyMoveRegistry::global().remove(source_class, destination_class);
  ASSERT_TRUE(held_done.has_value());
  ASSERT_FALSE(request->completion().done());

  // What holds at the moment the outcome is recorded.
  bool source_released = false;
  int completion_events = -1;
  request->completion().on_done([&] {
    source_released = source->is_released();
    completion_events = 0;
    for (const profiling::Event& event : session->events()) {
      if (event.kind == profiling::EventKind::kCompletion) ++completion_events;
    }
  });
  std::exchange(held_done, std::nullopt).value()();  // the commit runs on this thread
  session->stop();

  ASSERT_TRUE(request->completion().done());
  EXPECT_EQ(request->completion().wait()->values(), ints({1, 2, 3}));
  // The destination was unpinned, its version unchanged and the move counted as
  // received, before the source's release...
  ASSERT_TRUE(source->at_release.released);
  EXPECT_FALSE(source->at_release.destination_pinned);
  EXPECT_EQ(source->at_release.destination_version, destination_version);
  EXPECT_EQ(source->at_release.destination_moves_received, 1u);
  // ...and the source released, and the completion event recorded, before the outcome.
  EXPECT_TRUE(source_released);
  EXPECT_EQ(completion_events, 1);
}

TEST(MoveCommit, a_result_that_fails_validation_is_never_published) {
  const ClassDescriptor& source_class = carrier_class("ShortSource");
  const ClassDescriptor& destination_class = carrier_class("ShortDestination");
  LegacyMoveRegistry::global().add(source_class, destination_class,
                                   ShortStagingMove::static_class());
  auto destination = std::make_shared<Classed<Generic>>(destination_class, DType::Int32());
  auto source = std::make_shared<WatchingSource>(source_class, destination, ints({1, 2, 3}));
  const uint64_t source_version = source->version();
  const uint64_t destination_version = destination->version();

  const auto request = MoveRequest::initiate(Tensor::make(source, Layout(3)), destination);
  LegacyMoveRegistry::global().remove(source_class, destination_class);
  const std::string m = message_of<RuntimeError>([&] { request->completion().wait(); });
  EXPECT_NE(m.find("does not hold the 3 slots of the result"), std::string::npos) << m;
  EXPECT_FALSE(source->is_released());
  EXPECT_FALSE(source->at_release.released);
  EXPECT_EQ(source->version(), source_version);
  EXPECT_EQ(source->read_range_values(0, 3), ints({1, 2, 3}));
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
  EXPECT_EQ(destination->slots(), 0);  // nothing staged reached it
  EXPECT_EQ(destination->version(), destination_version);
  EXPECT_EQ(destination->moves_received(), 0u);
}

}  // namespace
}  // namespace strideweave
