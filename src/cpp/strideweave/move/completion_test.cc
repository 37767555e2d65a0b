#include "strideweave/move/completion.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace strideweave {
namespace {

TEST(Completion, the_first_outcome_wins) {
  Completion<std::string> c;
  EXPECT_FALSE(c.done());
  EXPECT_TRUE(c.succeed("moved"));
  EXPECT_TRUE(c.done());
  EXPECT_FALSE(c.succeed("again"));
  EXPECT_FALSE(c.fail(std::make_exception_ptr(std::runtime_error("late"))));
  EXPECT_EQ(c.wait(), "moved");
  EXPECT_EQ(c.error(), nullptr);
}

TEST(Completion, every_wait_returns_the_same_object) {
  Completion<std::shared_ptr<int>> c;
  std::vector<const std::shared_ptr<int>*> seen(8);
  std::vector<std::thread> waiters;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    waiters.emplace_back([&, i] { seen[i] = &c.wait(); });
  }
  c.succeed(std::make_shared<int>(7));
  for (std::thread& t : waiters) t.join();
  for (const auto* value : seen) {
    EXPECT_EQ(value, &c.wait());
    EXPECT_EQ(**value, 7);
  }
}

TEST(Completion, every_failed_wait_rethrows_the_same_exception_object) {
  Completion<int> c;
  c.fail(std::make_exception_ptr(std::runtime_error("copy failed")));
  EXPECT_TRUE(c.done());
  std::vector<const void*> thrown;
  for (int i = 0; i < 3; ++i) {
    try {
      c.wait();
      ADD_FAILURE() << "wait() returned after a recorded failure";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "copy failed");
      thrown.push_back(&e);
    }
  }
  EXPECT_EQ(thrown[0], thrown[1]);
  EXPECT_EQ(thrown[1], thrown[2]);
  EXPECT_NE(c.error(), nullptr);
}

TEST(Completion, racing_outcomes_record_exactly_one) {
  for (int round = 0; round < 50; ++round) {
    Completion<int> c;
    std::atomic<int> recorded{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        const bool mine =
            i % 2 == 0 ? c.succeed(i) : c.fail(std::make_exception_ptr(std::runtime_error("lost")));
        if (mine) ++recorded;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(recorded.load(), 1);
    EXPECT_TRUE(c.done());
  }
}

TEST(Completion, callbacks_run_once_on_either_side_of_the_outcome) {
  for (int round = 0; round < 50; ++round) {
    Completion<int> c;
    std::atomic<int> runs{0};
    std::atomic<bool> saw_done{true};
    std::thread registrar([&] {
      for (int i = 0; i < 100; ++i) {
        c.on_done([&] {
          if (!c.done()) saw_done = false;
          ++runs;
        });
      }
    });
    std::thread finisher([&] { c.succeed(round); });
    registrar.join();
    finisher.join();
    EXPECT_EQ(runs.load(), 100);
    EXPECT_TRUE(saw_done.load()) << "a callback ran before the outcome was visible";
  }
}

TEST(Completion, a_late_callback_runs_on_the_registering_thread) {
  Completion<int> c;
  c.succeed(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  c.on_done([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
}

}  // namespace
}  // namespace strideweave
