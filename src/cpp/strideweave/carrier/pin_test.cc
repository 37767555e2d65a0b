// Pins, leases and owner paths (spec/carrier-storage).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::vector<Value> ints(std::initializer_list<int64_t> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     refuse_mutation_of_a_pinned_carrier) {
  auto c = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({1, 2, 3}));
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  Lease lease = c->pin("move to Generic carrier #9");
  EXPECT_EQ(c->pinned_by(), "move to Generic carrier #9");
  EXPECT_FALSE(c->is_mutable());
  const std::vector<Value> three = ints({7, 7, 7});
  const std::array<std::byte, 4> item{};
  const std::vector<std::function<void()>> refused = {
      [&] { c->write(0, int64_t{5}); },         [&] { c->write_range(0, item); },
      [&] { c->write_range_values(0, three); }, [&] { c->release(); },
      [&] { owner->take_ownership(*c); },
  };
  for (const auto& call : refused) {
    const std::string m = message_of<RuntimeError>(call);
    EXPECT_NE(m.find(c->label()), std::string::npos) << m;
    EXPECT_NE(m.find("pinned by move to Generic carrier #9"), std::string::npos) << m;
  }
  EXPECT_EQ(c->version(), 0u);
  EXPECT_FALSE(c->is_released());
  EXPECT_EQ(c->owner(), nullptr);
  EXPECT_EQ(std::get<int64_t>(c->read(2)), 3);
  EXPECT_EQ(c->read_range_values(0, 3), ints({1, 2, 3}));
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier, write_through_the_lease) {
  auto c = std::make_shared<Generic>(DType::Int32(), 3);
  {
    Lease lease = c->pin("move");
    const std::vector<Value> values = ints({4, 5});
    lease.write_range_values(1, values);
    lease.write(0, int64_t{3});
    EXPECT_EQ(c->version(), 0u);  // the pin's writes count once, when it ends
    EXPECT_EQ(&lease.carrier(), c.get());
  }
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(c->read_range_values(0, 3), ints({3, 4, 5}));
  EXPECT_EQ(c->pinned_by(), std::nullopt);
  c->write(0, int64_t{1});
  EXPECT_EQ(c->version(), 2u);
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause7__an_admission_lets_public_writes_through_on_its_thread_only) {
  auto c = std::make_shared<CPU>(DType::Int32(), 2);
  Lease lease = c->pin("move");
  {
    const Lease::Admission admission = lease.admit();
    c->write(0, int64_t{4});
    std::string refused;
    std::thread other(
        [&] { refused = message_of<RuntimeError>([&] { c->write(1, int64_t{5}); }); });
    other.join();
    EXPECT_NE(refused.find("pinned by move"), std::string::npos) << refused;
  }
  EXPECT_THROW(c->write(1, int64_t{5}), RuntimeError);
  EXPECT_EQ(c->version(), 0u);
  lease.end();
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(c->read_range_values(0, 2), ints({4, 0}));
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause8__release_through_the_lease) {
  auto c = std::make_shared<CPU>(DType::Int32(), 2);
  Lease lease = c->pin("move");
  lease.release();
  EXPECT_TRUE(c->is_released());
  EXPECT_EQ(c->pinned_by(), std::nullopt);
  EXPECT_EQ(c->version(), 0u);
  EXPECT_FALSE(lease.active());
  EXPECT_THROW(lease.release(), RuntimeError);
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier, end_a_pin_exactly_once) {
  auto c = std::make_shared<CPU>(DType::Int32(), 1);
  Lease first = c->pin("move");
  Lease moved = std::move(first);
  EXPECT_FALSE(first.active());
  first.end();
  EXPECT_EQ(c->pinned_by(), "move");
  moved.end();
  EXPECT_EQ(c->pinned_by(), std::nullopt);
  Lease second = c->pin("evict");
  moved.end();
  EXPECT_EQ(c->pinned_by(), "evict");
  const std::string m = message_of<RuntimeError>([&] { moved.write(0, int64_t{1}); });
  EXPECT_NE(m.find("lease of move has ended"), std::string::npos) << m;
  EXPECT_EQ(c->version(), 0u);
  second = c->new_like()->pin("other");  // assigning ends the pin it held
  EXPECT_EQ(c->pinned_by(), std::nullopt);
  EXPECT_TRUE(c->is_mutable());
}

