// Definition-owned routes on the request path (spec/interop-movement, "Move
// routes are exact and definition-owned", "Move dispatches on the exact
// carrier class pair") and the fault-injection hook at every stage of a move
// ("One asynchronous move publishes at one terminal boundary"); the Python
// suite binds the scenarios.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "testing/classed_carrier.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using Definition = ClassDescriptor::Definition;
using testing_util::Classed;
using testing_util::message_of;

std::vector<Value> floats(std::initializer_list<double> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

// Copies the source's span into the destination through the lease, on the
// thread start() runs on, or later on a thread of its own (`asynchronous`);
// records what prepare() saw.
class SpanProvider : public TransferProvider {
 public:
  explicit SpanProvider(bool asynchronous = false) : asynchronous_(asynchronous) {}

  std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer& request) override {
    ++prepared;
    seen_offset = request.offset;
    seen_count = request.element_count;
    seen_route = request.route->route_id;
    return std::make_shared<Transfer>(*this);
  }

  std::atomic<int> prepared{0};
  int64_t seen_offset = -1;
  int64_t seen_count = -1;
  std::string seen_route;
  std::atomic<bool> release_report{false};
  std::thread reporter;

 private:
  class Transfer : public PreparedTransfer {
   public:
    explicit Transfer(SpanProvider& provider) : provider_(provider) {}
    void start(const MoveTransfer& transfer, TransferDone done) override {
      const Subtensor& source = transfer.tensor->subtensor("test");
      transfer.destination_lease->write_range_values(
          0, source.carrier->read_range_values(source.offset, transfer.element_count));
      if (!provider_.asynchronous_) {
        done();
        return;
      }
      provider_.reporter = std::thread([this, done] {
        while (!provider_.release_report) std::this_thread::yield();
        done();
      });
    }
    bool runs_on_worker() const override { return false; }

   private:
    SpanProvider& provider_;
  };
  bool asynchronous_;
};

struct Classes {
  std::unique_ptr<ClassDescriptor> tiled =
      ClassDescriptor::carrier("Tiled", &CPU::static_class(), Definition::kOpen);
  std::unique_ptr<ClassDescriptor> sink =
      ClassDescriptor::carrier("Sink", &CPU::static_class(), Definition::kOpen);
  std::unique_ptr<ClassDescriptor> sub_tiled =
      ClassDescriptor::carrier("SubTiled", tiled.get(), Definition::kOpen);
  std::unique_ptr<ClassDescriptor> sub_sink =
      ClassDescriptor::carrier("SubSink", sink.get(), Definition::kOpen);
};

std::shared_ptr<CPU> cpu_of(const ClassDescriptor& cls, std::vector<Value> values) {
  return std::make_shared<Classed<CPU>>(cls, DType::Float32(), std::nullopt, std::move(values));
}

std::shared_ptr<CPU> empty_of(const ClassDescriptor& cls) {
  return std::make_shared<Classed<CPU>>(cls, DType::Float32());
}

void define(const ClassDescriptor& cls, std::vector<TransferRoute> routes, bool fallback) {
  cls.define(std::make_shared<const CarrierDefinition>(cls, std::move(routes), fallback));
}

TEST(interop_movement__move_routes_are_exact_and_definition_owned,
     resolve_an_exact_custom_route__cpp) {
  const Classes c;
  const auto provider = std::make_shared<SpanProvider>();
  define(*c.tiled, {TransferRoute{c.tiled.get(), c.sink.get(), "tiled->sink", provider}}, false);
  auto source = cpu_of(*c.tiled, floats({0, 1, 2, 3, 4}));
  auto destination = empty_of(*c.sink);
  const auto tensor = Tensor::make(source, Layout(3), 2);
  const auto result = MoveRequest::initiate(tensor, destination)->completion().wait();
  EXPECT_EQ(provider->prepared.load(), 1);
  EXPECT_EQ(provider->seen_route, "tiled->sink");
  EXPECT_EQ(provider->seen_offset, 2);
  EXPECT_EQ(provider->seen_count, 3);
  EXPECT_EQ(result->values(), floats({2, 3, 4}));
  EXPECT_TRUE(source->is_released());
  EXPECT_EQ(destination->version(), 0u);  // allocation and writes: no in-place mutation
  EXPECT_EQ(destination->moves_received(), 1u);
  EXPECT_EQ(c.sink->definition_state(), Definition::kFree);
}

