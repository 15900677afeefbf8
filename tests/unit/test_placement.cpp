// The stepping thread moves off a crowded core (parallel/placement.*): the decision from
// what a thread measures, and for real: a spinning process pinned to one CPU, the test's
// thread put on the same CPU, stepping work with a team of one; the thread must find the
// other CPU by itself and be freed when the team is whole again.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "parallel/placement.hpp"
#include "parallel/team.hpp"

using namespace hw::par;

namespace {

PlacementInput crowded_on(int cpu) {
  PlacementInput in;
  in.wait_fraction = 0.5;
  in.team = 1;
  in.usable = 4;
  in.current_cpu = cpu;
  in.cpus = {0, 1, 2, 3};
  in.idle = {0.0, 0.9, 0.2, 0.95};
  return in;
}

TEST(Placement, ACrowdedLoneThreadMovesToTheIdlestOtherCore) {
  PlacementDecision d = decide_placement(crowded_on(0));
  EXPECT_EQ(d.action, PlacementDecision::Action::move);
  EXPECT_EQ(d.cpu, 3);
  // Its own core is never the target, however idle it looks.
  d = decide_placement(crowded_on(3));
  EXPECT_EQ(d.cpu, 1);
}

TEST(Placement, StaysWhenNotCrowdedOrTheTeamUsesEveryCore) {
  PlacementInput in = crowded_on(0);
  in.wait_fraction = 0.1;
  EXPECT_EQ(decide_placement(in).action, PlacementDecision::Action::stay);
  in = crowded_on(0);
  in.team = 4;  // the whole team: a pin would squeeze it; nothing pinned, nothing to do
  EXPECT_EQ(decide_placement(in).action, PlacementDecision::Action::stay);
  in.pinned = true;
  EXPECT_EQ(decide_placement(in).action, PlacementDecision::Action::release);
  in = crowded_on(0);
  in.cpus = {0};
  in.idle = {0.5};
  EXPECT_EQ(decide_placement(in).action, PlacementDecision::Action::stay);  // nowhere to go
}

double spin_work(double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  double x = 1;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds)
    for (int i = 0; i < 10000; ++i) x = std::sqrt(x + 1.0);
  return x;
}

bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

TEST(Placement, FindsTheFreeCoreBesideAPinnedBusyProcess) {
  Placement p;
  if (!p.active() || usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs and /proc/thread-self/schedstat";
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  int busy_cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && busy_cpu < 0; ++c)
    if (CPU_ISSET(c, &mine)) busy_cpu = c;
  // A user's program, pinned to that CPU and spinning.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pin_self(busy_cpu);
    volatile double x = 1;
    for (;;) x = x * 1.0000001;
  }
  // The stepping thread starts on the same CPU (as the OS may leave it).
  ASSERT_TRUE(pin_self(busy_cpu));
  for (int step = 0; step < 400 && p.moves() == 0; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    spin_work(0.01);
    p.after_step(1, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_GE(p.moves(), 1) << "the thread never left the busy CPU " << busy_cpu;
  EXPECT_NE(p.pinned_cpu(), busy_cpu);
  EXPECT_NE(sched_getcpu(), busy_cpu);
  EXPECT_NE(p.describe().find("off a crowded core"), std::string::npos) << p.describe();
  // The whole team again: the thread is free to run anywhere it could before.
  p.after_step(usable_cores(), 0.01);
  EXPECT_EQ(p.pinned_cpu(), -1);
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &mine));
  sched_setaffinity(0, sizeof(mine), &mine);
}

}  // namespace
