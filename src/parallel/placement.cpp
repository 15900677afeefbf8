#include "parallel/placement.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "parallel/governor.hpp"
#include "parallel/team.hpp"

namespace hw::par {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

PlacementDecision decide_placement(const PlacementInput& in) {
  PlacementDecision d;
  if (in.team >= in.usable) {
    if (in.pinned) d.action = PlacementDecision::Action::release;
    return d;
  }
  if (in.wait_fraction < Placement::kCrowded) return d;
  double best = -1;
  for (std::size_t i = 0; i < in.cpus.size() && i < in.idle.size(); ++i) {
    if (in.cpus[i] == in.current_cpu) continue;
    if (in.idle[i] > best) best = in.idle[i], d.cpu = in.cpus[i];
  }
  if (d.cpu >= 0) d.action = PlacementDecision::Action::move;
  return d;
}

Placement::Placement() {
  // HEARTWAVE_PLACEMENT=off leaves the thread where the OS puts it (the benchmarks' before).
  if (const char* e = std::getenv("HEARTWAVE_PLACEMENT"); e && std::string(e) == "off") return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus_.push_back(c);
  std::uint64_t ns = 0;
  available_ = cpus_.size() > 1 && read_wait(ns);
  if (!available_) return;
  wait_ns_ = ns;
  idle_.assign(cpus_.size(), 0);
  total_.assign(cpus_.size(), 0);
  idle_shares();  // the first window's starting point
  window_start_ = now_s();
}

bool Placement::read_wait(std::uint64_t& ns) const {
  // "on-CPU ns, run-queue wait ns, timeslices" of the calling thread.
  std::ifstream f("/proc/thread-self/schedstat");
  std::uint64_t run = 0;
  return static_cast<bool>(f >> run >> ns);
}

std::vector<double> Placement::idle_shares() {
  std::vector<double> share(cpus_.size(), 0);
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    std::ifstream f("/proc/stat");
    const Jiffies j = read_jiffies(f, {cpus_[i]});
    if (j.found == 0) continue;
    const double dt = double(j.total - total_[i]), di = double(j.idle - idle_[i]);
    share[i] = dt > 0 ? di / dt : 0;
    idle_[i] = j.idle, total_[i] = j.total;
  }
  return share;
}

void Placement::pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) == 0) pinned_ = cpu, ++moves_;
}

void Placement::release() {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus_) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof(set), &set) == 0) pinned_ = -1;
}

void Placement::after_step(int team, double seconds) {
  if (!available_) return;
  const int usable = std::min(usable_cores(), static_cast<int>(cpus_.size()));
  if (team >= usable && pinned_ >= 0) {
    release();  // before the next step: the whole team needs every core
    return;
  }
  if (team != last_team_) {
    // The team just shrank (or this is the first step): look soon, over this team's steps only.
    const bool first = last_team_ < 0;
    last_team_ = team;
    if (!first) {
      restart_window(kFirstLook);
      return;
    }
  }
  window_ += seconds;
  if (window_ < look_) return;
  std::uint64_t ns = 0;
  const double t = now_s();
  if (!read_wait(ns)) return;
  PlacementInput in;
  in.wait_fraction = t > window_start_ ? double(ns - wait_ns_) * 1e-9 / (t - window_start_) : 0;
  in.team = team;
  in.usable = usable;
  in.current_cpu = sched_getcpu();
  in.pinned = pinned_ >= 0;
  in.cpus = cpus_;
  in.idle = idle_shares();
  last_wait_fraction_ = in.wait_fraction;
  const PlacementDecision d = decide_placement(in);
  if (d.action == PlacementDecision::Action::move) pin(d.cpu);
  if (d.action == PlacementDecision::Action::release) release();
  wait_ns_ = ns;
  window_ = 0;
  window_start_ = t;
  look_ = kWindow;
}

void Placement::restart_window(double look) {
  std::uint64_t ns = 0;
  if (!read_wait(ns)) return;
  wait_ns_ = ns;
  idle_shares();
  window_ = 0;
  window_start_ = now_s();
  look_ = look;
}

std::string Placement::describe() const {
  if (moves_ == 0) return {};
  return fmt::format("the stepping thread moved {} time{} off a crowded core{}", moves_, moves_ == 1 ? "" : "s",
                     pinned_ >= 0 ? fmt::format(" (now on CPU {})", pinned_) : std::string());
}

}  // namespace hw::par
