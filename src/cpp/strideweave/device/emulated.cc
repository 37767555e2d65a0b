#include "strideweave/device/emulated.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "strideweave/util/env.h"
#include "strideweave/util/error.h"
#include "strideweave/util/mapped_memory.h"

namespace strideweave::device {

namespace {

std::atomic<int64_t> latency_us{-1};  // -1: not read from the environment yet
std::atomic<int64_t> allocated_bytes{0};
std::atomic<int64_t> pending{0};

struct ArmedFaults {
  std::mutex mu;
  std::array<std::exception_ptr, 3> errors;
  std::atomic<int> count{0};
};

ArmedFaults& armed() {
  static ArmedFaults* faults = new ArmedFaults();  // never destroyed: the device thread reads it
  return *faults;
}

// The armed fault of `fault`, disarmed, or nullptr.
std::exception_ptr take_fault(Fault fault) {
  ArmedFaults& faults = armed();
  if (faults.count.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(faults.mu);
  std::exception_ptr error = std::exchange(faults.errors[static_cast<std::size_t>(fault)], nullptr);
  if (error != nullptr) --faults.count;
  return error;
}

// Device memory: `bytes` bytes (zero bytes when `zeroed`), mapped
// (util/mapped_memory.h) when large, so that the first copy into it takes no
// page faults, as into a GPU's memory, and a freed buffer's mapping is reused
// as a GPU allocator reuses freed device memory.
class EmulatedBuffer final : public Buffer {
 public:
  EmulatedBuffer(int64_t bytes, bool zeroed)
      : Buffer(bytes), size_(static_cast<std::size_t>(std::max<int64_t>(bytes, 1))) {
    mapped_ = size_ >= kMappedBytes;
    if (mapped_) {
      memory_ = map_memory(size_, zeroed);
    } else {
      memory_ = static_cast<std::byte*>(zeroed ? std::calloc(size_, 1) : std::malloc(size_));
    }
    if (memory_ == nullptr) {
      throw MemoryError("emulated Metal device: cannot allocate a buffer of " +
                        std::to_string(bytes) + " bytes");
    }
    allocated_bytes += bytes;
  }
  ~EmulatedBuffer() override {
    if (mapped_) {
      unmap_memory(memory_, size_);
    } else {
      std::free(memory_);
    }
    allocated_bytes -= bytes();
  }
  std::byte* memory() const noexcept { return memory_; }

 private:
  std::size_t size_;
  bool mapped_;
  std::byte* memory_;
};

class EmulatedAccess final : public Access {
 public:
  explicit EmulatedAccess(const CommandBuffer& buffer) : buffer_(buffer) {}
  std::byte* bytes(const Buffer& buffer) const override {
    for (const BufferRef& used : buffer_.buffers) {
      if (used.get() == &buffer) return static_cast<const EmulatedBuffer&>(buffer).memory();
    }
    throw RuntimeError("emulated Metal device: command buffer '" + buffer_.label +
                       "' uses a device buffer it did not name");
  }

 private:
  const CommandBuffer& buffer_;
};

}  // namespace

class EmulatedQueue final : public Queue {
 public:
  // The queue is never destroyed, so its two threads are detached.
  EmulatedQueue() {
    std::thread([this] { run_device(); }).detach();
    std::thread([this] { run_completions(); }).detach();
  }

  std::string name() const override { return "emulated Metal device"; }

  BufferRef allocate(int64_t bytes, bool zeroed = true) override {
    require_this_process("allocating a device buffer");
    if (bytes < 0)
      throw ValueError(name() + ": cannot allocate " + std::to_string(bytes) + " bytes");
    if (std::exception_ptr fault = take_fault(Fault::kAllocation)) std::rethrow_exception(fault);
    return std::make_shared<EmulatedBuffer>(bytes, zeroed);
  }

  void synchronize() override {
    if (std::exception_ptr fault = take_fault(Fault::kSynchronize)) std::rethrow_exception(fault);
    submit(CommandBuffer{"synchronize", CommandKind::kKernel, {}, {}, {}})->wait_quietly();
  }

  void dispatch(std::function<void()> fn) override {
    {
      std::lock_guard lock(completions_mu_);
      completions_.push_back(std::move(fn));
    }
    completions_cv_.notify_one();
  }

