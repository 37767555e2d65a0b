// The profiler's sessions, operation scopes and move events (spec/operation-
// profiling; the Python suite binds the scenarios).
#include "strideweave/profiling/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/request.h"

namespace strideweave::profiling {
namespace {

std::shared_ptr<const Tensor> cpu_tensor(int64_t n) {
  return Tensor::make(std::make_shared<CPU>(DType::Float32(), n), Layout(IntTuple(n)));
}

TEST(Profiler, is_active_exactly_while_a_session_is) {
  EXPECT_FALSE(active());
  auto outer = Session::start();
  auto inner = Session::start();
  EXPECT_TRUE(active());
  inner->stop();
  inner->stop();  // idempotent
  EXPECT_TRUE(active());
  EXPECT_FALSE(inner->is_active());
  outer->stop();
  EXPECT_FALSE(active());
}

TEST(Profiler, an_operation_scope_records_its_inputs) {
  const auto a = cpu_tensor(3);
  const auto b =
      Tensor::make(std::make_shared<Generic>(DType::Float32(), 6), Layout(IntTuple::tuple({2, 3})));
  auto session = Session::start();
  const int64_t before = now_ns();
  {
    const OperationScope scope("mul", {a.get(), b.get()});
  }
  const int64_t after = now_ns();
  session->stop();
  const std::vector<Event> events = session->events();
  ASSERT_EQ(events.size(), 1u);
  const Event& e = events[0];
  EXPECT_EQ(e.kind, EventKind::kOperation);
  EXPECT_EQ(e.name, "mul");
  EXPECT_EQ(e.carrier_classes, (std::vector<std::string>{"CPU", "Generic"}));
  EXPECT_EQ(e.shapes, (std::vector<IntTuple>{IntTuple(3), IntTuple::tuple({2, 3})}));
  EXPECT_EQ(e.dtype, "Float32");
  EXPECT_LE(before, e.start_ns);
  EXPECT_LE(e.start_ns, e.end_ns);
  EXPECT_LE(e.end_ns, after);
  EXPECT_EQ(e.thread_id, thread_id());
  EXPECT_NE(e.correlation_id, 0u);
  EXPECT_TRUE(e.request.empty());
}

TEST(Profiler, records_nothing_without_a_session) {
  const auto a = cpu_tensor(2);
  {
    const OperationScope scope("neg", {a.get()});
  }
  auto session = Session::start();
  session->stop();
  {
    const OperationScope scope("neg", {a.get()});
  }
  EXPECT_TRUE(session->events().empty());
}

TEST(Profiler, an_operation_reaches_the_sessions_active_when_it_began) {
  const auto a = cpu_tensor(2);
  auto early = Session::start();
  std::vector<Event> late_events;
  {
    const OperationScope scope("sum", {a.get()});
    early->stop();  // still receives the operation begun while it was active
    auto late = Session::start();
    late->stop();
    late_events = late->events();
  }
  EXPECT_EQ(early->events().size(), 1u);
  EXPECT_TRUE(late_events.empty());
}

TEST(Profiler, collects_from_every_thread_with_unique_correlation_ids) {
  const auto a = cpu_tensor(4);
  auto session = Session::start();
  constexpr int kThreads = 4;
  constexpr int kOps = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kOps; ++i) const OperationScope scope("add", {a.get(), a.get()});
    });
  }
  // Sessions start and stop meanwhile without disturbing the first one.
  for (int i = 0; i < 50; ++i) Session::start()->stop();
  for (std::thread& thread : threads) thread.join();
  session->stop();
  const std::vector<Event> events = session->events();
  ASSERT_EQ(events.size(), static_cast<std::size_t>(kThreads * kOps));
  std::vector<uint64_t> ids;
  std::vector<uint64_t> threads_seen;
  for (const Event& e : events) {
    ids.push_back(e.correlation_id);
    threads_seen.push_back(e.thread_id);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  std::sort(threads_seen.begin(), threads_seen.end());
  EXPECT_EQ(std::unique(threads_seen.begin(), threads_seen.end()) - threads_seen.begin(), kThreads);
}

