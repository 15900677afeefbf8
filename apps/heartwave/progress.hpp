// Progress of a long run: a bar redrawn in place on a terminal, plain log lines otherwise.
//
// Why both: a person watching a terminal wants percent, simulated time, speed and ETA on
// one line that updates; a batch job's log (not a tty) must not fill with carriage returns,
// so there it prints one complete line every so often.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace hw::cli {

class Progress {
 public:
  // t0: simulated time at the start (ms, > 0 after a restart); t_end: where the run stops.
  // tty: redraw in place (isatty of the stream); quiet: print nothing.
  Progress(double t0, double t_end, std::FILE* out, bool tty, bool quiet);
  // Called after every step; draws at most every 0.2 s (tty) or 10 s / 10 % (log). Once,
  // after kWarmup seconds of the run, prints the expected wall time measured so far.
  void update(double t_ms);
  // Ends the bar with a newline and prints the totals.
  void finish(double t_ms);
  // Clears the bar's line so another message can be printed cleanly (tty only).
  void interrupt();

  static constexpr double kWarmup = 2.0;  // s of running before the wall time is estimated
  // "expected wall time: about 1:35 (…)" from the speed over the warm-up.
  static std::string estimate(double t0, double t_end, double t_ms, double wall_s);

  // "1:02:03" / "2:03" / "45 s".
  static std::string format_duration(double seconds);
  // The bar text for a given state (tests see exactly what is drawn).
  static std::string line(double t0, double t_end, double t_ms, double wall_s, bool bar);

 private:
  double elapsed() const;
  double t0_, t_end_;
  std::FILE* out_;
  bool tty_, quiet_;
  std::chrono::steady_clock::time_point start_;
  double last_draw_ = -1e9;
  double last_frac_ = -1;
  bool drawn_ = false;
  bool estimated_ = false;
};

}  // namespace hw::cli
