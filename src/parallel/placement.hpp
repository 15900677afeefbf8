// Where the stepping thread runs when its team is smaller than the cores it may use.
//
// Why: with one busy program pinned to a core of a 2-core laptop the governor shrinks the
// team to one thread, but the OS may leave that thread on the busy core, sharing it, while
// the other core stands idle: a lone thread then ran 1.1e8 or 2.7e8 cell-steps/s from one
// run to the next on the same host (docs/benchmarks.md, "One busy program pinned to a
// core"). The thread can see it: its time waiting in the run queue (/proc/thread-self/
// schedstat) grows while it is runnable but another task holds its core. When that wait is
// a large share of the wall time and the team leaves cores unused, the thread moves itself
// to the idlest other core it may use (per-CPU idle time from /proc/stat) and stays there;
// when the team the governor keeps (not a probe's) grows back to every core, it is free
// again. Only the thread that steps is moved: OpenMP's workers keep the process's mask, and they were made while it was whole.
// HEARTWAVE_PLACEMENT=off in the environment turns it off (to compare, or to leave the
// thread to a batch system's own binding).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hw::par {

// What to do after a window of stepping, from what the thread measured: stay put, move to
// `cpu`, or release a pin. Pure, for the tests.
struct PlacementInput {
  double wait_fraction = 0;     // run-queue wait / wall time over the window
  int team = 1, usable = 1;     // threads stepping now; cores the process may use
  int current_cpu = -1;         // where the thread ran last (sched_getcpu)
  bool pinned = false;          // the thread is pinned by us now
  std::vector<int> cpus;        // the process's CPUs (its affinity mask when it started)
  std::vector<double> idle;     // idle share of each of cpus since the last window, 0…1
};
struct PlacementDecision {
  enum class Action { stay, move, release } action = Action::stay;
  int cpu = -1;
};
PlacementDecision decide_placement(const PlacementInput& in);

class Placement {
 public:
  static constexpr double kWindow = 0.25;      // s of stepping between looks
  static constexpr double kFirstLook = 0.05;   // s after the kept team shrinks: the thread left
                                               // beside a busy program runs at half speed until it moves
  static constexpr double kCrowded = 0.25;     // run-queue wait share that makes it move

  Placement();  // the calling thread's mask is the process's (read once)
  // After each step, on the stepping thread: `seconds` of wall time with `team` threads.
  void after_step(int team, double seconds);
  bool active() const { return available_; }
  int pinned_cpu() const { return pinned_; }   // −1 when free
  int moves() const { return moves_; }
  std::string describe() const;                // "", or where it moved and why

 private:
  bool read_wait(std::uint64_t& ns) const;
  std::vector<double> idle_shares();
  void pin(int cpu);
  void release();
  void restart_window(double look);  // a new window of `look` s from now

  bool available_ = false;
  std::vector<int> cpus_;
  std::vector<std::uint64_t> idle_, total_;
  double window_ = 0, window_start_ = 0;  // s of stepping; wall clock at the window's start
  double look_ = kWindow;                 // this window's length
  int last_team_ = -1;
  std::uint64_t wait_ns_ = 0;
  int pinned_ = -1, moves_ = 0;
  double last_wait_fraction_ = 0;
};

}  // namespace hw::par
