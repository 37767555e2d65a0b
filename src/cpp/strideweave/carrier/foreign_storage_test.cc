// ForeignStorageCarrier and its gate (carrier_mutex.h), without Python: a C++
// subclass stands in for a Python one (spec/carrier-storage, the Python
// storage requirements; the Python suite binds the scenarios). Run under
// ThreadSanitizer by tox -e tsan.
#include "strideweave/carrier/foreign_storage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/exec/foreign_wait.h"
#include "strideweave/move/request.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

// Slots in a byte vector. Each hook records the core locks and gates its
// thread held, and can block until released, or call back into the carrier.
class VectorStorage final : public ForeignStorageCarrier {
 public:
  explicit VectorStorage(DType dtype) : ForeignStorageCarrier("VectorStorage", dtype, true) {}

  const ClassDescriptor& carrier_class() const override { return static_class(); }
  std::shared_ptr<Carrier> new_like() const override {
    auto made = std::make_shared<VectorStorage>(dtype());
    made->initialize(std::nullopt, std::nullopt);
    return made;
  }

  std::vector<std::byte> bytes;
  mutable std::atomic<int> range_calls{0};
  mutable std::atomic<int> max_core_locks{0};
  mutable std::atomic<int> max_gates{0};
  bool call_back = false;
  bool corrupt_bool = false;
  // Started writes wait, unwritten, for finish() (storage_start_write).
  bool defer_writes = false;

  // Waits until a started write is pending.
  void wait_pending() {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return pending_done != nullptr; });
  }
  // Lands the pending write (unless `error`) and reports it.
  void finish(std::exception_ptr error = nullptr) {
    WriteDone done;
    {
      const std::lock_guard lock(mu);
      done = std::move(pending_done);
      pending_done = nullptr;
      if (!error) std::memcpy(bytes.data() + pending_first, pending.data(), pending.size());
    }
    done(error);
  }

  // Makes the next read wait until resume(); entered() tells when it waits.
  void block_next_read() {
    const std::lock_guard lock(mu);
    block = true;
  }
  void wait_entered() {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return waiting; });
  }
  void resume() {
    {
      const std::lock_guard lock(mu);
      block = false;
    }
    changed.notify_all();
  }

 protected:
  int64_t storage_slot_count() override {
    return static_cast<int64_t>(bytes.size() / *dtype().itemsize());
  }
  void storage_read(int64_t first, int64_t count, std::byte* out) const override {
    observe();
    {
      std::unique_lock lock(mu);
      if (block) {
        waiting = true;
        changed.notify_all();
        changed.wait(lock, [&] { return !block; });
        waiting = false;
      }
    }
    if (call_back) static_cast<void>(read(0));
    const std::size_t size = *dtype().itemsize();
    std::memcpy(out, bytes.data() + first * size, count * size);
    if (corrupt_bool) out[0] = std::byte{7};
  }
  void storage_write(int64_t first, int64_t count, const std::byte* in) override {
    observe();
    const std::size_t size = *dtype().itemsize();
    std::memcpy(bytes.data() + first * size, in, count * size);
  }
  void storage_start_write(int64_t first, int64_t count, const std::byte* in,
                           WriteDone done) override {
    if (!defer_writes) {
      ForeignStorageCarrier::storage_start_write(first, count, in, std::move(done));
      return;
    }
    observe();
    const std::size_t size = *dtype().itemsize();
    {
      const std::lock_guard lock(mu);
      pending.assign(in, in + count * size);
      pending_first = first * size;
      pending_done = std::move(done);
    }
    changed.notify_all();
  }
  void storage_allocate(int64_t n) override { bytes.assign(n * *dtype().itemsize(), std::byte{}); }
  void storage_release() override { bytes.clear(); }
  std::string hook_name(Hook hook) const override {
    return hook == Hook::kReadRange ? "VectorStorage._read_range" : "VectorStorage.hook";
  }

 private:
  void observe() const {
    ++range_calls;
    max_core_locks = std::max(max_core_locks.load(), core_locks_held());
    max_gates = std::max(max_gates.load(), CarrierMutex::gates_held());
  }

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  bool block = false;
  mutable bool waiting = false;
  std::vector<std::byte> pending;
  std::size_t pending_first = 0;
  WriteDone pending_done;
};

