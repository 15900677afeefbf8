#include "parallel/governor.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

#include "parallel/team.hpp"

namespace hw::par {

Jiffies read_jiffies(std::istream& in, const std::vector<int>& cpus) {
  Jiffies j;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream ls(line.substr(3));
    int id = -1;
    std::uint64_t v[8] = {};
    if (!(ls >> id) || std::find(cpus.begin(), cpus.end(), id) == cpus.end()) continue;
    std::uint64_t total = 0;
    bool complete = true;
    for (auto& x : v) {
      if (!(ls >> x)) complete = false;
      total += x;  // user nice system idle iowait irq softirq steal (guest is inside user)
    }
    if (!complete) continue;
    j.idle += v[3] + v[4];
    j.total += total;
    ++j.found;
  }
  return j;
}

IdleCores::IdleCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus_.push_back(c);
}

double IdleCores::operator()() {
  std::ifstream f("/proc/stat");
  const Jiffies j = read_jiffies(f, cpus_);
  if (j.found == 0) return -1;
  const double d_total = double(j.total - total_), d_idle = double(j.idle - idle_);
  idle_ = j.idle;
  total_ = j.total;
  if (d_total <= 0) return -1;
  return std::min(d_idle / d_total * double(j.found), double(usable_cores()));
}

ThreadGovernor::ThreadGovernor(int max, bool adapt, std::function<double()> idle_cores)
    : max_(std::max(1, max)), best_(max_), current_(max_), adapt_(adapt), idle_cores_(std::move(idle_cores)) {
  if (adapts() && idle_cores_) idle_cores_();  // the first interval's starting point
}

int ThreadGovernor::candidate() const {
  const bool down = best_ == max_ || (direction_ < 0 && best_ > 1);
  return down ? std::max(1, best_ - down_step_) : best_ + 1;
}

void ThreadGovernor::start_window(Phase next, int team) {
  if (next == Phase::probe) probe_team_ = team;
  phase_ = next;
  window_time_ = 0;
  window_steps_ = team == current_ ? 0 : -1;  // a new team's first step warms it up: untimed
  current_ = team;
}

bool ThreadGovernor::window_step(double seconds) {
  if (window_steps_ < 0) {
    window_steps_ = 0;
    return false;
  }
  window_time_ += seconds;
  ++window_steps_;
  return window_time_ >= window_length_ && window_steps_ >= kWindowSteps;
}

void ThreadGovernor::record(double seconds) {
  busy_ += seconds;
  thread_seconds_ += seconds * current_;
  if (!adapts()) return;
  switch (phase_) {
    case Phase::run:
      since_probe_ += seconds;
      if (since_probe_ < interval_) return;
      if (candidate() > best_ && idle_cores_) {
        // Grow only into idle cores; without one the probe would lose: wait twice as long.
        const double idle = idle_cores_();
        if (idle >= 0 && idle < kIdleToGrow) {
          since_probe_ = 0;
          interval_ = std::min(2 * interval_, kMaxInterval);
          return;
        }
      }
      start_window(Phase::base, best_);
      return;
    case Phase::base:
      if (!window_step(seconds)) return;
      base_per_step_ = window_time_ / window_steps_;
      start_window(Phase::probe, candidate());
      return;
    case Phase::probe:
      if (!window_step(seconds)) return;
      probe_per_step_ = window_time_ / window_steps_;
      start_window(Phase::rebase, best_);
      return;
    case Phase::rebase: {
      if (!window_step(seconds)) return;
      // The probe against the mean of the windows before and after it: a load that grows
      // or fades during the three cancels to first order.
      const double base = 0.5 * (base_per_step_ + window_time_ / window_steps_);
      const int tried = probe_team_;
      const bool down = tried < best_;
      const bool decisive = probe_per_step_ < base * (1 - kDecisive);
      interval_ = std::max(interval_, kFirstInterval);  // after the early first probe, the usual pace
      if (probe_per_step_ < base * (1 - kMargin) && confirming_ != tried && !decisive) {
        // A first win: steps on a loaded machine stall at random, so one window can flatter
        // a team. The same probe again soon; only a second win switches.
        confirming_ = tried;
        interval_ = kFirstInterval;
      } else if (probe_per_step_ < base * (1 - kMargin)) {
        direction_ = down ? -1 : 1;  // keep going the way that paid, soon
        best_ = current_ = tried;
        down_step_ = 1;
        confirming_ = 0;
        const bool further = direction_ < 0 ? best_ > 1 : best_ < max_;
        interval_ = further ? kFirstInterval : std::min(2 * interval_, kMaxInterval);
      } else {
        confirming_ = 0;
        // A team a little smaller can be no faster while a much smaller one is (two busy
        // processes on 16 cores: 15 threads still share a core): look further down next time.
        if (down) down_step_ = best_ - 2 * down_step_ >= 1 ? 2 * down_step_ : 1;
        if (best_ > 1 && best_ < max_) direction_ = -direction_;
        interval_ = std::min(2 * interval_, kMaxInterval);
      }
      phase_ = Phase::run;
      since_probe_ = 0;
      window_length_ = kWindow;
      return;
    }
  }
}

}  // namespace hw::par
