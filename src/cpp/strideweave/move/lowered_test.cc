#include "strideweave/move/lowered.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/profiling/profiler.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::shared_ptr<CPU> cpu_of(std::vector<Value> values) {
  return std::make_shared<CPU>(DType::Int32(), std::nullopt, std::move(values));
}

std::vector<Value> values_of(const Carrier& carrier) {
  return carrier.read_range_values(0, carrier.slots());
}

std::vector<Value> ints(std::initializer_list<int32_t> items) {
  std::vector<Value> out;
  for (int32_t v : items) out.emplace_back(v);
  return out;
}

TEST(LoweredTransfer, uses_the_registered_operation_of_the_exact_pair) {
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  EXPECT_EQ(&operation->operation_class(), &CpuToFileBackedMoveOperation::static_class());
  const auto fallback =
      lowered_operation("Test", CPU::static_class(), Generic::static_class(), DType::Int32());
  EXPECT_EQ(&fallback->operation_class(), &ElementwiseMoveOperation::static_class());
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     transfer_between_owned_parts_through_the_registered_operation) {
  const auto owner = cpu_of(ints({0}));
  const auto source = cpu_of(ints({1, 2, 3, 4, 5}));
  const auto destination = std::make_shared<FileBacked>(DType::Int32());
  owner->take_ownership(*source);
  owner->take_ownership(*destination);
  const uint64_t source_version = source->version();
  const uint64_t destination_version = destination->version();
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  lowered_transfer(*operation, "lowered #1", source, 1, 3, destination);
  EXPECT_EQ(values_of(*destination), ints({2, 3, 4}));
  EXPECT_EQ(source->version(), source_version);
  EXPECT_EQ(destination->version(), destination_version + 1);
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
  EXPECT_FALSE(source->is_released());
  EXPECT_EQ(destination->owner(), owner);
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     refuse_a_definition_backed_part) {
  const auto backed = ClassDescriptor::carrier("LoweredBacked", &CPU::static_class(),
                                               ClassDescriptor::Definition::kOpen);
  backed->define(std::make_shared<CarrierDefinition>(*backed, std::vector<TransferRoute>{}, true));
  const std::string m = message_of<TypeError>(
      [&] { lowered_operation("Evictable", *backed, CPU::static_class(), DType::Int32()); });
  EXPECT_NE(m.find("Evictable"), std::string::npos) << m;
  EXPECT_NE(m.find("LoweredBacked"), std::string::npos) << m;
}

// An operation whose pins do not accept the pair, or which does not support
// the dtype: lowered_operation refuses the edge, naming it and the operation,
// and changes no registration.
class Int32OnlyMove : public MoveOperation {
 public:
  static const ClassDescriptor& static_class() {
    static const ClassDescriptor& descriptor = builtin_operation_class<Int32OnlyMove>(
        "Int32OnlyMove", &MoveOperation::static_class(), nullptr, nullptr);
    return descriptor;
  }
  const ClassDescriptor& operation_class() const override { return static_class(); }
  bool supports_dtype(const DType& dtype) const override { return dtype == DType::Int32(); }
};

// A definition-free carrier class of its own, so that registering its pairs
// touches no pair another test uses.
const ClassDescriptor& edge_class(const char* name) {
  return *ClassDescriptor::carrier(name, &Generic::static_class(),
                                   ClassDescriptor::Definition::kFree)
              .release();
}

TEST(LoweredTransfer, an_operation_pinned_to_another_pair_is_refused) {
  const ClassDescriptor& from = edge_class("EdgeFrom");
  const ClassDescriptor& to = edge_class("EdgeTo");
  LegacyMoveRegistry& registry = LegacyMoveRegistry::global();
  registry.add(from, to, CpuToFileBackedMoveOperation::static_class());
  const std::string m =
      message_of<TypeError>([&] { lowered_operation("Evictable", from, to, DType::Int32()); });
  EXPECT_EQ(&registry.remove(from, to), &CpuToFileBackedMoveOperation::static_class());
  EXPECT_NE(m.find("Evictable: the edge EdgeFrom -> EdgeTo"), std::string::npos) << m;
  EXPECT_NE(m.find("CpuToFileBackedMoveOperation requires a source carrier of exact class CPU, "
                   "not EdgeFrom"),
            std::string::npos)
      << m;
}

