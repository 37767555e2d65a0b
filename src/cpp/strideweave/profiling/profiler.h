// The process-global profiler (spec/operation-profiling).
//
// A Session collects events while it is active, from every thread: an event
// belongs to the sessions active when its work began (an operation's scope
// opened, move_async was called), and reaches them when it ends, even if a
// session stopped in between. With no session active, recording costs one
// relaxed atomic load and a branch (active()).
//
// Thread safety: every function may be called from any thread. The
// profiler's locks (the registry's, each session's) are held only to copy or
// append events, never while calling anything else.
#pragma once

#include <atomic>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strideweave/exec/core_mutex.h"
#include "strideweave/profiling/event.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave::profiling {

namespace internal_profiling {
extern std::atomic<int> active_sessions;
}  // namespace internal_profiling

// Whether any session is active: one relaxed atomic load.
inline bool active() noexcept {
  return internal_profiling::active_sessions.load(std::memory_order_relaxed) != 0;
}

class Session {
 public:
  // A new session, active from now on.
  static std::shared_ptr<Session> start();

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Ends collection of new work; idempotent. Work begun while the session was
  // active still delivers its events to it when it ends.
  void stop();
  bool is_active() const;

  // A copy of the events delivered so far, in delivery order.
  std::vector<Event> events() const;

  // Appends `event` (the recorders below call it).
  void record(Event event);

 private:
  Session() = default;

  mutable CoreMutex mu_;
  bool active_ = true;
  std::vector<Event> events_;
};

// The sessions active at one moment.
using Sessions = std::shared_ptr<const std::vector<std::shared_ptr<Session>>>;

// Records one operation event spanning the scope's lifetime: its name, the
// inputs' carrier classes, shapes and the first input's dtype, host start and
// end, the thread and a new correlation id. With no active session the
// constructor is one relaxed load and a branch, and the destructor a test of
// a null pointer. Must end on the thread that opened it.
class OperationScope {
 public:
  OperationScope(std::string_view name, std::span<const Tensor* const> inputs) {
    if (active()) [[unlikely]]
      begin(name, inputs);
  }
  OperationScope(std::string_view name, std::initializer_list<const Tensor*> inputs) {
    if (active()) [[unlikely]]
      begin(name, {inputs.begin(), inputs.size()});
  }
  // Names the event operation.name(), called only when a session is active.
  template <class Operation>
    requires requires(const Operation& operation) { operation.name(); }
  OperationScope(const Operation& operation,
                 std::span<const std::shared_ptr<const Tensor>> inputs) {
    if (active()) [[unlikely]]
      begin(operation.name(), inputs);
  }
  ~OperationScope() {
    if (pending_ != nullptr) [[unlikely]]
      finish();
  }
  OperationScope(const OperationScope&) = delete;
  OperationScope& operator=(const OperationScope&) = delete;

 private:
  struct Pending;
  void begin(std::string_view name, std::span<const Tensor* const> inputs);
  void begin(std::string_view name, std::span<const std::shared_ptr<const Tensor>> inputs);
  // Opens pending_ with the active sessions, or leaves it null without one.
  Event* open(std::string_view name);
  void finish() noexcept;

  Pending* pending_ = nullptr;
};

// The two events of one move. begin() at move_async's start notes the
// sessions active then, the time and a correlation id (with none active it is
// one relaxed load and holds nothing); submitted() records the submission
// event just before the transfer is submitted; completed() records the
// completion event, spanning submission through now, once (the terminal
// commit calls it, on whichever thread commits). Without a session at
// begin() both do nothing.
class MoveProfile {
 public:
  MoveProfile();
  ~MoveProfile();
  MoveProfile(MoveProfile&&) noexcept;
  MoveProfile& operator=(MoveProfile&&) noexcept;

  static MoveProfile begin();

  // `name`: the move operation class or route id; `request`: "move #N".
  void submitted(const std::string& name, const std::string& request, const Tensor& source,
                 const Carrier& destination) noexcept;
  void completed() noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace strideweave::profiling
