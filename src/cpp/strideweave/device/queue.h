// The device queue under the Metal carrier (ARCHITECTURE.md section 4): device
// buffers host code cannot address, command buffers executed in submission
// order on the device's own thread, completion events, synchronize(), and
// errors reported at completion.
//
// The shipped backend is emulated (device/emulated.h): buffers in host memory
// private to its device thread, a configurable per-command-buffer latency,
// and fault injection at allocation, copy and synchronization. A native
// backend implements Queue and Buffer over a real device; nothing above this
// interface changes.
//
// Thread safety: every member may be called from any thread. No command and
// no completion callback runs Python or takes a core lock while the device
// thread is needed by the lock's holder: commands touch only device memory and
// the host memory their submitter keeps valid; callbacks run on a completion
// thread of their own, never on the device thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strideweave::device {

class Buffer;
class Event;
class Queue;
using BufferRef = std::shared_ptr<Buffer>;
using EventRef = std::shared_ptr<Event>;

// The bytes of the buffers a command buffer named, reachable only while one of
// its commands runs on the device thread.
class Access {
 public:
  virtual ~Access() = default;
  // Throws RuntimeError when `buffer` is not one of the command buffer's.
  virtual std::byte* bytes(const Buffer& buffer) const = 0;
};

using Command = std::function<void(const Access&)>;

// Whether a command buffer moves bytes (a copy: host to device, device to
// host, device to device) or computes (a kernel). Fault injection tells them
// apart; a native backend maps them to blit and compute encoders.
enum class CommandKind { kCopy, kKernel };

struct CommandBuffer {
  std::string label;  // what messages and traces call it
  CommandKind kind = CommandKind::kKernel;
  std::vector<BufferRef> buffers;  // every buffer a command touches: kept alive
                                   // and counted busy until the event completes
  std::vector<Command> commands;   // run in order; the first exception ends the buffer
  std::vector<BufferRef> writes;   // the buffers among `buffers` its commands write
};

// How device failures travel (spec/carrier-storage, "Metal stores slots in
// device memory"): a command that throws may have written part of the buffers
// its command buffer writes, so each of them becomes failed with that error,
// as a core error of the same kind naming the command buffer (failed_buffer_
// error). A command buffer that names a failed buffer runs none of its
// commands and fails with the buffer's error, which it passes on to the
// buffers it writes: a download of a failed kernel's result raises the
// kernel's error instead of returning bytes the kernel never wrote, and a
// kernel over that result fails alike. An injected fault fails the command
// buffer before any command runs, so it fails no buffer.
std::exception_ptr failed_buffer_error(const std::string& label, std::exception_ptr error);

// A device allocation of `bytes` bytes (zeroed unless allocated otherwise).
class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  int64_t bytes() const noexcept { return bytes_; }

  // The event of the last command buffer submitted with this buffer, or
  // nullptr when none was or it completed and nobody holds it: waiting on it
  // waits for every earlier one (the queue executes in order).
  EventRef last_use() const;

  // Blocks until every command buffer submitted so far with this buffer has
  // completed; never throws their errors (they belong to their events).
  void wait_idle() const;

  // The error the buffer failed with (see CommandBuffer), or null. A core
  // error, safe to release on any thread.
  std::exception_ptr failure() const;
  // For backends, on the device thread: records `error` unless the buffer has
  // failed already.
  void fail(std::exception_ptr error);

 protected:
  explicit Buffer(int64_t bytes) : bytes_(bytes) {}

 private:
  friend class Queue;
  const int64_t bytes_;
  mutable std::mutex mu_;
  // Guarded by mu_. Weak: replacing it never destroys an event, whose error may
  // be a foreign exception that must not be released under a core lock (the
  // device thread holds every event until it completed, so an expired one is
  // complete).
  std::weak_ptr<Event> last_use_;
  std::exception_ptr failure_;  // guarded by mu_
};