TEST(LoweredTransfer, an_operation_without_the_dtype_is_refused) {
  const ClassDescriptor& from = edge_class("DtypeFrom");
  const ClassDescriptor& to = edge_class("DtypeTo");
  LegacyMoveRegistry& registry = LegacyMoveRegistry::global();
  registry.add(from, to, Int32OnlyMove::static_class());
  EXPECT_EQ(&lowered_operation("Evictable", from, to, DType::Int32())->operation_class(),
            &Int32OnlyMove::static_class());
  const std::string m =
      message_of<TypeError>([&] { lowered_operation("Evictable", from, to, DType::Float32()); });
  EXPECT_EQ(&registry.remove(from, to), &Int32OnlyMove::static_class());
  EXPECT_NE(m.find("Evictable: the edge DtypeFrom -> DtypeTo: the move operation Int32OnlyMove "
                   "does not support Float32"),
            std::string::npos)
      << m;
}

TEST(LoweredTransfer, parts_of_different_dtypes_are_refused_before_any_pin) {
  const auto source = cpu_of(ints({1, 2}));
  const auto destination = std::make_shared<Generic>(DType::Float32(), 2);
  const auto operation =
      lowered_operation("Test", CPU::static_class(), Generic::static_class(), DType::Int32());
  const uint64_t source_version = source->version();
  const uint64_t destination_version = destination->version();
  const std::string m = message_of<ValueError>(
      [&] { lowered_transfer(*operation, "lowered #3", source, 0, 2, destination); });
  EXPECT_NE(m.find("lowered #3: " + source->label() + " holds Int32 and " + destination->label() +
                   " holds Float32"),
            std::string::npos)
      << m;
  EXPECT_EQ(source->version(), source_version);
  EXPECT_EQ(destination->version(), destination_version);
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
}

TEST(LoweredTransfer, a_small_destination_is_refused_before_any_pin) {
  const auto source = cpu_of(ints({1, 2, 3}));
  const auto destination = cpu_of(ints({9, 9}));
  const auto operation =
      lowered_operation("Test", CPU::static_class(), CPU::static_class(), DType::Int32());
  const uint64_t version = destination->version();
  const std::string m = message_of<ValueError>(
      [&] { lowered_transfer(*operation, "lowered #2", source, 0, 3, destination); });
  EXPECT_NE(m.find(destination->label()), std::string::npos) << m;
  EXPECT_EQ(values_of(*destination), ints({9, 9}));
  EXPECT_EQ(destination->version(), version);
  EXPECT_FALSE(destination->pinned_by().has_value());
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     fail_a_lowered_transfer_by_an_injected_fault) {
  const auto source = cpu_of(ints({1, 2, 3}));
  const auto destination = std::make_shared<FileBacked>(DType::Int32());
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  const uint64_t version = source->version();
  inject_move_fault(MoveStage::kCopy,
                    std::make_exception_ptr(OSError(5, "tier", "injected tier failure")));
  const std::string m = message_of<OSError>(
      [&] { lowered_transfer(*operation, "lowered #3", source, 0, 3, destination); });
  EXPECT_NE(m.find("injected tier failure"), std::string::npos) << m;
  EXPECT_EQ(clear_move_faults(), 0);
  EXPECT_EQ(values_of(*source), ints({1, 2, 3}));
  EXPECT_EQ(source->version(), version);
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
  lowered_transfer(*operation, "lowered #4", source, 0, 3, destination);
  EXPECT_EQ(values_of(*destination), ints({1, 2, 3}));
}

// What a copy hook observed of the pair while it ran.
struct Observed {
  int calls = 0;
  std::thread::id thread;
  std::optional<std::string> source_pinned_by;
  std::optional<std::string> destination_pinned_by;
  bool source_readable_elsewhere = false;
  bool source_write_refused_elsewhere = false;
  bool destination_read_refused_elsewhere = false;
};