// allocate_for_overwrite: the slots allocate() would give, unspecified until
// written (a CPU buffer is left unzeroed; Generic's default zeroes them), with
// allocate()'s version count and refusals.
TEST(Lease, allocate_for_overwrite_allocates_as_allocate_without_promising_zeros) {
  for (const bool cpu : {true, false}) {
    std::shared_ptr<Carrier> c =
        cpu ? std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Int32()))
            : std::make_shared<Generic>(DType::Int32());
    Lease lease = c->pin("lowered", Carrier::PinAccess::kWriting);
    lease.allocate_for_overwrite(4);
    EXPECT_EQ(c->slots(), 4);
    const std::vector<int32_t> values{4, 5, 6};
    lease.write_range(0, std::as_bytes(std::span(values)));
    const std::string m = message_of<RuntimeError>([&] { lease.allocate_for_overwrite(2); });
    EXPECT_NE(m.find("already holds 4 slots"), std::string::npos) << m;
    lease.end();
    EXPECT_EQ(c->version(), 1u);  // the pin's writes, the allocation among them, count once
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(c->read(i), Value(int64_t{4 + i}));
    if (!cpu) {
      EXPECT_EQ(c->read(3), Value(int64_t{0}));  // the default allocation zeroes
    }
  }
}

// A pin that allocated for overwrite and ends without writing (a move that
// failed before its transfer wrote) leaves the slots as allocate() would:
// zeroed, with the allocation counted as the pin's one write.
TEST(Lease, an_allocation_for_overwrite_never_written_ends_zeroed) {
  for (const bool release_instead : {false, true}) {
    // A CPU buffer from the cache of freed mappings keeps what it held: fill
    // one, free it, and allocate the same size for overwrite.
    const int64_t n = int64_t{1} << 20;  // 4 MiB of Int32: a mapped buffer
    {
      auto previous = std::make_shared<CPU>(DType::Int32(), n);
      Lease lease = previous->pin("fill");
      const std::vector<int32_t> sevens(static_cast<std::size_t>(n), 7);
      lease.write_range(0, std::as_bytes(std::span(sevens)));
    }
    auto c = std::make_shared<CPU>(DType::Int32());
    Lease lease = c->pin("move #1", Carrier::PinAccess::kWriting);
    lease.allocate_for_overwrite(n);
    if (release_instead) {
      lease.release();
      EXPECT_TRUE(c->is_released());
      continue;
    }
    lease.end();
    EXPECT_EQ(c->slots(), n);
    EXPECT_EQ(c->version(), 1u);
    std::vector<int32_t> read(static_cast<std::size_t>(n), -1);
    c->read_range(0, n, std::as_writable_bytes(std::span(read)));
    EXPECT_EQ(std::count(read.begin(), read.end(), 0), n);
  }
}

