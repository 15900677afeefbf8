// Per-beat biomarkers of an action potential, computed while the trace streams past.
//
// Why streaming: populations of 10^6 cells cannot keep every cell's trace, so a
// BeatTracker holds O(1) numbers per cell and sees each sample once. Single cells use the
// same tracker, so both report identical numbers for identical samples.
//
// Definitions (times in ms, V in mV; a beat runs from one stimulus onset to the next):
//   v_rest      V at the beat's first sample (just before its stimulus switches on)
//   v_peak      the beat's maximum V
//   dvdt_max    the largest (V[k+1]-V[k])/(t[k+1]-t[k]) over the beat
//   activation  the midpoint of that largest upstroke interval
//   APDx        first downward crossing, after the peak, of V_peak - x/100·(V_peak - v_rest)
//               (linear interpolation between samples) minus the activation time;
//               NaN when V does not get there within the beat
//   calcium     when a calcium state is given: amplitude = Ca_peak - Ca at the beat's start,
//               CaTD90 = first downward crossing after the Ca peak of
//               Ca_peak - 0.9·amplitude, minus the (voltage) activation time
#pragma once

#include <cmath>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

#include "kernels/beat_k.hpp"

namespace hw::cell {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct BeatBiomarkers {
  int beat = 0;             // 1-based
  double t_start = kNaN;    // ms, the beat's stimulus onset
  double t_activation = kNaN;
  double apd30 = kNaN, apd50 = kNaN, apd90 = kNaN;
  double dvdt_max = kNaN;   // mV/ms
  double v_peak = kNaN, v_rest = kNaN;
  double cat_amplitude = kNaN;  // in the model's calcium units
  double catd90 = kNaN;         // ms
};

// The update itself is kernels/beat_k.hpp, which the GPU population kernel runs too.
class BeatTracker {
 public:
  BeatTracker() = default;
  // Resumes from a state kept elsewhere (a GPU population's tracker, read back).
  explicit BeatTracker(const kernels::BeatState& s) : s_(s) {}
  // Starts a beat at its stimulus onset; ca is NaN when the model has no calcium role.
  void begin(int beat, double t, double v, double ca = kNaN) {
    kernels::beat_begin(s_, beat, t, v, ca);
  }
  // Feeds the next sample (t strictly increasing).
  void sample(double t, double v, double ca = kNaN) { kernels::beat_sample(s_, t, v, ca); }
  // The finished beat's biomarkers.
  BeatBiomarkers finish() const;
  bool active() const { return s_.active != 0; }
  const kernels::BeatState& state() const { return s_; }

 private:
  kernels::BeatState s_{};
};

// Rows of the table the CLI prints for people.
std::string format_beats_table(const std::vector<BeatBiomarkers>& beats, bool with_calcium);

// CSV header and row used by populations ("apd90,apd50,...").
std::string biomarker_csv_header();
std::string biomarker_csv_row(const BeatBiomarkers& b);

}  // namespace hw::cell