// ElementwiseMoveOperation whose copy hook first records what it observes of the
// pair from its own thread and from another one, then copies (or throws `fail`).
class ObservingCopy : public ElementwiseMoveOperation {
 public:
  explicit ObservingCopy(Observed& observed, std::exception_ptr fail = nullptr)
      : observed_(observed), fail_(std::move(fail)) {}
  void copy(const MoveTransfer& transfer) override {
    const std::shared_ptr<Carrier> source = transfer.tensor->subtensor("test").carrier;
    const std::shared_ptr<Carrier> destination = transfer.destination;
    ++observed_.calls;
    observed_.thread = std::this_thread::get_id();
    observed_.source_pinned_by = source->pinned_by();
    observed_.destination_pinned_by = destination->pinned_by();
    std::thread other([&] {
      try {
        static_cast<void>(source->read_range_values(0, source->slots()));
        observed_.source_readable_elsewhere = true;
      } catch (const RuntimeError&) {
      }
      try {
        source->write(0, int64_t{-7});
      } catch (const RuntimeError&) {
        observed_.source_write_refused_elsewhere = true;
      }
      try {
        static_cast<void>(destination->read_range_values(0, destination->slots()));
      } catch (const RuntimeError&) {
        observed_.destination_read_refused_elsewhere = true;
      }
    });
    other.join();
    if (fail_) std::rethrow_exception(fail_);
    ElementwiseMoveOperation::copy(transfer);
  }

 private:
  Observed& observed_;
  std::exception_ptr fail_;
};

