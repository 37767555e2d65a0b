#include "strideweave/move/carrier_definition.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using Definition = ClassDescriptor::Definition;
using testing_util::message_of;

class NoopProvider : public TransferProvider {
 public:
  std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer&) override { return nullptr; }
};

std::unique_ptr<ClassDescriptor> carrier_class(const char* name) {
  return ClassDescriptor::carrier(name, &CPU::static_class(), Definition::kOpen);
}

TransferRoute route(const ClassDescriptor& from, const ClassDescriptor& to, std::string id) {
  return TransferRoute{&from, &to, std::move(id), std::make_shared<NoopProvider>()};
}

TEST(CarrierDefinition, routes_match_their_exact_destination_only) {
  const auto tiled = carrier_class("Tiled");
  const auto sink = carrier_class("Sink");
  const auto sub_sink = ClassDescriptor::carrier("SubSink", sink.get(), Definition::kOpen);
  const CarrierDefinition definition(*tiled, {route(*tiled, *sink, "tiled->sink")}, false);
  ASSERT_NE(definition.route_to(*sink), nullptr);
  EXPECT_EQ(definition.route_to(*sink)->route_id, "tiled->sink");
  EXPECT_EQ(definition.route_to(*sub_sink), nullptr);
  EXPECT_EQ(definition.route_to(CPU::static_class()), nullptr);
  EXPECT_FALSE(definition.elementwise_fallback());
}

TEST(CarrierDefinition, malformed_routes_are_refused) {
  const auto tiled = carrier_class("Tiled");
  const auto sink = carrier_class("Sink");
  const std::string wrong_source = message_of<ValueError>(
      [&] { CarrierDefinition(*tiled, {route(*sink, *tiled, "backwards")}, false); });
  EXPECT_NE(wrong_source.find("route 'backwards' starts at Sink"), std::string::npos)
      << wrong_source;
  EXPECT_THROW(CarrierDefinition(*tiled, {route(*tiled, *sink, "")}, false), ValueError);
  EXPECT_THROW(
      CarrierDefinition(*tiled, {route(*tiled, *sink, "a"), route(*tiled, *sink, "b")}, false),
      ValueError);
  TransferRoute no_provider = route(*tiled, *sink, "p");
  no_provider.provider = nullptr;
  EXPECT_THROW(CarrierDefinition(*tiled, {no_provider}, false), ValueError);
  const auto op = ClassDescriptor::move_operation("Op", nullptr, nullptr, nullptr);
  EXPECT_THROW(CarrierDefinition(*op, {}, false), TypeError);
  EXPECT_THROW(CarrierDefinition(*tiled, {route(*tiled, *op, "to-op")}, false), TypeError);
}

TEST(CarrierDefinition, define_seals_an_open_class_once) {
  const auto tiled = carrier_class("Tiled");
  auto definition =
      std::make_shared<const CarrierDefinition>(*tiled, std::vector<TransferRoute>{}, true);
  tiled->define(definition);
  EXPECT_EQ(tiled->definition_state(), Definition::kBacked);
  EXPECT_EQ(tiled->definition(), definition.get());
  EXPECT_EQ(tiled->seal(), Definition::kBacked);
  const std::string again = message_of<RuntimeError>([&] { tiled->define(definition); });
  EXPECT_NE(again.find("Tiled is sealed with a CarrierDefinition"), std::string::npos) << again;
}

TEST(CarrierDefinition, a_class_that_took_part_in_dispatch_cannot_be_defined) {
  const auto observed = carrier_class("Observed");
  observed->seal();
  const auto definition =
      std::make_shared<const CarrierDefinition>(*observed, std::vector<TransferRoute>{}, false);
  const std::string m = message_of<RuntimeError>([&] { observed->define(definition); });
  EXPECT_NE(m.find("sealed definition-free"), std::string::npos) << m;
  EXPECT_EQ(observed->definition(), nullptr);
  EXPECT_THROW(CPU::static_class().define(definition), RuntimeError);
}

TEST(CarrierDefinition, define_and_seal_race_to_one_state) {
  for (int round = 0; round < 100; ++round) {
    const auto racing = carrier_class("Racing");
    const auto definition =
        std::make_shared<const CarrierDefinition>(*racing, std::vector<TransferRoute>{}, false);
    bool defined = false;
    std::thread definer([&] {
      try {
        racing->define(definition);
        defined = true;
      } catch (const RuntimeError&) {
      }
    });
    std::thread sealer([&] { racing->seal(); });
    definer.join();
    sealer.join();
    EXPECT_EQ(racing->definition_state(), defined ? Definition::kBacked : Definition::kFree);
    EXPECT_EQ(racing->definition(), defined ? definition.get() : nullptr);
  }
}

}  // namespace
}  // namespace strideweave
