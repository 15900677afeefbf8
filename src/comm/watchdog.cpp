#include "comm/watchdog.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace hw::comm {

namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

double rank_timeout_seconds() {
  const char* t = std::getenv("HEARTWAVE_RANK_TIMEOUT");
  return t && *t ? std::atof(t) : 600.0;
}

Watchdog::Watchdog(double timeout_s, std::string who) : timeout_s_(timeout_s), who_(std::move(who)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Watchdog::Armed::Armed(Watchdog* w, const char* what) : w_(w && w->timeout_s_ > 0 ? w : nullptr) {
  if (!w_) return;
  // The start before the depth: the watchdog never sees an armed scope with an old start.
  // (One thread arms, so two outermost scopes never race here.)
  if (w_->depth_.load() == 0) {
    w_->what_.store(what);
    w_->since_ns_.store(now_ns());
  }
  w_->depth_.fetch_add(1);
}

Watchdog::Armed::~Armed() {
  if (w_) w_->depth_.fetch_sub(1);
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(m_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    if (depth_.load() == 0) continue;
    const double waited = double(now_ns() - since_ns_.load()) * 1e-9;
    // Read again: the scope may have ended (and another begun) while the time was taken.
    if (depth_.load() == 0 || waited <= timeout_s_) continue;
    const char* what = what_.load();
    std::fprintf(stderr,
                 "heartwave (%s): waited %.0f s for the other ranks' GPUs in %s; one of them hangs or "
                 "stopped. Ending this rank, and mpirun every rank (HEARTWAVE_RANK_TIMEOUT sets the wait, 0 "
                 "waits for ever)\n",
                 who_.c_str(), waited, what ? what : "a wait");
    std::fflush(stderr);
    std::_Exit(1);
  }
}

}  // namespace hw::comm