TEST(interop_movement__move_routes_are_exact_and_definition_owned,
     refuse_inherited_transfer_support__cpp) {
  const Classes c;
  const auto provider = std::make_shared<SpanProvider>();
  define(*c.tiled, {TransferRoute{c.tiled.get(), c.sink.get(), "tiled->sink", provider}}, false);
  // A subclass destination: the definition has no route to it, and Tiled's
  // definition does not permit the fallback.
  auto source = cpu_of(*c.tiled, floats({1, 2}));
  auto sub_destination = empty_of(*c.sub_sink);
  const std::string m = message_of<NotImplementedError>(
      [&] { MoveRequest::initiate(Tensor::make(source, Layout(2)), sub_destination); });
  EXPECT_NE(m.find("from Tiled to SubSink"), std::string::npos) << m;
  EXPECT_EQ(provider->prepared.load(), 0);
  EXPECT_EQ(sub_destination->slots(), 0);  // refused before allocation
  EXPECT_EQ(sub_destination->version(), 0u);
  EXPECT_EQ(source->version(), 0u);
  EXPECT_EQ(source->pinned_by(), std::nullopt);
  EXPECT_FALSE(source->is_released());
  // A subclass source has no definition of its own: it is definition-free and
  // moves by the legacy contract's elementwise fallback, never by its parent's route.
  auto sub_source = cpu_of(*c.sub_tiled, floats({5, 6}));
  auto destination = empty_of(*c.sink);
  const auto result =
      MoveRequest::initiate(Tensor::make(sub_source, Layout(2)), destination)->completion().wait();
  EXPECT_EQ(result->values(), floats({5, 6}));
  EXPECT_EQ(provider->prepared.load(), 0);
  EXPECT_EQ(c.sub_tiled->definition_state(), Definition::kFree);
}

TEST(interop_movement__move_routes_are_exact_and_definition_owned,
     clause4__fallback_needs_both_definitions) {
  for (const bool source_permits : {false, true}) {
    for (const bool destination_permits : {false, true}) {
      const Classes c;
      define(*c.tiled, {}, source_permits);
      define(*c.sink, {}, destination_permits);
      auto source = cpu_of(*c.tiled, floats({1, 2}));
      auto destination = empty_of(*c.sink);
      const auto tensor = Tensor::make(source, Layout(2));
      if (source_permits && destination_permits) {
        EXPECT_EQ(MoveRequest::initiate(tensor, destination)->completion().wait()->values(),
                  floats({1, 2}));
        continue;
      }
      const std::string m =
          message_of<NotImplementedError>([&] { MoveRequest::initiate(tensor, destination); });
      EXPECT_NE(m.find("from Tiled to Sink"), std::string::npos) << m;
      EXPECT_EQ(destination->slots(), 0);
      EXPECT_EQ(source->pinned_by(), std::nullopt);
    }
  }
}

TEST(interop_movement__move_routes_are_exact_and_definition_owned,
     clause1__a_provider_refusal_changes_nothing) {
  class Refusing : public TransferProvider {
   public:
    std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer& request) override {
      throw ValueError("Refusing: offset " + std::to_string(request.offset) + " is not aligned");
    }
  };
  const Classes c;
  define(*c.tiled, {TransferRoute{c.tiled.get(), c.sink.get(), "r", std::make_shared<Refusing>()}},
         false);
  auto source = cpu_of(*c.tiled, floats({1, 2, 3}));
  auto destination = empty_of(*c.sink);
  const std::string m = message_of<ValueError>(
      [&] { MoveRequest::initiate(Tensor::make(source, Layout(2), 1), destination); });
  EXPECT_NE(m.find("offset 1 is not aligned"), std::string::npos) << m;
  EXPECT_EQ(destination->slots(), 0);
  EXPECT_EQ(source->pinned_by(), std::nullopt);
  EXPECT_EQ(destination->pinned_by(), std::nullopt);
}