// The number the next public move request will take ("move #N").
uint64_t next_request_number() {
  const auto source = cpu_of(ints({1}));
  const auto request = MoveRequest::initiate(Tensor::make(source, Layout(IntTuple(1)), 0),
                                             std::make_shared<Generic>(DType::Int32()));
  request->completion().wait();
  return std::stoull(request->name().substr(std::string("move #").size())) + 1;
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     clause1__the_dispatched_operations_hook_runs_with_both_parts_pinned) {
  // The operation class is the registry's for the exact pair, or the fallback.
  const auto sub_cpu = ClassDescriptor::carrier("LoweredClause1SubCPU", &CPU::static_class(),
                                                ClassDescriptor::Definition::kOpen);
  const ClassDescriptor* classes[] = {&CPU::static_class(), &FileBacked::static_class(),
                                      &Generic::static_class(), sub_cpu.get()};
  int registered = 0;
  for (const ClassDescriptor* source : classes) {
    for (const ClassDescriptor* destination : classes) {
      const auto operation = lowered_operation("Test", *source, *destination, DType::Int32());
      const ClassDescriptor* entry = LegacyMoveRegistry::global().find(*source, *destination);
      EXPECT_EQ(&operation->operation_class(),
                entry != nullptr ? entry : &ElementwiseMoveOperation::static_class())
          << source->name() << " -> " << destination->name();
      registered += entry != nullptr;
    }
  }
  EXPECT_GE(registered, 2);  // at least CPU <-> FileBacked
  // A subclass of a registered class does not inherit its pair's entry.
  EXPECT_EQ(LegacyMoveRegistry::global().find(*sub_cpu, FileBacked::static_class()), nullptr);
  EXPECT_EQ(&lowered_operation("Test", *sub_cpu, FileBacked::static_class(), DType::Int32())
                 ->operation_class(),
            &ElementwiseMoveOperation::static_class());
  // Its copy hook runs on the calling thread, the source pinned readable and the
  // destination pinned for writing.
  const auto owner = cpu_of(ints({0}));
  const auto source = cpu_of(ints({1, 2, 3, 4}));
  const auto destination = std::make_shared<CPU>(DType::Int32());
  owner->take_ownership(*source);
  owner->take_ownership(*destination);
  Observed observed;
  ObservingCopy operation(observed);
  lowered_transfer(operation, "lowered clause 1", source, 1, 3, destination);
  EXPECT_EQ(observed.calls, 1);
  EXPECT_EQ(observed.thread, std::this_thread::get_id());
  EXPECT_EQ(observed.source_pinned_by, "lowered clause 1");
  EXPECT_EQ(observed.destination_pinned_by, "lowered clause 1");
  EXPECT_TRUE(observed.source_readable_elsewhere);
  EXPECT_TRUE(observed.source_write_refused_elsewhere);
  EXPECT_TRUE(observed.destination_read_refused_elsewhere);
  EXPECT_EQ(values_of(*destination), ints({2, 3, 4}));
  EXPECT_EQ(values_of(*source), ints({1, 2, 3, 4}));
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     clause2__no_request_event_or_release_and_the_source_unchanged) {
  const auto owner = cpu_of(ints({0}));
  const auto source = cpu_of(ints({5, 6, 7}));
  const auto destination = std::make_shared<FileBacked>(DType::Int32());
  owner->take_ownership(*source);
  owner->take_ownership(*destination);
  const uint64_t source_version = source->version();
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  const uint64_t before = next_request_number();
  const auto session = profiling::Session::start();
  lowered_transfer(*operation, "lowered clause 2", source, 0, 3, destination);
  EXPECT_TRUE(session->events().empty());
  // No request was created in between: the next one takes the following number
  // (a request's handle and autograd node belong to it).
  EXPECT_EQ(next_request_number(), before + 1);
  EXPECT_FALSE(session->events().empty());  // the session does record a public move
  session->stop();
  EXPECT_EQ(values_of(*destination), ints({5, 6, 7}));
  EXPECT_EQ(values_of(*source), ints({5, 6, 7}));
  EXPECT_EQ(source->version(), source_version);
  EXPECT_FALSE(source->is_released());
  EXPECT_FALSE(destination->is_released());
  EXPECT_EQ(source->owner(), owner);
  EXPECT_EQ(destination->owner(), owner);
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     clause3__a_definition_backed_part_on_either_side_is_refused) {
  const auto backed = ClassDescriptor::carrier("LoweredClause3Backed", &CPU::static_class(),
                                               ClassDescriptor::Definition::kOpen);
  backed->define(std::make_shared<CarrierDefinition>(*backed, std::vector<TransferRoute>{}, true));
  const std::vector<std::function<void()>> calls = {
      [&] { lowered_operation("TiledEvictable", *backed, CPU::static_class(), DType::Int32()); },
      [&] { lowered_operation("TiledEvictable", CPU::static_class(), *backed, DType::Int32()); },
  };
  for (const auto& call : calls) {
    const std::string m = message_of<TypeError>(call);
    EXPECT_NE(m.find("TiledEvictable"), std::string::npos) << m;
    EXPECT_NE(m.find("LoweredClause3Backed"), std::string::npos) << m;
  }
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     clause4__an_injected_allocation_or_copy_fault_fails_it) {
  const auto operation =
      lowered_operation("Test", CPU::static_class(), Generic::static_class(), DType::Int32());
  for (const MoveStage stage : {MoveStage::kAllocation, MoveStage::kCopy}) {
    const auto source = cpu_of(ints({1, 2}));
    const auto destination = std::make_shared<Generic>(DType::Int32());
    const auto fault = std::make_exception_ptr(OSError(5, "stage", "injected stage fault"));
    inject_move_fault(stage, fault);
    try {
      lowered_transfer(*operation, "lowered clause 4", source, 0, 2, destination);
      ADD_FAILURE() << "the injected fault did not fail the transfer";
    } catch (const OSError& e) {
      EXPECT_NE(std::string(e.what()).find("injected stage fault"), std::string::npos);
    }
    EXPECT_EQ(clear_move_faults(), 0);  // the transfer consumed the armed fault
    lowered_transfer(*operation, "lowered clause 4", source, 0, 2, destination);
    EXPECT_EQ(values_of(*destination), ints({1, 2}));
  }
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     clause5__a_failed_transfer_ends_both_pins_and_keeps_the_source) {
  const auto source = cpu_of(ints({1, 2, 3}));
  const auto destination = cpu_of(ints({0, 0, 0}));
  const uint64_t version = source->version();
  Observed observed;
  ObservingCopy failing(observed, std::make_exception_ptr(ValueError("the hook failed")));
  EXPECT_EQ(message_of<ValueError>(
                [&] { lowered_transfer(failing, "lowered clause 5", source, 0, 3, destination); }),
            "the hook failed");
  EXPECT_EQ(observed.calls, 1);
  const auto operation =
      lowered_operation("Test", CPU::static_class(), CPU::static_class(), DType::Int32());
  inject_move_fault(MoveStage::kAllocation,
                    std::make_exception_ptr(OSError(5, "stage", "injected allocation fault")));
  EXPECT_THROW(lowered_transfer(*operation, "lowered clause 5", source, 0, 3, destination),
               OSError);
  EXPECT_EQ(clear_move_faults(), 0);
  for (const auto& carrier : {source, destination}) {
    EXPECT_FALSE(carrier->pinned_by().has_value());
    carrier->pin("after").end();  // nothing still holds a pin
  }
  EXPECT_EQ(values_of(*source), ints({1, 2, 3}));
  EXPECT_EQ(source->version(), version);
  destination->write(0, int64_t{9});  // publicly writable again
}

}  // namespace
}  // namespace strideweave
