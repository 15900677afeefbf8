// See cell_state.hpp.
#include "cell_state.hpp"

#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "run/state_file.hpp"

namespace hw::cli {

namespace {
// APD90 change over the beat `beat` (1-based) against the one before; NaN when not known.
double apd90_change(const cell::SingleCellResult& r, int beat) {
  if (beat < 2 || beat > int(r.beats.size())) return std::nan("");
  return r.beats[std::size_t(beat - 1)].apd90 - r.beats[std::size_t(beat - 2)].apd90;
}
}  // namespace

bool steady_missed(const cell::SingleCellResult& r, double tolerance) { return tolerance > 0 && r.steady_beat == 0; }

std::string steady_summary(const cell::SingleCellResult& r, double tolerance, int cap) {
  if (!(tolerance > 0)) return "";
  const double last = r.beat_changes.empty() ? std::nan("") : r.beat_changes.back();
  if (r.steady_beat > 0)
    return fmt::format("steady at beat {} (at most {}): state change {:.3g} < {:g}, APD90 change {:.3g} ms",
                       r.steady_beat, cap, last, tolerance, apd90_change(r, r.steady_beat));
  return fmt::format("not steady within {} beats: the last beat's state change is {:.3g} (tolerance {:g}), "
                     "APD90 change {:.3g} ms; raise --beats or the tolerance, or continue with --initial-state "
                     "from a --save-state file",
                     cap, last, tolerance, apd90_change(r, int(r.beats.size())));
}

void warn_if_not_following(const cell::SingleCellResult& r, double bcl_ms, const std::string& command) {
  const std::string w = r.response.warning(bcl_ms);
  if (!w.empty()) std::cerr << command << ": warning: " << w << '\n';
}

void save_cell_state(const std::string& path, const run::PreparedCell& p, const run::CellRunOptions& o,
                     const cell::SingleCellResult& r, double tolerance) {
  cell::SavedState s = run::saved_state(p, o, r.final_states, int(r.beats.size()));
  s.tolerance = tolerance > 0 ? tolerance : 0;
  s.steady_beat = r.steady_beat;
  s.last_change = r.beat_changes.empty() ? std::nan("") : r.beat_changes.back();
  run::write_state_file(path, s);
}

}  // namespace hw::cli
