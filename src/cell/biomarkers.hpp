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

class BeatTracker {
 public:
  // Starts a beat at its stimulus onset; ca is NaN when the model has no calcium role.
  void begin(int beat, double t, double v, double ca = kNaN);
  // Feeds the next sample (t strictly increasing).
  void sample(double t, double v, double ca = kNaN);
  // The finished beat's biomarkers.
  BeatBiomarkers finish() const;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  int beat_ = 0;
  double t0_ = 0, t_prev_ = 0, v_prev_ = 0, v_rest_ = 0;
  double v_peak_ = 0, t_peak_ = 0;
  double dvdt_max_ = 0, t_act_ = kNaN;
  double cross_[3] = {kNaN, kNaN, kNaN};  // APD30, 50, 90 crossing times
  bool has_ca_ = false;
  double ca_prev_ = 0, ca_rest_ = 0, ca_peak_ = 0, ca_cross_ = kNaN;
};

// Rows of the table the CLI prints for people.
std::string format_beats_table(const std::vector<BeatBiomarkers>& beats, bool with_calcium);

// CSV header and row used by populations ("apd90,apd50,...").
std::string biomarker_csv_header();
std::string biomarker_csv_row(const BeatBiomarkers& b);

}  // namespace hw::cell