// A move's terminal commit ends its destination's pin with no version change,
// whatever the lease wrote, and counts the move received.
TEST(carrier_storage__a_successful_move_changes_neither_carriers_version,
     clause3__commit_a_move_through_the_lease) {
  auto c = std::make_shared<CPU>(DType::Int32());
  const VersionToken token = c->version_token();
  Lease lease = c->pin("move #1", Carrier::PinAccess::kWriting);
  lease.allocate(2);
  lease.write(0, int64_t{5});
  lease.mark_written();
  lease.commit_move();
  EXPECT_FALSE(lease.active());
  EXPECT_EQ(c->pinned_by(), std::nullopt);
  EXPECT_TRUE(c->is_mutable());
  EXPECT_EQ(c->version(), 0u);
  EXPECT_TRUE(token.is_current());
  EXPECT_EQ(c->moves_received(), 1u);
  EXPECT_EQ(c->read(0), Value(int64_t{5}));
  const std::string m = message_of<RuntimeError>([&] { lease.commit_move(); });
  EXPECT_NE(m.find("lease of move #1 has ended"), std::string::npos) << m;
  EXPECT_EQ(c->moves_received(), 1u);

  // A pin that ends otherwise counts its writes once and receives no move.
  Lease other = c->pin("move #2", Carrier::PinAccess::kWriting);
  other.write(1, int64_t{6});
  other.end();
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(c->moves_received(), 1u);
  c->write(0, int64_t{7});
  EXPECT_EQ(c->version(), 2u);
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier, clause3__refuse_a_second_pin) {
  auto c = std::make_shared<CPU>(DType::Int32(), 1);
  Lease lease = c->pin("move");
  const std::string m = message_of<RuntimeError>([&] { c->pin("evict"); });
  EXPECT_NE(m.find("evict cannot pin"), std::string::npos) << m;
  EXPECT_NE(m.find("pinned by move"), std::string::npos) << m;
  lease.end();
  c->release();
  EXPECT_NE(message_of<RuntimeError>([&] { c->pin("evict"); }).find("released"), std::string::npos);
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     refuse_reads_of_a_carrier_pinned_for_writing__cpp) {
  auto c = std::make_shared<CPU>(DType::Int32(), 3);
  const auto t = Tensor::make(c, Layout(3));
  Lease lease = c->pin("move #9", Carrier::PinAccess::kWriting);
  lease.write_range_values(0, std::vector<Value>{Value(int64_t{4}), Value(int64_t{5})});
  const std::vector<std::function<void()>> reads = {
      [&] { c->read(0); },
      [&] { c->read_range(0, 3); },
      [&] { c->read_range_values(0, 3); },
      [&] { t->values(); },
      [&] { c->require_not_being_written("DLPack export"); },
  };
  for (const auto& read : reads) {
    const std::string m = message_of<RuntimeError>(read);
    EXPECT_NE(m.find(c->label() + ", which is pinned by move #9"), std::string::npos) << m;
  }
  EXPECT_EQ(c->slots(), 3);
  EXPECT_EQ(c->pinned_by(), "move #9");
  {
    const Lease::Admission admitted = lease.admit();  // the pinning operation's own thread
    EXPECT_EQ(c->read(1), Value(int64_t{5}));
    std::thread other([&] { message_of<RuntimeError>([&] { c->read(1); }); });
    other.join();
  }
  lease.end();
  EXPECT_EQ(t->values(),
            (std::vector<Value>{Value(int64_t{4}), Value(int64_t{5}), Value(int64_t{0})}));
  // A readable pin (the default, a move's source) lets reads continue.
  Lease readable = c->pin("move #10");
  EXPECT_EQ(c->read(0), Value(int64_t{4}));
}