// The completion of one command buffer.
class Event {
 public:
  explicit Event(Queue& queue) : queue_(&queue) {}
  // Hands a failed event's error to the completion thread to be released
  // there: the error may be a foreign exception (a Python one) whose release
  // must not happen where the last reference to the event is dropped, which
  // may be under a core lock.
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_complete() const;

  // Blocks until complete; rethrows the command buffer's error.
  void wait() const;

  // Blocks until complete; never throws.
  void wait_quietly() const noexcept;

  // Calls fn(error) once the event completes (error null on success), on the
  // queue's completion thread, also when it has completed already. fn may
  // take core locks and may wait for the device (a Metal move synchronizes
  // there): a backend completes events and runs commands without ever waiting
  // for the completion thread, so the device keeps progressing meanwhile.
  // Callbacks run one at a time: a slow one delays those after it.
  void on_complete(std::function<void(std::exception_ptr)> fn);

  // For backends, on the device thread: completes the event once (later calls
  // do nothing), wakes its waiters and dispatches its callbacks.
  void complete(std::exception_ptr error);

 private:
  Queue* queue_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void(std::exception_ptr)>> callbacks_;
};

class Queue {
 public:
  Queue();
  virtual ~Queue() = default;

  // "emulated Metal device": what messages call the device.
  virtual std::string name() const = 0;

  // A new buffer of `bytes` zero bytes, or, with `zeroed` false, of
  // unspecified bytes (for a producer whose commands write every byte before
  // any command reads one: a move staging its value). Throws ValueError for
  // bytes < 0, MemoryError when the device cannot allocate it (and the
  // injected fault).
  virtual BufferRef allocate(int64_t bytes, bool zeroed = true) = 0;

  // Enqueues `buffer` and returns at once with its event. Its commands run in
  // submission order after every command buffer submitted before it; the
  // event completes after the last, failed with the first exception a command
  // threw (the rest of that command buffer is skipped; later command buffers
  // still run, as on a GPU). Each buffer it names records the event as its
  // last use.
  EventRef submit(CommandBuffer buffer);

  // Blocks until every command buffer submitted before the call has
  // completed. Throws RuntimeError naming the device when synchronization
  // fails (the injected fault); never the command buffers' own errors.
  virtual void synchronize() = 0;

  // Runs fn on the queue's completion thread (event callbacks).
  virtual void dispatch(std::function<void()> fn) = 0;

  // Whether this is a child process fork() made after the queue started: the
  // queue's threads do not exist here, so no command would ever run. In such
  // a child submit() and allocate() throw RuntimeError (require_this_process),
  // an Event that had not completed before the fork throws it from wait() and
  // wait_quietly() returns at once: a carrier of the parent's device fails
  // clearly instead of waiting forever.
  bool in_fork_child() const noexcept;
  // Throws RuntimeError naming the device and `call` in such a child.
  void require_this_process(const char* call) const;

 protected:
  // Enqueues buffer for the device thread; `event` completes it. Called with
  // the submission lock held: it must not block.
  virtual void enqueue(CommandBuffer buffer, EventRef event) = 0;

 private:
  std::mutex submit_mu_;
  const int creator_pid_;  // the process the queue's threads run in
};

// The process's Metal device queue: the emulated backend, created on first
// use and never destroyed (its threads may still complete work at exit).
Queue& metal_queue();

// Host <-> device copies as one-command copy buffers. The host memory must
// stay valid and unchanged (upload) or unread (download) until the event
// completes. `device_offset` and `bytes` must lie within the buffer.
EventRef upload(Queue& queue, const std::byte* host, const BufferRef& buffer, int64_t device_offset,
                int64_t bytes, std::string label);
EventRef download(Queue& queue, const BufferRef& buffer, int64_t device_offset, int64_t bytes,
                  std::byte* host, std::string label);
// Device to device.
EventRef copy(Queue& queue, const BufferRef& source, int64_t source_offset,
              const BufferRef& destination, int64_t destination_offset, int64_t bytes,
              std::string label);

}  // namespace strideweave::device
