#include "strideweave/device/queue.h"

#include <unistd.h>

#include <cstring>
#include <new>
#include <utility>

#include "strideweave/util/error.h"

namespace strideweave::device {

// Buffer ------------------------------------------------------------------------

EventRef Buffer::last_use() const {
  std::lock_guard lock(mu_);
  return last_use_.lock();
}

void Buffer::wait_idle() const {
  if (const EventRef event = last_use()) event->wait_quietly();
}

std::exception_ptr Buffer::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void Buffer::fail(std::exception_ptr error) {
  std::lock_guard lock(mu_);
  if (failure_ == nullptr) failure_ = std::move(error);
}

namespace {

std::exception_ptr core_error(ErrorKind kind, const std::string& message) {
  switch (kind) {
    case ErrorKind::kTypeError:
      return std::make_exception_ptr(TypeError(message));
    case ErrorKind::kValueError:
      return std::make_exception_ptr(ValueError(message));
    case ErrorKind::kIndexError:
      return std::make_exception_ptr(IndexError(message));
    case ErrorKind::kKeyError:
      return std::make_exception_ptr(KeyError(message));
    case ErrorKind::kBufferError:
      return std::make_exception_ptr(BufferError(message));
    case ErrorKind::kNotImplementedError:
      return std::make_exception_ptr(NotImplementedError(message));
    case ErrorKind::kMemoryError:
      return std::make_exception_ptr(MemoryError(message));
    case ErrorKind::kRuntimeError:
    case ErrorKind::kOSError:
      break;
  }
  return std::make_exception_ptr(RuntimeError(message));
}

}  // namespace

std::exception_ptr failed_buffer_error(const std::string& label, std::exception_ptr error) {
  const std::string holds = " (the device command buffer '" + label +
                            "' failed writing this buffer, which holds no value)";
  try {
    std::rethrow_exception(std::move(error));
  } catch (const Error& e) {
    return core_error(e.kind(), e.what() + holds);
  } catch (const std::bad_alloc&) {
    return std::make_exception_ptr(MemoryError("out of memory" + holds));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(RuntimeError(e.what() + holds));
  } catch (...) {
    return std::make_exception_ptr(RuntimeError("a non-standard exception" + holds));
  }
}

// Event -------------------------------------------------------------------------

Event::~Event() {
  if (error_ != nullptr) queue_->dispatch([error = std::move(error_)] {});
}

bool Event::is_complete() const {
  std::lock_guard lock(mu_);
  return done_;
}

void Event::wait() const {
  std::unique_lock lock(mu_);
  if (!done_) queue_->require_this_process("waiting for device work");
  cv_.wait(lock, [&] { return done_; });
  if (error_ != nullptr) std::rethrow_exception(error_);
}

void Event::wait_quietly() const noexcept {
  std::unique_lock lock(mu_);
  if (!done_ && queue_->in_fork_child()) return;
  cv_.wait(lock, [&] { return done_; });
}

void Event::on_complete(std::function<void(std::exception_ptr)> fn) {
  std::exception_ptr error;
  {
    std::lock_guard lock(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
    error = error_;
  }
  queue_->dispatch([fn = std::move(fn), error] { fn(error); });
}

void Event::complete(std::exception_ptr error) {
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    error_ = error;
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& fn : callbacks) {
    queue_->dispatch([fn = std::move(fn), error] { fn(error); });
  }
}

// Queue -------------------------------------------------------------------------

Queue::Queue() : creator_pid_(static_cast<int>(getpid())) {}

bool Queue::in_fork_child() const noexcept { return static_cast<int>(getpid()) != creator_pid_; }

void Queue::require_this_process(const char* call) const {
  if (in_fork_child()) {
    throw RuntimeError(name() + ": " + call +
                       " in a process fork() made after the device started: the device's "
                       "threads do not exist in this child, so its work would never run");
  }
}

EventRef Queue::submit(CommandBuffer buffer) {
  require_this_process("submitting device work");
  auto event = std::make_shared<Event>(*this);
  // One submission at a time: the buffers' last uses follow the queue's order.
  std::lock_guard lock(submit_mu_);
  for (const BufferRef& used : buffer.buffers) {
    std::lock_guard buffer_lock(used->mu_);
    used->last_use_ = event;
  }
  enqueue(std::move(buffer), event);
  return event;
}

namespace {

void require_within(const Buffer& buffer, int64_t offset, int64_t bytes, const std::string& label) {
  if (offset < 0 || bytes < 0 || offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw ValueError(label + ": bytes [" + std::to_string(offset) + ", " +
                     std::to_string(offset + bytes) + ") leave the device buffer of " +
                     std::to_string(buffer.bytes()) + " bytes");
  }
}

}  // namespace

EventRef upload(Queue& queue, const std::byte* host, const BufferRef& buffer, int64_t device_offset,
                int64_t bytes, std::string label) {
  require_within(*buffer, device_offset, bytes, label);
  Command command = [host, buffer = buffer.get(), device_offset, bytes](const Access& access) {
    std::memcpy(access.bytes(*buffer) + device_offset, host, static_cast<std::size_t>(bytes));
  };
  return queue.submit(
      CommandBuffer{std::move(label), CommandKind::kCopy, {buffer}, {command}, {buffer}});
}

EventRef download(Queue& queue, const BufferRef& buffer, int64_t device_offset, int64_t bytes,
                  std::byte* host, std::string label) {
  require_within(*buffer, device_offset, bytes, label);
  Command command = [host, buffer = buffer.get(), device_offset, bytes](const Access& access) {
    std::memcpy(host, access.bytes(*buffer) + device_offset, static_cast<std::size_t>(bytes));
  };
  return queue.submit(CommandBuffer{std::move(label), CommandKind::kCopy, {buffer}, {command}, {}});
}

EventRef copy(Queue& queue, const BufferRef& source, int64_t source_offset,
              const BufferRef& destination, int64_t destination_offset, int64_t bytes,
              std::string label) {
  require_within(*source, source_offset, bytes, label);
  require_within(*destination, destination_offset, bytes, label);
  Command command = [from = source.get(), source_offset, to = destination.get(), destination_offset,
                     bytes](const Access& access) {
    std::memmove(access.bytes(*to) + destination_offset, access.bytes(*from) + source_offset,
                 static_cast<std::size_t>(bytes));
  };
  return queue.submit(CommandBuffer{
      std::move(label), CommandKind::kCopy, {source, destination}, {command}, {destination}});
}

}  // namespace strideweave::device
