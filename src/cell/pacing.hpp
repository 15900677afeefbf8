// Periodic pacing and S1-S2 protocols: stimulus trains on a grid of steps.
//
// Why: the model rewrite (model/passes/pacing.hpp) leaves a parameter _hw_stim_on that the
// driver sets to 1 or 0 before each step: the stimulus is on for step n (from t_n = n·dt to
// t_n + dt) iff  on_k <= n < on_k + w  for some onset k, with on_k = round(onset_k/dt) and
// w = max(1, round(duration/dt)). So stimulus edges fall on step boundaries and every
// integrator, float or double, sees the same pulses. CVODE stops and restarts exactly at
// those same edges.
#pragma once

#include <vector>

#include "model/passes/pacing.hpp"

namespace hw::cell {

// Stimulus onsets in ms and the run's end.
struct StimulusTrain {
  std::vector<double> onsets_ms;  // ascending
  double duration_ms = 1.0;
  double end_ms = 0.0;

  // `beats` pulses every bcl_ms from start_ms; the run ends at start_ms + beats·bcl_ms.
  static StimulusTrain periodic(double bcl_ms, int beats, double duration_ms,
                                double start_ms = 0.0);
};

// The train on a grid of steps (see the file comment for the rule).
class StepSchedule {
 public:
  StepSchedule(const StimulusTrain& train, double dt_ms);
  long total_steps() const { return total_; }
  long width() const { return width_; }
  const std::vector<long>& onset_steps() const { return onsets_; }
  bool on(long step) const;
  // Steps at which the on/off state changes, plus 0 and total_steps, ascending.
  std::vector<long> edges() const;

 private:
  std::vector<long> onsets_;
  long width_ = 1;
  long total_ = 0;
};

// S1-S2 restitution: n_s1 pulses at bcl_ms, then one S2 at each coupling interval after
// the last S1. For each interval, the row holds the APD90 of the last S1 beat, the
// diastolic interval DI = CI - APD90(S1), and the APD90 of the S2 beat.
// One S1-S2 coupling interval: DI = CI − APD90(S1) (negative when S2 came before S1
// repolarised); APD90(S1) of the last S1 beat over its whole BCL, the same in every row;
// APD90(S2) NaN unless S2 captured (made a full action potential, restitution.hpp).
struct RestitutionPoint {
  double coupling_ms = 0, di_ms = 0, apd90_s1 = 0, apd90_s2 = 0;
  bool captured = false;
};

}  // namespace hw::cell