std::shared_ptr<VectorStorage> make_storage(DType dtype, std::vector<Value> values) {
  auto carrier = std::make_shared<VectorStorage>(dtype);
  carrier->initialize(std::nullopt, values);
  return carrier;
}

std::vector<Value> ints(std::initializer_list<int> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

TEST(ForeignStorage, initialize_allocates_and_writes_without_a_version) {
  const auto carrier = make_storage(DType::Int32(), ints({1, 2, 3}));
  EXPECT_TRUE(carrier->has_foreign_storage());
  EXPECT_EQ(carrier->slots(), 3);
  EXPECT_EQ(carrier->version(), 0u);
  EXPECT_EQ(carrier->read_range_values(0, 3), ints({1, 2, 3}));
  carrier->write(1, Value(int64_t{5}));
  EXPECT_EQ(carrier->version(), 1u);
  EXPECT_EQ(carrier->read(1), Value(int64_t{5}));
}

TEST(ForeignStorage, refuses_a_dtype_without_an_item_size) {
  EXPECT_NE(message_of<TypeError>([] {
              VectorStorage carrier(DType::Any());
            }).find("VectorStorage: dtype Any has no item size"),
            std::string::npos);
}

TEST(ForeignStorage, hooks_run_with_the_gate_and_no_core_lock_in_moves_both_ways) {
  auto source =
      std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Layout holes(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 3}));  // cosize 8
  const auto tensor = Tensor::make(source, holes, 1);
  const std::vector<Value> expected = tensor->values();
  const auto storage = make_storage(DType::Int32(), ints({-1, -1, -1, -1, -1, -1, -1, -1}));
  storage->range_calls = 0;
  const auto there = MoveRequest::initiate(tensor, storage)->completion().wait();
  EXPECT_EQ(storage->range_calls.load(), 2);  // the destination's span read, then written
  EXPECT_EQ(there->values(), expected);
  // The holes (slots 2 and 5 of the destination) keep their values.
  const std::vector<Value> stored = storage->read_range_values(0, 8);
  EXPECT_EQ(stored[2], Value(int64_t{-1}));
  EXPECT_EQ(stored[5], Value(int64_t{-1}));
  storage->range_calls = 0;
  const auto back =
      MoveRequest::initiate(there, std::make_shared<CPU>(DType::Int32()))->completion().wait();
  EXPECT_EQ(storage->range_calls.load(), 1);  // the source's span, read once
  EXPECT_EQ(back->values(), expected);
  EXPECT_EQ(storage->max_core_locks.load(), 0);
  EXPECT_EQ(storage->max_gates.load(), 1);
}