TEST(Profiler, a_move_records_submission_and_completion_once) {
  const auto source = cpu_tensor(5);
  auto destination = std::make_shared<FileBacked>(DType::Float32());
  auto session = Session::start();
  const auto request = MoveRequest::initiate(source, destination);
  session->stop();  // the completion still arrives
  request->completion().wait();
  request->completion().wait();
  const std::vector<Event> events = session->events();
  ASSERT_EQ(events.size(), 2u);
  const Event& submission = events[0];
  const Event& completion = events[1];
  EXPECT_EQ(submission.kind, EventKind::kSubmission);
  EXPECT_EQ(completion.kind, EventKind::kCompletion);
  EXPECT_EQ(submission.name, "CpuToFileBackedMoveOperation");
  EXPECT_EQ(submission.request, request->name());
  EXPECT_EQ(submission.correlation_id, completion.correlation_id);
  EXPECT_EQ(submission.carrier_classes, (std::vector<std::string>{"CPU", "FileBacked"}));
  EXPECT_EQ(completion.carrier_classes, submission.carrier_classes);
  EXPECT_EQ(completion.shapes, (std::vector<IntTuple>{IntTuple(5)}));
  EXPECT_EQ(submission.thread_id, thread_id());
  EXPECT_NE(completion.thread_id, thread_id());  // committed on a pool worker
  EXPECT_LE(submission.start_ns, submission.end_ns);
  EXPECT_EQ(completion.start_ns, submission.end_ns);
  EXPECT_LE(completion.start_ns, completion.end_ns);
}

TEST(Profiler, a_failed_move_initiation_records_nothing) {
  const auto source = cpu_tensor(2);
  auto destination = std::make_shared<CPU>(DType::Int32());  // dtype mismatch
  auto session = Session::start();
  EXPECT_ANY_THROW(MoveRequest::initiate(source, destination));
  session->stop();
  EXPECT_TRUE(session->events().empty());
}

// The code of profiler.h, found next to this file: comments dropped, runs of
// whitespace made one space.
std::string profiler_header() {
  const std::filesystem::path header = std::filesystem::path(__FILE__).parent_path() / "profiler.h";
  std::ifstream in(header);
  EXPECT_TRUE(in.good()) << header;
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string code = std::regex_replace(text, std::regex("//[^\n]*"), "");
  return std::regex_replace(code, std::regex(R"(\s+)"), " ");
}

// Structural, never timed: with no profile active, an operation's profiling is
// active(), one relaxed load of one lock-free atomic, behind one branch marked
// unlikely; the scope's destructor tests the one pointer it holds.
TEST(operation_profiling__a_profile_collects_events_from_every_thread_while_it_is_active,
     clause4__the_inactive_path_is_one_relaxed_load_and_one_branch) {
  static_assert(std::is_same_v<decltype(internal_profiling::active_sessions), std::atomic<int>>);
  static_assert(std::atomic<int>::is_always_lock_free);
  static_assert(noexcept(active()));
  static_assert(sizeof(OperationScope) == sizeof(void*));
  const std::string header = profiler_header();
  // active() is exactly one relaxed load of that atomic, compared.
  EXPECT_NE(header.find("inline bool active() noexcept { return "
                        "internal_profiling::active_sessions.load(std::memory_order_relaxed) != "
                        "0; }"),
            std::string::npos);
  // Every OperationScope constructor is that branch around the recording call,
  // and every active() call in the header is one of them.
  const std::regex gated(
      R"(OperationScope\([^{};]*\) \{ if \(active\(\)\) \[\[unlikely\]\] begin\([^;]*\); \})");
  const auto count = [&](const std::regex& pattern) {
    return std::distance(std::sregex_iterator(header.begin(), header.end(), pattern),
                         std::sregex_iterator());
  };
  EXPECT_EQ(count(gated), 3);
  EXPECT_EQ(count(std::regex(R"(\bactive\(\))")), 1 + 3);  // the definition and the three gates
  EXPECT_NE(header.find("~OperationScope() { if (pending_ != nullptr) [[unlikely]] finish(); }"),
            std::string::npos);
  // active() reads that atomic and nothing else decides it.
  ASSERT_FALSE(active());
  internal_profiling::active_sessions.store(1, std::memory_order_relaxed);
  EXPECT_TRUE(active());
  internal_profiling::active_sessions.store(0, std::memory_order_relaxed);
  EXPECT_FALSE(active());
  // Behind the branch nothing runs: inputs that cannot be read are never read,
  // and a session started afterwards holds nothing.
  const Tensor* const unreadable[] = {nullptr, nullptr};
  for (int i = 0; i < 1000; ++i) {
    const OperationScope scope("add", std::span<const Tensor* const>(unreadable));
  }
  auto session = Session::start();
  session->stop();
  EXPECT_TRUE(session->events().empty());
}

}  // namespace
}  // namespace strideweave::profiling