TEST(interop_movement__pending_movement_preserves_lifetime_through_completion,
     clause2__an_asynchronous_provider_commits_when_it_reports) {
  const Classes c;
  const auto provider = std::make_shared<SpanProvider>(/*asynchronous=*/true);
  define(*c.tiled, {TransferRoute{c.tiled.get(), c.sink.get(), "async", provider}}, false);
  auto source = cpu_of(*c.tiled, floats({7, 8}));
  auto destination = empty_of(*c.sink);
  const auto request = MoveRequest::initiate(Tensor::make(source, Layout(2)), destination);
  EXPECT_FALSE(request->completion().done());
  EXPECT_EQ(source->pinned_by(), request->name());
  message_of<RuntimeError>([&] { source->write(0, 1.0); });  // pinned: no mutation
  message_of<RuntimeError>([&] { source->release(); });
  provider->release_report = true;
  EXPECT_EQ(request->completion().wait()->values(), floats({7, 8}));
  provider->reporter.join();
  EXPECT_TRUE(source->is_released());
  EXPECT_EQ(destination->pinned_by(), std::nullopt);
}

TEST(interop_movement__one_asynchronous_move_publishes_at_one_terminal_boundary,
     clause3__a_provider_that_drops_or_throws_fails_the_move) {
  class Dropping : public TransferProvider {
   public:
    explicit Dropping(bool throws) : throws_(throws) {}
    std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer&) override {
      return std::make_shared<Transfer>(throws_);
    }

   private:
    class Transfer : public PreparedTransfer {
     public:
      explicit Transfer(bool throws) : throws_(throws) {}
      void start(const MoveTransfer&, TransferDone) override {
        if (throws_) throw std::runtime_error("device lost");
      }

     private:
      bool throws_;
    };
    bool throws_;
  };
  for (const bool throws : {false, true}) {
    const Classes c;
    define(
        *c.tiled,
        {TransferRoute{c.tiled.get(), c.sink.get(), "lossy", std::make_shared<Dropping>(throws)}},
        false);
    auto source = cpu_of(*c.tiled, floats({1, 2}));
    auto destination = empty_of(*c.sink);
    const auto request = MoveRequest::initiate(Tensor::make(source, Layout(2)), destination);
    try {  // the transfer runs on a worker (runs_on_worker's default)
      request->completion().wait();
      ADD_FAILURE() << "the move succeeded";
    } catch (const RuntimeError& e) {
      EXPECT_FALSE(throws);
      EXPECT_NE(std::string(e.what()).find("route 'lossy' from Tiled to Sink dropped the transfer"),
                std::string::npos)
          << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(throws);
      EXPECT_STREQ(e.what(), "device lost");
    }
    EXPECT_FALSE(source->is_released());
    EXPECT_EQ(source->version(), 0u);
    EXPECT_EQ(source->pinned_by(), std::nullopt);
    EXPECT_EQ(destination->pinned_by(), std::nullopt);
  }
}

TEST(interop_movement__one_asynchronous_move_publishes_at_one_terminal_boundary,
     clause3__a_fault_at_any_stage_changes_nothing) {
  for (int s = 0; s < kMoveStages; ++s) {
    const auto stage = static_cast<MoveStage>(s);
    SCOPED_TRACE(move_stage_name(stage));
    auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1, 2, 3}));
    auto destination = std::make_shared<Generic>(DType::Float32());
    const auto fault = std::make_exception_ptr(RuntimeError("injected"));
    inject_move_fault(stage, fault);
    std::exception_ptr seen;
    try {
      const auto request = MoveRequest::initiate(Tensor::make(source, Layout(3)), destination);
      EXPECT_GE(s, static_cast<int>(MoveStage::kCopy)) << "initiate returned";
      EXPECT_TRUE(request->completion().done());
      request->completion().wait();
    } catch (const RuntimeError&) {
      seen = std::current_exception();
    }
    EXPECT_EQ(seen, fault);  // the identical exception object
    EXPECT_EQ(clear_move_faults(), 0);
    EXPECT_FALSE(source->is_released());
    EXPECT_EQ(source->version(), 0u);
    EXPECT_EQ(source->read_range_values(0, 3), floats({1, 2, 3}));
    EXPECT_EQ(source->pinned_by(), std::nullopt);
    EXPECT_EQ(destination->pinned_by(), std::nullopt);
    if (s < static_cast<int>(MoveStage::kSubmission)) {
      EXPECT_EQ(destination->slots(), 0);  // raised by initiate before allocating
      EXPECT_EQ(destination->version(), 0u);
    } else if (stage == MoveStage::kSubmission) {
      EXPECT_EQ(destination->read_range_values(0, 3), floats({0, 0, 0}));  // allocated, unwritten
      EXPECT_EQ(destination->version(), 1u);
    }
  }
}

}  // namespace
}  // namespace strideweave
