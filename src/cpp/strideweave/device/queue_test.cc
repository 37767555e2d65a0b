// The device queue and its emulated backend (device/queue.h, device/emulated.h).
#include "strideweave/device/queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/device/emulated.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave::device {
namespace {

using testing_util::message_of;

// Every test starts and ends with no latency, no armed fault and an idle device.
class DeviceQueue : public ::testing::Test {
 protected:
  void SetUp() override {
    set_emulated_latency(std::chrono::microseconds(0));
    clear_emulated_faults();
    metal_queue().synchronize();
  }
  void TearDown() override {
    set_emulated_latency(std::chrono::microseconds(0));
    EXPECT_EQ(clear_emulated_faults(), 0) << "a fault was left armed";
    metal_queue().synchronize();
  }
  Queue& queue() { return metal_queue(); }
};

// A command that blocks the device thread until open() is called.
class Gate {
 public:
  Command command() {
    return [future = opened_.get_future().share()](const Access&) { future.wait(); };
  }
  void open() { opened_.set_value(); }

 private:
  std::promise<void> opened_;
};

CommandBuffer kernel(std::string label, std::vector<Command> commands,
                     std::vector<BufferRef> buffers = {}, std::vector<BufferRef> writes = {}) {
  return CommandBuffer{std::move(label), CommandKind::kKernel, std::move(buffers),
                       std::move(commands), std::move(writes)};
}

TEST_F(DeviceQueue, command_buffers_run_in_submission_order) {
  auto order = std::make_shared<std::vector<int>>();  // touched only by the device thread
  std::vector<EventRef> events;
  for (int i = 0; i < 200; ++i) {
    std::vector<Command> commands;
    for (int j = 0; j < 3; ++j) {
      commands.push_back([order, value = 3 * i + j](const Access&) { order->push_back(value); });
    }
    events.push_back(queue().submit(kernel("ordered", std::move(commands))));
  }
  events.back()->wait();
  for (const EventRef& event : events) EXPECT_TRUE(event->is_complete());
  ASSERT_EQ(order->size(), 600u);
  for (int i = 0; i < 600; ++i) EXPECT_EQ((*order)[static_cast<std::size_t>(i)], i);
}

TEST_F(DeviceQueue, an_event_completes_after_its_commands) {
  Gate gate;
  std::atomic<bool> after_gate{false};
  const EventRef event =
      queue().submit(kernel("gated", {gate.command(), [&](const Access&) { after_gate = true; }}));
  EXPECT_FALSE(event->is_complete());
  const EventRef later = queue().submit(kernel("later", {[](const Access&) {}}));
  EXPECT_FALSE(later->is_complete());  // in order: behind the gated buffer
  gate.open();
  event->wait();
  EXPECT_TRUE(after_gate);
  later->wait();
  EXPECT_TRUE(event->is_complete());
}

TEST_F(DeviceQueue, a_failing_command_fails_only_its_event) {
  std::atomic<bool> skipped_ran{false};
  std::atomic<bool> later_ran{false};
  const EventRef failing = queue().submit(
      kernel("failing", {[](const Access&) { throw std::logic_error("command failed"); },
                         [&](const Access&) { skipped_ran = true; }}));
  const EventRef later =
      queue().submit(kernel("later", {[&](const Access&) { later_ran = true; }}));
  later->wait();  // does not throw: the failure belongs to its own event
  EXPECT_TRUE(later_ran);
  EXPECT_TRUE(failing->is_complete());
  EXPECT_THROW(failing->wait(), std::logic_error);
  EXPECT_THROW(failing->wait(), std::logic_error);  // every wait reports it
  failing->wait_quietly();
  EXPECT_FALSE(skipped_ran);  // the rest of the failed buffer is skipped
  queue().synchronize();      // never throws the command buffers' errors
}

TEST_F(DeviceQueue, a_failed_command_fails_the_buffers_it_writes_and_what_reads_them) {
  const BufferRef input = queue().allocate(4);
  const BufferRef result = queue().allocate(4);
  const BufferRef next = queue().allocate(4);
  const EventRef producer = queue().submit(
      kernel("producer", {[](const Access&) { throw MemoryError("gathering failed"); }},
             {input, result}, {result}));
  EXPECT_THROW(producer->wait(), MemoryError);
  // A download of the result fails with the producer's error, as a core error of
  // its kind naming the command buffer, instead of returning bytes it never wrote.
  std::vector<std::byte> host(4);
  const std::string message = message_of<MemoryError>(
      [&] { download(queue(), result, 0, 4, host.data(), "read result")->wait(); });
  EXPECT_NE(message.find("gathering failed"), std::string::npos) << message;
  EXPECT_NE(message.find("'producer'"), std::string::npos) << message;
  // A kernel reading the result runs none of its commands, fails alike, and
  // passes the failure on to what it writes.
  std::atomic<bool> ran{false};
  const EventRef consumer = queue().submit(
      kernel("consumer", {[&](const Access&) { ran = true; }}, {result, next}, {next}));
  EXPECT_EQ(message_of<MemoryError>([&] { consumer->wait(); }), message);
  EXPECT_FALSE(ran);
  EXPECT_EQ(message_of<MemoryError>(
                [&] { download(queue(), next, 0, 4, host.data(), "read next")->wait(); }),
            message);
  // The buffer the producer only read is unaffected.
  download(queue(), input, 0, 4, host.data(), "read input")->wait();
  EXPECT_EQ(input->failure(), nullptr);
}

TEST_F(DeviceQueue, a_command_reaches_only_the_buffers_it_named) {
  const BufferRef named = queue().allocate(8);
  const BufferRef other = queue().allocate(8);
  const EventRef event = queue().submit(
      kernel("stray",
             {[named](const Access& access) { access.bytes(*named)[0] = std::byte{1}; },
              [other](const Access& access) { access.bytes(*other); }},
             {named}));
  const std::string message = message_of<RuntimeError>([&] { event->wait(); });
  EXPECT_NE(message.find("stray"), std::string::npos) << message;
  std::vector<std::byte> host(1);
  download(queue(), named, 0, 1, host.data(), "check")->wait();
  EXPECT_EQ(host[0], std::byte{1});
}

struct Threads {
  std::thread::id device;
  std::thread::id callback;
  std::exception_ptr error;
};

TEST_F(DeviceQueue, callbacks_run_on_the_completion_thread) {
  Threads seen;
  std::promise<void> called;
  const EventRef event = queue().submit(
      kernel("where", {[&](const Access&) { seen.device = std::this_thread::get_id(); }}));
  event->on_complete([&](std::exception_ptr error) {
    seen.callback = std::this_thread::get_id();
    seen.error = error;
    called.set_value();
  });
  called.get_future().wait();
  EXPECT_EQ(seen.error, nullptr);
  EXPECT_NE(seen.callback, std::this_thread::get_id());
  EXPECT_NE(seen.callback, seen.device);
  EXPECT_NE(seen.device, std::this_thread::get_id());

  // Registered after completion: dispatched to the same thread, not run inline.
  ASSERT_TRUE(event->is_complete());
  std::promise<std::thread::id> late;
  event->on_complete([&](std::exception_ptr) { late.set_value(std::this_thread::get_id()); });
  const std::thread::id late_thread = late.get_future().get();
  EXPECT_NE(late_thread, std::this_thread::get_id());
  EXPECT_NE(late_thread, seen.device);
  EXPECT_EQ(late_thread, seen.callback);
}

TEST_F(DeviceQueue, callbacks_receive_the_error) {
  const EventRef event =
      queue().submit(kernel("failing", {[](const Access&) { throw ValueError("boom"); }}));
  std::promise<std::exception_ptr> before;
  event->on_complete([&](std::exception_ptr error) { before.set_value(error); });
  const std::exception_ptr error = before.get_future().get();
  ASSERT_NE(error, nullptr);
  EXPECT_THROW(std::rethrow_exception(error), ValueError);
  std::promise<std::exception_ptr> after;
  event->on_complete([&](std::exception_ptr e) { after.set_value(e); });
  EXPECT_EQ(after.get_future().get(), error);
}

TEST_F(DeviceQueue, latency_makes_submission_asynchronous) {
  set_emulated_latency(std::chrono::milliseconds(50));
  EXPECT_EQ(emulated_latency(), std::chrono::microseconds(50000));
  const EventRef event = queue().submit(kernel("slow", {[](const Access&) {}}));
  EXPECT_FALSE(event->is_complete());
  EXPECT_GE(emulated_pending(), 1);
  event->wait();
  EXPECT_TRUE(event->is_complete());
  queue().synchronize();
  EXPECT_EQ(emulated_pending(), 0);
  set_emulated_latency(std::chrono::microseconds(-5));  // clamped
  EXPECT_EQ(emulated_latency(), std::chrono::microseconds(0));
}

TEST_F(DeviceQueue, an_allocation_fault_fires_once) {
  inject_emulated_fault(Fault::kAllocation, std::make_exception_ptr(MemoryError("no memory")));
  const std::string message = message_of<MemoryError>([&] { queue().allocate(16); });
  EXPECT_EQ(message, "no memory");
  const BufferRef buffer = queue().allocate(16);
  EXPECT_EQ(buffer->bytes(), 16);
  EXPECT_THROW(queue().allocate(-1), ValueError);
}

TEST_F(DeviceQueue, a_copy_fault_fails_the_next_copy_buffer_alone) {
  const BufferRef buffer = queue().allocate(4);
  const std::vector<std::byte> data{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  inject_emulated_fault(Fault::kCopy, std::make_exception_ptr(RuntimeError("copy fault")));
  // A kernel buffer passes the armed fault by.
  std::atomic<bool> kernel_ran{false};
  queue().submit(kernel("kernel", {[&](const Access&) { kernel_ran = true; }}))->wait();
  EXPECT_TRUE(kernel_ran);
  const EventRef failed = upload(queue(), data.data(), buffer, 0, 4, "upload");
  EXPECT_THROW(failed->wait(), RuntimeError);
  std::vector<std::byte> host(4, std::byte{9});
  download(queue(), buffer, 0, 4, host.data(), "download")->wait();  // the fault fired once
  EXPECT_EQ(host, std::vector<std::byte>(4, std::byte{0}));  // the failed upload wrote nothing
  upload(queue(), data.data(), buffer, 0, 4, "upload")->wait();
  download(queue(), buffer, 0, 4, host.data(), "download")->wait();
  EXPECT_EQ(host, data);
}

TEST_F(DeviceQueue, a_synchronize_fault_fires_once) {
  inject_emulated_fault(Fault::kSynchronize, std::make_exception_ptr(RuntimeError("sync fault")));
  EXPECT_THROW(queue().synchronize(), RuntimeError);
  queue().synchronize();
}

TEST_F(DeviceQueue, clear_reports_the_faults_that_never_fired) {
  const auto error = std::make_exception_ptr(RuntimeError("unfired"));
  EXPECT_THROW(inject_emulated_fault(Fault::kCopy, nullptr), ValueError);
  EXPECT_EQ(clear_emulated_faults(), 0);
  inject_emulated_fault(Fault::kAllocation, error);
  inject_emulated_fault(Fault::kSynchronize, error);
  inject_emulated_fault(Fault::kSynchronize, error);  // replaces, still one
  EXPECT_EQ(clear_emulated_faults(), 2);
  queue().allocate(1);  // disarmed
  queue().synchronize();
  inject_emulated_fault(Fault::kSynchronize, error);
  EXPECT_THROW(queue().synchronize(), RuntimeError);
  EXPECT_EQ(clear_emulated_faults(), 0);
}

TEST_F(DeviceQueue, copies_outside_a_buffer_are_refused_before_submission) {
  const BufferRef small = queue().allocate(8);
  const BufferRef large = queue().allocate(16);
  std::vector<std::byte> host(32);
  EXPECT_THROW(upload(queue(), host.data(), small, 4, 8, "upload"), ValueError);
  EXPECT_THROW(upload(queue(), host.data(), small, -1, 2, "upload"), ValueError);
  EXPECT_THROW(upload(queue(), host.data(), small, 0, -1, "upload"), ValueError);
  EXPECT_THROW(upload(queue(), host.data(), small, 9, 0, "upload"), ValueError);
  const std::string message =
      message_of<ValueError>([&] { download(queue(), small, 0, 9, host.data(), "my download"); });
  EXPECT_NE(message.find("my download"), std::string::npos) << message;
  EXPECT_NE(message.find("8 bytes"), std::string::npos) << message;
  EXPECT_THROW(copy(queue(), large, 0, small, 0, 16, "copy"), ValueError);
  EXPECT_THROW(copy(queue(), small, 0, large, 12, 8, "copy"), ValueError);
  EXPECT_THROW(copy(queue(), large, 10, small, 0, 8, "copy"), ValueError);
  EXPECT_EQ(small->last_use(), nullptr);  // nothing was submitted
  EXPECT_EQ(large->last_use(), nullptr);
  // The edges are within.
  upload(queue(), host.data(), small, 8, 0, "upload")->wait();
  const EventRef copied = copy(queue(), large, 8, small, 0, 8, "copy");
  copied->wait();
  EXPECT_EQ(small->last_use(), copied);  // held here, so still remembered
}

TEST_F(DeviceQueue, copies_move_bytes_between_host_and_buffers) {
  const BufferRef a = queue().allocate(8);
  const BufferRef b = queue().allocate(8);
  std::vector<std::byte> in(8);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i + 1);
  upload(queue(), in.data(), a, 0, 8, "upload");
  copy(queue(), a, 2, b, 4, 4, "copy");  // in order: after the upload, without waiting
  std::vector<std::byte> out(8, std::byte{0xff});
  download(queue(), b, 0, 8, out.data(), "download")->wait();
  const std::vector<std::byte> expected{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0},
                                        std::byte{3}, std::byte{4}, std::byte{5}, std::byte{6}};
  EXPECT_EQ(out, expected);
}