 protected:
  void enqueue(CommandBuffer buffer, EventRef event) override {
    ++pending;
    {
      std::lock_guard lock(device_mu_);
      device_work_.emplace_back(std::move(buffer), std::move(event));
    }
    device_cv_.notify_one();
  }

 private:
  void run_device() {
    for (;;) {
      std::pair<CommandBuffer, EventRef> work;
      {
        std::unique_lock lock(device_mu_);
        device_cv_.wait(lock, [&] { return !device_work_.empty(); });
        work = std::move(device_work_.front());
        device_work_.pop_front();
      }
      const auto& [buffer, event] = work;
      if (!buffer.commands.empty()) {
        const int64_t latency = emulated_latency().count();
        if (latency > 0) std::this_thread::sleep_for(std::chrono::microseconds(latency));
      }
      // An injected fault fails the command buffer before any command runs;
      // a failed buffer it names fails it likewise, and the failure passes on
      // to what it writes; a command's own exception fails what it writes
      // (queue.h, CommandBuffer).
      std::exception_ptr error =
          buffer.kind == CommandKind::kCopy ? take_fault(Fault::kCopy) : nullptr;
      std::exception_ptr spoils;
      for (const BufferRef& used : buffer.buffers) {
        if (error == nullptr) spoils = error = used->failure();
      }
      if (error == nullptr) {
        try {
          const EmulatedAccess access(buffer);
          for (const Command& command : buffer.commands) command(access);
        } catch (...) {
          error = std::current_exception();
          spoils = failed_buffer_error(buffer.label, error);
        }
      }
      if (spoils != nullptr) {
        for (const BufferRef& written : buffer.writes) written->fail(spoils);
      }
      --pending;
      event->complete(error);
      // The buffers and the event are dropped here, after completion.
    }
  }

  void run_completions() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(completions_mu_);
        completions_cv_.wait(lock, [&] { return !completions_.empty(); });
        fn = std::move(completions_.front());
        completions_.pop_front();
      }
      try {
        fn();
      } catch (...) {  // a callback's own failure has nowhere to go
      }
    }
  }

  std::mutex device_mu_;
  std::condition_variable device_cv_;
  std::deque<std::pair<CommandBuffer, EventRef>> device_work_;
  std::mutex completions_mu_;
  std::condition_variable completions_cv_;
  std::deque<std::function<void()>> completions_;
};

EmulatedQueue& emulated_metal_queue() {
  static EmulatedQueue* queue = new EmulatedQueue();  // never destroyed: its threads outlive main
  return *queue;
}

Queue& metal_queue() { return emulated_metal_queue(); }

void set_emulated_latency(std::chrono::microseconds latency) {
  latency_us = std::max<int64_t>(latency.count(), 0);
}

std::chrono::microseconds emulated_latency() {
  int64_t us = latency_us.load(std::memory_order_relaxed);
  if (us < 0) {
    us = static_cast<int64_t>(
        env_integer("STRIDEWEAVE_METAL_LATENCY_US", {.max = INT64_MAX, .clamp_above = true})
            .value_or(0));
    int64_t expected = -1;
    latency_us.compare_exchange_strong(expected, us);
    us = latency_us.load();
  }
  return std::chrono::microseconds(us);
}

void inject_emulated_fault(Fault fault, std::exception_ptr error) {
  if (error == nullptr) throw ValueError("inject_emulated_fault: the fault needs an exception");
  ArmedFaults& faults = armed();
  std::lock_guard lock(faults.mu);
  std::exception_ptr& slot = faults.errors[static_cast<std::size_t>(fault)];
  if (slot == nullptr) ++faults.count;
  slot = std::move(error);
}

int clear_emulated_faults() noexcept {
  ArmedFaults& faults = armed();
  std::lock_guard lock(faults.mu);
  int unfired = 0;
  for (std::exception_ptr& slot : faults.errors) {
    if (slot != nullptr) ++unfired;
    slot = nullptr;
  }
  faults.count = 0;
  return unfired;
}

int64_t emulated_pending() { return pending.load(); }

int64_t emulated_allocated_bytes() { return allocated_bytes.load(); }

}  // namespace strideweave::device
