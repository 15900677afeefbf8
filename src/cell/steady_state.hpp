// Steady state of a paced cell: the beat-to-beat change of its state, and the test that
// stops a run (`heartwave cell --until-steady TOL`) once that change is small.
//
// Definition: the states are compared at the same phase of consecutive beats, at each
// stimulus onset (the end of one beat is the start of the next), with the change
//     Δ_n = max over states i of |y_i(n) − y_i(n−1)| / max(|y_i(n)|, |y_i(n−1)|)
// (0 for a state that is 0 both times). Beat n's change compares its end with its start, so
// beat 1's compares with the initial state. A run is steady at the first beat with Δ_n < TOL.
//
// Why the states and why relative: the slow part of reaching a steady state is the drift of
// the ionic concentrations (Na_i, K_i, the SR's Ca), which the APD90 hides — APD90 can
// agree to 0.01 ms between beats while Na_i still moves by 0.1 % per beat (TT06 at BCL
// 1000 ms). Criteria in use compare the state vector at the same phase of consecutive paces
// (Chaste's SteadyStateRunner; Myokit's pre-pacing checks); the relative form makes one TOL
// mean the same for V (mV), gates (0…1) and concentrations (mM or µM), whatever the model's
// units. The APD90 change of the last beats is reported beside it.
#pragma once

#include <vector>

namespace hw::cell {

// Δ between two state vectors of equal size (see the file comment).
double relative_state_change(const std::vector<double>& before, const std::vector<double>& after);

// Feeds the state at each stimulus onset and at the run's end; keeps Δ per beat and the
// first beat that was steady.
class SteadyStateTest {
 public:
  // tolerance <= 0: no beat counts as steady (the changes are still kept).
  explicit SteadyStateTest(double tolerance = 0) : tolerance_(tolerance) {}
  // The state at a beat boundary; returns true when the beat that just ended is the
  // first steady one (the run may stop there).
  bool boundary(const double* y, std::size_t n_states);
  const std::vector<double>& changes() const { return changes_; }  // Δ of beats 1, 2, ...
  int steady_beat() const { return steady_beat_; }                  // 0: not steady

 private:
  double tolerance_;
  std::vector<double> last_;
  bool have_last_ = false;
  std::vector<double> changes_;
  int steady_beat_ = 0;
};

}  // namespace hw::cell