TEST_F(DeviceQueue, wait_idle_waits_for_the_last_use) {
  const BufferRef buffer = queue().allocate(4);
  buffer->wait_idle();  // never used: returns at once
  EXPECT_EQ(buffer->last_use(), nullptr);
  Gate gate;
  std::atomic<bool> ran{false};
  queue().submit(kernel("first", {gate.command()}, {buffer}));
  const EventRef last =
      queue().submit(kernel("second",
                            {[&](const Access&) { ran = true; },
                             [](const Access&) { throw RuntimeError("failed last use"); }},
                            {buffer}));
  EXPECT_EQ(buffer->last_use(), last);
  auto idle = std::async(std::launch::async, [&] { buffer->wait_idle(); });
  EXPECT_EQ(idle.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout);
  gate.open();
  idle.get();  // never throws the last use's error
  EXPECT_TRUE(ran);
  EXPECT_TRUE(last->is_complete());
}

TEST_F(DeviceQueue, synchronize_waits_for_earlier_work) {
  set_emulated_latency(std::chrono::milliseconds(5));
  std::vector<EventRef> events;
  for (int i = 0; i < 5; ++i) events.push_back(queue().submit(kernel("k", {[](const Access&) {}})));
  queue().synchronize();
  for (const EventRef& event : events) EXPECT_TRUE(event->is_complete());
  EXPECT_EQ(emulated_pending(), 0);
}

TEST_F(DeviceQueue, concurrent_submitters_keep_each_buffers_last_use_in_order) {
  const BufferRef buffer = queue().allocate(4);
  Gate gate;  // holds the device, so that every event is still pending at the end
  queue().submit(kernel("gate", {gate.command()}));
  std::vector<std::vector<EventRef>> submitted(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < submitted.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        submitted[t].push_back(queue().submit(kernel("k", {[](const Access&) {}}, {buffer})));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const EventRef last = buffer->last_use();
  ASSERT_NE(last, nullptr);
  gate.open();
  last->wait();
  // The remembered event is the one submitted last: every other completed before it.
  for (const auto& events : submitted) {
    for (const EventRef& event : events) EXPECT_TRUE(event->is_complete());
  }
}

}  // namespace
}  // namespace strideweave::device