// Native Int32 encoding of `xs`.
std::vector<std::byte> int32_bytes(std::initializer_list<int32_t> xs) {
  std::vector<std::byte> out(xs.size() * sizeof(int32_t));
  std::memcpy(out.data(), std::data(xs), out.size());
  return out;
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause10__write_host_memory_in_place_under_one_hold_of_the_lock) {
  auto c = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({1, 2, 3, 4}));
  Lease lease = c->pin("move");
  const std::vector<std::byte> items = int32_bytes({7, 8});
  std::byte* storage = c->data();
  lease.write_locked([&](const SlotWriter& writer) {
    EXPECT_EQ(core_locks_held(), 1);  // the carrier's mutex, held for the whole call
    std::byte* at = writer.host_range(1, 2);
    ASSERT_NE(at, nullptr);
    EXPECT_EQ(at, storage + sizeof(int32_t));  // the storage itself, not a copy
    std::memcpy(at, items.data(), items.size());
  });
  EXPECT_EQ(core_locks_held(), 0);
  EXPECT_EQ(c->read_range_values(0, 4), ints({1, 7, 8, 4}));
  EXPECT_EQ(c->version(), 0u);  // counted once, when the pin ends
  lease.write_locked([&](const SlotWriter& writer) { writer.write_range(3, 1, items.data()); });
  lease.end();
  EXPECT_EQ(c->version(), 1u);
  EXPECT_EQ(c->read_range_values(0, 4), ints({1, 7, 8, 7}));
  EXPECT_TRUE(c->is_mutable());
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause10__write_storage_that_is_not_host_memory_by_ranges) {
  auto c = std::make_shared<Generic>(DType::Bool(), std::nullopt,
                                     std::vector<Value>{false, false, false});
  Lease lease = c->pin("move");
  const std::array<std::byte, 2> ones{std::byte{1}, std::byte{1}};
  const std::array<std::byte, 2> invalid{std::byte{1}, std::byte{2}};
  std::string bad_item;
  lease.write_locked([&](const SlotWriter& writer) {
    EXPECT_EQ(writer.host_range(0, 3), nullptr);
    writer.write_range(1, 2, ones.data());
    bad_item = message_of<ValueError>([&] { writer.write_range(0, 2, invalid.data()); });
    EXPECT_THROW(writer.write_range(2, 2, ones.data()), IndexError);
    EXPECT_THROW(writer.host_range(-1, 1), IndexError);
    EXPECT_THROW(writer.write_range(0, -1, ones.data()), ValueError);
  });
  EXPECT_NE(bad_item.find("item 1 holds the byte 2"), std::string::npos) << bad_item;
  lease.end();
  EXPECT_EQ(c->read_range_values(0, 3), (std::vector<Value>{false, true, true}));
  EXPECT_EQ(c->version(), 1u);
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause10__a_failed_locked_write_counts_and_unlocks) {
  auto c = std::make_shared<CPU>(DType::Int32(), 2);
  Lease lease = c->pin("move");
  EXPECT_THROW(lease.write_locked([](const SlotWriter&) { throw std::runtime_error("copy"); }),
               std::runtime_error);
  EXPECT_EQ(core_locks_held(), 0);
  EXPECT_EQ(c->slots(), 2);  // the lock is free again
  lease.end();
  EXPECT_EQ(c->version(), 1u);  // the slots it may have reached are unspecified
}

TEST(carrier_storage__an_operation_in_progress_can_pin_a_carrier,
     clause10__a_locked_write_follows_the_leases_refusals) {
  auto frozen = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({1}), false);
  Lease pinned = frozen->pin("move");
  bool called = false;
  const std::string immutable = message_of<RuntimeError>(
      [&] { pinned.write_locked([&](const SlotWriter&) { called = true; }); });
  EXPECT_NE(immutable.find("constructed immutable"), std::string::npos) << immutable;
  pinned.end();
  EXPECT_EQ(frozen->version(), 0u);
  auto c = std::make_shared<CPU>(DType::Int32(), 1);
  Lease ended = c->pin("move");
  ended.end();
  const std::string m = message_of<RuntimeError>(
      [&] { ended.write_locked([&](const SlotWriter&) { called = true; }); });
  EXPECT_NE(m.find("lease of move has ended"), std::string::npos) << m;
  EXPECT_FALSE(called);
  EXPECT_EQ(c->version(), 0u);
  auto abstract = std::make_shared<Generic>(DType::Any(), 1);
  Lease any = abstract->pin("move");
  any.write_locked(
      [](const SlotWriter& writer) { EXPECT_THROW(writer.host_range(0, 1), TypeError); });
}

