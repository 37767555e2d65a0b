#include "strideweave/profiling/profiler.h"

#include <mutex>
#include <utility>

namespace strideweave::profiling {

namespace internal_profiling {
std::atomic<int> active_sessions{0};
}  // namespace internal_profiling

namespace {

// The active sessions, replaced as a whole when one starts or stops, so that
// a recorder copies one pointer under the lock.
struct Registry {
  CoreMutex mu;
  Sessions active;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: workers may record at exit
  return *r;
}

std::atomic<uint64_t> correlation_ids{1};

// A new correlation id, unique in the process.
uint64_t next_correlation_id() noexcept {
  return correlation_ids.fetch_add(1, std::memory_order_relaxed);
}

Sessions snapshot_sessions() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.active;
}

// Delivers `event` to every session of `sessions`.
void deliver(const Sessions& sessions, Event event) {
  const std::size_t n = sessions->size();
  for (std::size_t i = 0; i + 1 < n; ++i) (*sessions)[i]->record(event);
  if (n != 0) (*sessions)[n - 1]->record(std::move(event));
}

// Appends the input's carrier class (one per plane of a multi-subtensor
// Tensor) and shape; the first input sets the dtype.
void describe_input(const Tensor& tensor, Event& event) {
  if (tensor.is_multi_subtensor()) {
    for (const std::shared_ptr<Tensor>& plane : tensor.planes()) {
      event.carrier_classes.push_back(
          plane->subtensor("profiling").carrier->carrier_class().name());
    }
  } else {
    event.carrier_classes.push_back(tensor.subtensor("profiling").carrier->carrier_class().name());
  }
  event.shapes.push_back(tensor.shape());
  if (event.dtype.empty()) event.dtype = tensor.dtype().name();
}

// Stamps an operation event's thread, correlation id and start time.
void stamp(Event& event) {
  event.thread_id = thread_id();
  event.correlation_id = next_correlation_id();
  event.start_ns = now_ns();
}

}  // namespace

// Session ---------------------------------------------------------------------------

std::shared_ptr<Session> Session::start() {
  std::shared_ptr<Session> session(new Session());
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto sessions = r.active == nullptr
                      ? std::make_shared<std::vector<std::shared_ptr<Session>>>()
                      : std::make_shared<std::vector<std::shared_ptr<Session>>>(*r.active);
  sessions->push_back(session);
  r.active = std::move(sessions);
  internal_profiling::active_sessions.fetch_add(1, std::memory_order_relaxed);
  return session;
}

void Session::stop() {
  {
    std::lock_guard lock(mu_);
    if (!active_) return;
    active_ = false;
  }
  Registry& r = registry();
  Sessions previous;  // the old snapshot is dropped outside the lock
  std::lock_guard lock(r.mu);
  auto sessions = std::make_shared<std::vector<std::shared_ptr<Session>>>();
  for (const std::shared_ptr<Session>& s : *r.active) {
    if (s.get() != this) sessions->push_back(s);
  }
  previous = std::exchange(r.active, sessions->empty() ? nullptr : std::move(sessions));
  internal_profiling::active_sessions.fetch_sub(1, std::memory_order_relaxed);
}

bool Session::is_active() const {
  std::lock_guard lock(mu_);
  return active_;
}

std::vector<Event> Session::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

void Session::record(Event event) {
  std::lock_guard lock(mu_);
  events_.push_back(std::move(event));
}

// OperationScope ----------------------------------------------------------------------

struct OperationScope::Pending {
  Sessions sessions;
  Event event;
};

Event* OperationScope::open(std::string_view name) {
  Sessions sessions = snapshot_sessions();
  if (sessions == nullptr) return nullptr;
  auto pending = std::make_unique<Pending>();
  pending->sessions = std::move(sessions);
  pending->event.kind = EventKind::kOperation;
  pending->event.name = name;
  pending_ = pending.release();
  return &pending_->event;
}

void OperationScope::begin(std::string_view name, std::span<const Tensor* const> inputs) {
  if (Event* event = open(name)) {
    for (const Tensor* input : inputs) describe_input(*input, *event);
    stamp(*event);
  }
}

void OperationScope::begin(std::string_view name,
                           std::span<const std::shared_ptr<const Tensor>> inputs) {
  if (Event* event = open(name)) {
    for (const std::shared_ptr<const Tensor>& input : inputs) describe_input(*input, *event);
    stamp(*event);
  }
}

void OperationScope::finish() noexcept {
  const std::unique_ptr<Pending> pending(std::exchange(pending_, nullptr));
  pending->event.end_ns = now_ns();
  try {
    deliver(pending->sessions, std::move(pending->event));
  } catch (...) {  // out of memory: the event is lost, the operation is not
  }
}

// MoveProfile -------------------------------------------------------------------------

struct MoveProfile::State {
  Sessions sessions;
  int64_t begun_ns = 0;
  uint64_t correlation_id = 0;
  std::atomic<bool> completed{false};
  Event completion;  // filled by submitted()
};

MoveProfile::MoveProfile() = default;
MoveProfile::~MoveProfile() = default;
MoveProfile::MoveProfile(MoveProfile&&) noexcept = default;
MoveProfile& MoveProfile::operator=(MoveProfile&&) noexcept = default;

MoveProfile MoveProfile::begin() {
  MoveProfile profile;
  if (!active()) [[likely]]
    return profile;
  Sessions sessions = snapshot_sessions();
  if (sessions == nullptr) return profile;
  profile.state_ = std::make_unique<State>();
  profile.state_->sessions = std::move(sessions);
  profile.state_->begun_ns = now_ns();
  profile.state_->correlation_id = next_correlation_id();
  return profile;
}

void MoveProfile::submitted(const std::string& name, const std::string& request,
                            const Tensor& source, const Carrier& destination) noexcept {
  if (state_ == nullptr) return;
  try {
    Event event;
    event.kind = EventKind::kSubmission;
    event.name = name;
    event.request = request;
    describe_input(source, event);
    event.carrier_classes.push_back(destination.carrier_class().name());
    event.thread_id = thread_id();
    event.correlation_id = state_->correlation_id;
    event.start_ns = state_->begun_ns;
    event.end_ns = now_ns();
    state_->completion = event;
    state_->completion.kind = EventKind::kCompletion;
    state_->completion.start_ns = event.end_ns;
    deliver(state_->sessions, std::move(event));
  } catch (...) {  // out of memory: the move records no events, and runs
    state_.reset();
  }
}

void MoveProfile::completed() noexcept {
  if (state_ == nullptr || state_->completed.exchange(true)) return;
  Event event = std::move(state_->completion);
  event.end_ns = now_ns();
  event.thread_id = thread_id();
  try {
    deliver(state_->sessions, std::move(event));
  } catch (...) {  // out of memory: the event is lost, the move's outcome is not
  }
}

}  // namespace strideweave::profiling
