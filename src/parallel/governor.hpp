// The team size of a stepping loop, chosen by measuring it while it runs.
//
// Why: on a machine shared with other processes (a laptop, CI, a login node) a thread that
// the OS has taken off its core holds every other thread at the end-of-step barrier. With
// steps of a fraction of a millisecond two threads then run slower than one, and no count
// fixed in advance is right both on a quiet and on a loaded machine (docs/benchmarks.md,
// "A busy machine"). So now and then the governor times a short window of steps with the
// current team, an equal window with one thread fewer (or more), and the current team
// again, back to back so all three see the same load, and keeps the faster. A probe that
// loses makes the next one wait twice as long (up to kMaxInterval); one that wins by a little
// is repeated soon, and only a second win in a row switches the team (one window on a loaded
// machine can flatter a team by chance); one that wins by a third or more switches at once. Downward probes
// that lose try twice as many threads fewer the next time, so a plateau of equally slow
// team sizes is crossed. A larger team is only tried when the machine has had an idle core
// since the last probe (IdleCores): more threads than free cores can only share them, and
// on a busy 2-core machine a probe of the second thread is a loss every time.
//
// The first probe comes early and short (kFirstLook, kFirstWindow): beside a busy program
// pinned to one of two cores the whole team runs a step 3x slower than one thread, and a
// first decision after 0.25 s plus three 0.2 s windows cost a 5 s run a tenth of its time
// (docs/benchmarks.md, "Placement"). A factor of 3 shows in windows of a few steps; a short
// window that wins only modestly is confirmed by a full-length probe as any other is.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <vector>

namespace hw::par {

// Idle + iowait and all jiffies summed over the CPUs listed, read from /proc/stat text
// (its per-CPU lines "cpuN user nice system idle iowait irq softirq steal ..."); CPUs
// not in the text are left out. found: how many of them were there.
struct Jiffies {
  std::uint64_t idle = 0, total = 0;
  int found = 0;
};
Jiffies read_jiffies(std::istream& proc_stat, const std::vector<int>& cpus);

// Idle cores among the CPUs this process may run on (its affinity mask), averaged since the
// previous call: idle jiffies over all jiffies of those CPUs, times their number, at most
// usable_cores(). The first call measures since boot. Negative when unknown (no
// /proc/stat). Why only our CPUs: a run confined by taskset, a cpuset or a batch system's
// binding cannot grow into the machine's other idle cores; counting them made the governor
// probe a second thread on a busy pair of cores every few seconds, each probe a loss.
class IdleCores {
 public:
  IdleCores();
  double operator()();

 private:
  std::vector<int> cpus_;
  std::uint64_t idle_ = 0, total_ = 0;
};

class ThreadGovernor {
 public:
  // At most `max` threads; with adapt false, always `max`. idle_cores says how many cores
  // stood idle since its last call (IdleCores; tests pass their own).
  ThreadGovernor(int max, bool adapt, std::function<double()> idle_cores = IdleCores());

  int threads() const { return current_; }  // the team for the next step
  int settled() const { return best_; }     // the team it keeps between probes
  int max() const { return max_; }
  bool adapts() const { return adapt_ && max_ > 1; }
  // Reports the wall seconds of one step run with threads().
  void record(double seconds);
  // Time-weighted mean team size over the steps recorded so far.
  double mean_threads() const { return busy_ > 0 ? thread_seconds_ / busy_ : double(current_); }

  static constexpr double kFirstLook = 0.05;      // s of stepping before the first probe
  static constexpr double kFirstWindow = 0.02;    // s per window of the first probe
  static constexpr double kFirstInterval = 0.25;  // s of stepping before a probe
  static constexpr double kMaxInterval = 8.0;
  static constexpr double kWindow = 0.2;  // s per timed window (and at least kWindowSteps)
  static constexpr int kWindowSteps = 4;
  static constexpr double kIdleToGrow = 0.5;  // idle cores (mean) before a larger team is tried
  static constexpr double kMargin = 0.10;  // a probe must be this much faster to win: a loaded
                                           // machine times steps to ±5 %, and a needless switch costs
  static constexpr double kDecisive = 0.30;  // a probe this much faster wins at once, unconfirmed:
                                             // a stall flatters a window by a few per cent, not by a
                                             // third (2 threads beside a pinned busy process run a
                                             // step 3x slower than 1; each confirmation costs 0.6 s)

 private:
  enum class Phase { run, base, probe, rebase };
  int candidate() const;
  void start_window(Phase next, int team);
  // Adds a step to the current window; true when the window is complete.
  bool window_step(double seconds);

  int max_, best_, current_;
  bool adapt_;
  Phase phase_ = Phase::run;
  double since_probe_ = 0, interval_ = kFirstLook;
  double window_length_ = kFirstWindow;  // kWindow after the first probe
  double window_time_ = 0, base_per_step_ = 0, probe_per_step_ = 0;
  int probe_team_ = 0;
  int window_steps_ = -1;  // −1: the window's first step, not timed (a new team warms up)
  std::function<double()> idle_cores_;
  int direction_ = -1;
  int down_step_ = 1;   // how many threads fewer the next downward probe tries
  int confirming_ = 0;  // the team of a probe that won once and is being tried again
  double busy_ = 0, thread_seconds_ = 0;
};

}  // namespace hw::par