TEST(carrier_storage__release_relinquishes_storage_once, refuse_to_release_a_pinned_carrier) {
  auto c = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({1, 2}));
  Lease lease = c->pin("move");
  const std::string m = message_of<RuntimeError>([&] { c->release(); });
  EXPECT_NE(m.find("release of " + c->label()), std::string::npos) << m;
  EXPECT_FALSE(c->is_released());
  EXPECT_EQ(c->slots(), 2);
  EXPECT_NE(c->dlpack_info().pointer, 0u);
  lease.end();
  c->release();
  EXPECT_TRUE(c->is_released());
  EXPECT_EQ(c->version(), 0u);
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     write_an_owned_carrier_through_the_owner_path) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32(), 3);
  auto stranger = std::make_shared<CPU>(DType::Int32(), 1);
  EXPECT_NE(message_of<ValueError>([&] { owner->owner_path(*owned); }).find("does not own"),
            std::string::npos);
  owner->take_ownership(*owned);
  OwnerPath path = owner->owner_path(*owned);
  const std::vector<Value> values = ints({8, 9});
  path.write_range_values(1, values);
  EXPECT_EQ(owned->read_range_values(0, 3), ints({0, 8, 9}));
  EXPECT_EQ(owned->version(), 1u);
  const std::string refused =
      message_of<RuntimeError>([&] { owned->write_range_values(0, values); });
  EXPECT_NE(refused.find("owned by " + owner->label()), std::string::npos) << refused;
  EXPECT_EQ(owned->version(), 1u);
  {
    Lease lease = owned->pin("move");
    const std::string pinned = message_of<RuntimeError>([&] { path.write(0, int64_t{1}); });
    EXPECT_NE(pinned.find("pinned by move"), std::string::npos) << pinned;
  }
  EXPECT_THROW(path.write(5, int64_t{1}), IndexError);
  EXPECT_THROW(path.write(0, 2.5), TypeError);
  owner->relinquish(*owned);
  const std::string ended = message_of<RuntimeError>([&] { path.write(0, int64_t{1}); });
  EXPECT_NE(ended.find("no longer owns"), std::string::npos) << ended;
  EXPECT_EQ(owned->version(), 1u);
  EXPECT_EQ(owned->read_range_values(0, 3), ints({0, 8, 9}));
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     clause2__refuse_an_immutable_or_released_owned_carrier) {
  auto owner = std::make_shared<CPU>(DType::Int32(), 1);
  auto frozen = std::make_shared<CPU>(DType::Int32(), 2, std::nullopt, false);
  owner->take_ownership(*frozen);
  OwnerPath path = owner->owner_path(*frozen);
  EXPECT_NE(
      message_of<RuntimeError>([&] { path.write(0, int64_t{1}); }).find("constructed immutable"),
      std::string::npos);
  path.release();
  EXPECT_NE(message_of<RuntimeError>([&] { path.write(0, int64_t{1}); }).find("released"),
            std::string::npos);
  EXPECT_EQ(frozen->version(), 0u);
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     clause4__only_the_owner_releases_an_owned_carrier) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32(), 2);
  owner->take_ownership(*owned);
  const std::string refused = message_of<RuntimeError>([&] { owned->release(); });
  EXPECT_NE(refused.find("release of " + owned->label()), std::string::npos) << refused;
  EXPECT_NE(refused.find("owned by " + owner->label()), std::string::npos) << refused;
  EXPECT_FALSE(owned->is_released());
  EXPECT_EQ(owned->slots(), 2);
  EXPECT_EQ(owned->owner(), owner);
  OwnerPath path = owner->owner_path(*owned);
  {
    Lease lease = owned->pin("move");
    const std::string pinned = message_of<RuntimeError>([&] { path.release(); });
    EXPECT_NE(pinned.find("pinned by move"), std::string::npos) << pinned;
    EXPECT_FALSE(owned->is_released());
  }
  path.release();
  EXPECT_TRUE(owned->is_released());
  EXPECT_EQ(owned->slots(), 0);
  EXPECT_EQ(owned->version(), 0u);
  EXPECT_EQ(owned->owner(), owner);
  path.release();  // idempotent
  owned->release();
  EXPECT_TRUE(owned->is_released());
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     clause4__the_owner_allocates_an_empty_owned_carrier) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32());
  owner->take_ownership(*owned);
  EXPECT_NE(message_of<RuntimeError>([&] { owned->allocate(3); }).find("owned by"),
            std::string::npos);
  OwnerPath path = owner->owner_path(*owned);
  path.allocate(3);
  EXPECT_EQ(owned->slots(), 3);
  EXPECT_EQ(owned->version(), 1u);
  owner->relinquish(*owned);
  const std::string ended = message_of<RuntimeError>([&] { path.release(); });
  EXPECT_NE(ended.find("no longer owns"), std::string::npos) << ended;
  EXPECT_FALSE(owned->is_released());
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     clause1__only_the_owner_obtains_an_owner_path) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto other_owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32(), 3);
  auto unowned = std::make_shared<CPU>(DType::Int32(), 3);
  owner->take_ownership(*owned);
  const std::vector<std::function<void()>> refused = {
      [&] { owner->owner_path(*unowned); },      // owned by no one
      [&] { other_owner->owner_path(*owned); },  // owned by another carrier
      [&] { owned->owner_path(*owner); },        // the reverse relation
  };
  for (const auto& call : refused) {
    const std::string m = message_of<ValueError>(call);
    EXPECT_NE(m.find("does not own"), std::string::npos) << m;
  }
  OwnerPath path = owner->owner_path(*owned);
  const std::vector<Value> values = ints({4, 5, 6});
  path.write_range_values(0, values);
  path.write(2, int64_t{7});
  EXPECT_EQ(owned->read_range_values(0, 3), ints({4, 5, 7}));
  EXPECT_EQ(owned->version(), 2u);
  owner->relinquish(*owned);
  EXPECT_NE(message_of<ValueError>([&] { owner->owner_path(*owned); }).find("does not own"),
            std::string::npos);
  EXPECT_EQ(owned->version(), 2u);
  EXPECT_EQ(unowned->version(), 0u);
}

