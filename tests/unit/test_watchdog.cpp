// comm::Watchdog (comm/watchdog.hpp): the deadline on a split GPU run's waits for the other
// ranks. A scope that ends in time passes; one that lasts past the deadline ends the process
// with exit code 1 and a line that says who waited, where and what to set.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "comm/watchdog.hpp"

using hw::comm::Watchdog;
using namespace std::chrono_literals;

TEST(Watchdog, ScopesThatEndInTimeLeaveTheProcessAlone) {
  Watchdog w(0.5, "rank 0 of 2");
  for (int n = 0; n < 8; ++n) {  // 2 s in all, each scope well inside the deadline
    Watchdog::Armed outer(&w, "a batch of steps");
    Watchdog::Armed inner(&w, "the gather of every rank's state");  // nested: the outer start counts
    std::this_thread::sleep_for(100ms);
  }
  std::this_thread::sleep_for(1s);  // unarmed: no deadline at all
  SUCCEED();
}

TEST(Watchdog, AScopePastTheDeadlineEndsTheProcessWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(0.5, "rank 1 of 4");
        Watchdog::Armed armed(&w, "a batch of steps");
        std::this_thread::sleep_for(5s);
        std::exit(0);
      },
      testing::ExitedWithCode(1),
      "rank 1 of 4\\): waited 1 s for the other ranks' GPUs in a batch of steps.*HEARTWAVE_RANK_TIMEOUT");
}

TEST(Watchdog, NoDeadlineWhenTheTimeoutIsZeroOrTheWatchdogIsAbsent) {
  Watchdog off(0, "rank 0 of 2");
  EXPECT_EQ(off.timeout_seconds(), 0);
  {
    Watchdog::Armed a(&off, "a batch of steps");
    Watchdog::Armed b(nullptr, "one GPU: nothing to wait for");
    std::this_thread::sleep_for(300ms);
  }
  setenv("HEARTWAVE_RANK_TIMEOUT", "7.5", 1);
  EXPECT_EQ(hw::comm::rank_timeout_seconds(), 7.5);
  unsetenv("HEARTWAVE_RANK_TIMEOUT");
  EXPECT_EQ(hw::comm::rank_timeout_seconds(), 600);
}
