// An expected wall time for a tissue run, measured rather than guessed: each model of the
// case is stepped for a fraction of a second on a small box of the case's spacing, dt,
// scheme, precision and backend, and the measured cost per cell-step is scaled to the
// case's cells and steps.
//
// Why measured: the cost of a cell-step spans three orders of magnitude between Karma
// and O'Hara-Rudy, and between one core and a GPU; a table of constants would be wrong on
// every machine but one. What it leaves out is said with the number: outputs (field files,
// pictures), how the case's own stencil and size use a GPU (the small box is only a rough
// guide there: examples/rabbit_layers.toml on an H200 estimated 0.7 s, stepped 2.0 s), and
// other load on the machine.
#pragma once

#include <string>
#include <vector>

#include "tissue/reaction.hpp"

namespace hw::run {

struct WallTimeEstimate {
  double seconds = 0;               // the whole run, t = 0 to t_end
  std::vector<std::string> basis;   // how: one line per model measured
};

// For a resolved set-up s (its parts made) on `backend`: InputError/Error from the
// calibration pass through (a model that cannot be stepped).
WallTimeEstimate estimate_wall_time(const tissue::SimSetup& s, tissue::Backend backend, int threads, int device,
                                    double seconds_per_model);

}  // namespace hw::run