TEST(ForeignStorage, a_gather_reads_the_window_in_one_call) {
  const auto storage = make_storage(DType::Int32(), ints({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  storage->range_calls = 0;
  const auto transposed =
      Tensor::make(storage, Layout(IntTuple::tuple({3, 3}), IntTuple::tuple({3, 1})), 0);
  EXPECT_EQ(transposed->values(), ints({0, 3, 6, 1, 4, 7, 2, 5, 8}));
  EXPECT_EQ(storage->range_calls.load(), 1);
}

TEST(ForeignStorage, a_hook_calling_back_into_its_carrier_fails_naming_it) {
  const auto storage = make_storage(DType::Int32(), ints({1, 2}));
  storage->call_back = true;
  EXPECT_NE(message_of<RuntimeError>([&] {
              static_cast<void>(storage->read_range_values(0, 2));
            }).find(storage->label() + " is used by its own storage hook"),
            std::string::npos);
  storage->call_back = false;
  EXPECT_EQ(storage->read_range_values(0, 2), ints({1, 2}));  // the gate is free again
}

TEST(ForeignStorage, an_invalid_bool_read_fails_naming_the_hook_and_leaves_the_buffer) {
  const auto storage = make_storage(DType::Bool(), {Value(true), Value(false)});
  storage->corrupt_bool = true;
  std::vector<std::byte> out(2, std::byte{9});
  EXPECT_NE(message_of<ValueError>([&] {
              storage->read_range(0, 2, out);
            }).find("VectorStorage._read_range(first=0, count=2) of " + storage->label()),
            std::string::npos);
  EXPECT_EQ(out, std::vector<std::byte>(2, std::byte{9}));
}

TEST(ForeignStorage, a_caller_waits_for_a_running_hook) {
  const auto storage = make_storage(DType::Int32(), ints({4, 5, 6}));
  storage->block_next_read();
  std::vector<Value> first;
  std::thread reader([&] { first = storage->read_range_values(0, 3); });
  storage->wait_entered();
  std::atomic<bool> writing{false};
  std::atomic<bool> wrote{false};
  std::thread writer([&] {
    writing = true;
    storage->write(0, Value(int64_t{40}));
    wrote = true;
  });
  while (!writing.load()) std::this_thread::yield();
  // The writer is in write() (or about to enter it): it must still be waiting
  // for the gate the blocked hook holds, however long that takes.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(wrote.load());
  storage->resume();
  reader.join();
  writer.join();
  EXPECT_EQ(first, ints({4, 5, 6}));
  EXPECT_EQ(storage->read(0), Value(int64_t{40}));
}

TEST(ForeignStorage, a_move_into_storage_whose_write_finishes_later_reports_then) {
  for (const bool fails : {false, true}) {
    auto source = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({0, 1, 2, 3}));
    const auto tensor = Tensor::make(source, Layout(4), 0);
    const auto storage = make_storage(DType::Int32(), ints({-1, -1, -1, -1}));
    storage->defer_writes = true;
    const uint64_t version = storage->version();
    const auto request = MoveRequest::initiate(tensor, storage);
    storage->wait_pending();  // started on a worker, which went on
    EXPECT_FALSE(request->completion().wait_for(std::chrono::milliseconds(5)));
    EXPECT_EQ(storage->max_core_locks.load(), 0);
    if (!fails) {
      storage->finish();
      EXPECT_EQ(request->completion().wait()->values(), ints({0, 1, 2, 3}));
      EXPECT_EQ(storage->version(), version);
      EXPECT_EQ(storage->moves_received(), 1u);
      EXPECT_TRUE(source->is_released());
    } else {
      storage->finish(std::make_exception_ptr(ValueError("the write failed")));
      EXPECT_EQ(message_of<ValueError>([&] { request->completion().wait(); }), "the write failed");
      EXPECT_EQ(storage->version(), version + 1);  // a failed move that wrote it
      EXPECT_EQ(storage->moves_received(), 0u);
      EXPECT_FALSE(source->is_released());
      EXPECT_EQ(source->read_range_values(0, 4), ints({0, 1, 2, 3}));
    }
    EXPECT_EQ(storage->pinned_by(), std::nullopt);
  }
}

// The wait hooks of a fake interpreter whose "GIL" the test thread claims.
thread_local bool claims_gil = false;

TEST(ForeignStorage, waiting_for_a_gate_under_a_core_lock_with_the_gil_fails) {
  ForeignWaitHooks hooks;
  hooks.holds = []() noexcept { return claims_gil; };
  hooks.release = []() noexcept -> void* { return nullptr; };
  hooks.restore = [](void*) noexcept {};
  set_foreign_wait_hooks(hooks);
  const auto storage = make_storage(DType::Int32(), ints({1}));
  storage->block_next_read();
  std::thread reader([&] { static_cast<void>(storage->read(0)); });
  storage->wait_entered();
  const auto other = std::make_shared<CPU>(DType::Int32(), 1);
  std::string message;
  std::thread waiter([&] {
    claims_gil = true;
    CoreMutex held;
    const std::lock_guard lock(held);
    message = message_of<RuntimeError>([&] { static_cast<void>(storage->read(0)); });
  });
  waiter.join();
  storage->resume();
  reader.join();
  EXPECT_NE(message.find("while holding another carrier's lock and the GIL would deadlock"),
            std::string::npos)
      << message;
  hooks.holds = []() noexcept { return false; };
  set_foreign_wait_hooks(hooks);
}

}  // namespace
}  // namespace strideweave
