// `heartwave cell`'s steady-state pieces: the report of --until-steady, the warning when
// the cell does not follow its pacing, and --save-state (library: cell/steady_state.hpp,
// cell/pacing_response.hpp, run/state_file.hpp).
#pragma once

#include <string>

#include "cell/single_cell.hpp"
#include "run/cell_run.hpp"

namespace hw::cli {

// --beats as the cap of --until-steady when --beats is not given.
inline constexpr int kSteadyBeatCap = 1000;

// One line for people: where the run became steady (state and APD90 change of that beat),
// or that it did not within `cap` beats. Empty when tolerance <= 0.
std::string steady_summary(const cell::SingleCellResult& r, double tolerance, int cap);
bool steady_missed(const cell::SingleCellResult& r, double tolerance);

// The upstroke check's warning on stderr, if the cell did not follow the pacing.
void warn_if_not_following(const cell::SingleCellResult& r, double bcl_ms, const std::string& command);

// Writes the state at the run's end (atomically) with its identity and pacing.
void save_cell_state(const std::string& path, const run::PreparedCell& p, const run::CellRunOptions& o,
                     const cell::SingleCellResult& r, double tolerance);

}  // namespace hw::cli
