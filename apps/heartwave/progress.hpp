// Progress of a long run: a bar redrawn in place on a terminal, plain log lines otherwise.
//
// Why both: a person watching a terminal wants percent, simulated time, speed and ETA on
// one line that updates; a batch job's log (not a tty) must not fill with carriage returns,
// so there it prints one complete line every so often. Speeds and estimates come from
// run/step_rate.hpp: measured after the engine's start-up (compilation, tuning), not over it.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "run/step_rate.hpp"

namespace hw::cli {

class Progress {
 public:
  // t0: simulated time at the start (ms, > 0 after a restart); t_end: where the run stops,
  // or at the latest (stops_early: the run may end before, e.g. once a slab has activated).
  // tty: redraw in place (isatty of the stream); quiet: print nothing.
  Progress(double t0, double t_end, std::FILE* out, bool tty, bool quiet, bool stops_early = false);
  // Called after every step; draws at most every 0.2 s (tty) or 10 s / 10 % (log). Once,
  // after a second of steady stepping, prints the expected wall time. warming: the engine
  // is still starting up (compiling, tuning), so this step's time is not its speed.
  void update(double t_ms, bool warming = false);
  // Ends the bar with a newline and prints the totals.
  void finish(double t_ms);
  // Clears the bar's line so another message can be printed cleanly (tty only).
  void interrupt();

  // "expected wall time: about 1:35 (…)" from the rate measured so far.
  static std::string estimate(const run::StepRate& rate, bool stops_early);

  // "1:02:03" / "2:03" / "45 s".
  static std::string format_duration(double seconds);
  // The bar text for a given state (tests see exactly what is drawn).
  static std::string line(double t0, double t_end, double t_ms, const run::StepRate& rate, bool bar);

 private:
  double elapsed() const;
  double t0_, t_end_;
  std::FILE* out_;
  bool tty_, quiet_, stops_early_;
  run::StepRate rate_;
  std::chrono::steady_clock::time_point start_;
  double last_draw_ = -1e9;
  double last_frac_ = -1;
  bool drawn_ = false;
  bool estimated_ = false;
};

}  // namespace hw::cli