TEST(carrier_storage__an_owner_writes_its_owned_carriers_through_an_owner_path,
     clause3__the_public_entry_points_keep_refusing_an_owned_carrier) {
  auto owner = std::make_shared<Generic>(DType::Int32(), 1);
  auto owned = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({1, 2, 3}));
  auto empty = std::make_shared<CPU>(DType::Int32());
  owner->take_ownership(*owned);
  owner->take_ownership(*empty);
  OwnerPath path = owner->owner_path(*owned);
  const std::vector<Value> three = ints({7, 7, 7});
  const std::array<std::byte, 4> item{};
  const std::vector<std::function<void()>> refused = {
      [&] { owned->write(0, int64_t{5}); },
      [&] { owned->write_range(0, item); },
      [&] { owned->write_range_values(0, three); },
      [&] { owned->release(); },
      [&] { empty->allocate(2); },
  };
  // Before the owner writes, between its writes through the path, and after.
  for (int round = 0; round < 3; ++round) {
    for (const auto& call : refused) {
      const std::string m = message_of<RuntimeError>(call);
      EXPECT_NE(m.find("owned by " + owner->label()), std::string::npos) << m;
    }
    EXPECT_EQ(owned->version(), static_cast<uint64_t>(round));
    EXPECT_FALSE(owned->is_released());
    EXPECT_EQ(empty->slots(), 0);
    if (round < 2) path.write(round, int64_t{10 + round});
  }
  EXPECT_EQ(owned->read_range_values(0, 3), ints({10, 11, 3}));
  EXPECT_EQ(owned->owner(), owner);
  EXPECT_EQ(empty->version(), 0u);
}

}  // namespace
}  // namespace strideweave
