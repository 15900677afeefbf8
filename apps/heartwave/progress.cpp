#include "progress.hpp"

#include <algorithm>
#include <cmath>

namespace hw::cli {

Progress::Progress(double t0, double t_end, std::FILE* out, bool tty, bool quiet, bool stops_early)
    : t0_(t0), t_end_(t_end), out_(out), tty_(tty), quiet_(quiet), stops_early_(stops_early), rate_(t0, t_end),
      start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return std::to_string(static_cast<int>(std::lround(s))) + " s";
  long t = std::lround(s);
  char buf[32];
  if (t < 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

std::string Progress::line(double t0, double t_end, double t, const run::StepRate& r, bool bar) {
  const double span = std::max(t_end - t0, 1e-300);
  const double frac = std::clamp((t - t0) / span, 0.0, 1.0);
  const double rate = r.rate();  // simulated ms per wall second, since start-up
  const double eta = r.seconds_left();
  char buf[256];
  std::string b;
  if (bar) {
    const int width = 24, full = static_cast<int>(frac * width);
    b = "[" + std::string(full, '#') + std::string(width - full, '.') + "] ";
  }
  std::snprintf(buf, sizeof buf, "%s%5.1f%%  t = %.1f / %.1f ms  %.3g ms/s  ETA %s", b.c_str(),
                100 * frac, t, t_end, rate, format_duration(eta).c_str());
  return buf;
}

std::string Progress::estimate(const run::StepRate& r, bool stops_early) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "expected wall time: %s %s (%.3g simulated ms per second over %s of stepping%s)",
                stops_early ? "at most about" : "about", format_duration(r.expected_total()).c_str(), r.rate(),
                format_duration(r.measured_over()).c_str(),
                stops_early ? "; it may stop earlier" : "");
  return buf;
}

void Progress::update(double t, bool warming) {
  if (quiet_) return;
  const double now = elapsed();
  rate_.observe(t, now, warming);
  if (!estimated_ && rate_.settled() && t < t_end_) {
    // Once, so a user knows early what they have started (the bar's ETA moves; this stays).
    interrupt();
    std::fprintf(out_, "%s\n", estimate(rate_, stops_early_).c_str());
    estimated_ = true;
    last_draw_ = -1e9;
  }
  const double frac = (t - t0_) / std::max(t_end_ - t0_, 1e-300);
  if (tty_) {
    if (now - last_draw_ < 0.2) return;
    std::fprintf(out_, "\r%s\x1b[K", line(t0_, t_end_, t, rate_, true).c_str());
  } else {
    if (now - last_draw_ < 10 && frac - last_frac_ < 0.1) return;
    std::fprintf(out_, "progress: %s\n", line(t0_, t_end_, t, rate_, false).c_str());
    last_frac_ = frac;
  }
  std::fflush(out_);
  last_draw_ = now;
  drawn_ = true;
}

void Progress::interrupt() {
  if (quiet_ || !tty_ || !drawn_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
  last_draw_ = -1e9;
}

void Progress::finish(double t) {
  if (quiet_) return;
  const double wall = elapsed();
  rate_.observe(t, wall, false);
  if (tty_) std::fprintf(out_, "\r%s\x1b[K\n", line(t0_, t_end_, t, rate_, true).c_str());
  // The real-time factor: wall seconds per simulated second (<= 1: as fast as the heart).
  std::fprintf(out_, "done: %.1f ms simulated in %s (%.3g ms/s, real-time factor %.3g)\n", t - t0_,
               format_duration(wall).c_str(), wall > 0 ? (t - t0_) / wall : 0.0,
               t > t0_ ? wall / ((t - t0_) * 1e-3) : 0.0);
  std::fflush(out_);
}

}  // namespace hw::cli
