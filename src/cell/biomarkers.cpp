// See biomarkers.hpp for the definitions.
#include "cell/biomarkers.hpp"

#include <fmt/format.h>

namespace hw::cell {

namespace {
constexpr double kApdLevels[3] = {0.30, 0.50, 0.90};

// Time at which the segment (t0, v0)–(t1, v1) crosses `level`.
double interpolate(double t0, double v0, double t1, double v1, double level) {
  if (v1 == v0) return t1;
  return t0 + (level - v0) / (v1 - v0) * (t1 - t0);
}

std::string num(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string("-");
}
std::string csv_num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "nan"; }
}  // namespace

void BeatTracker::begin(int beat, double t, double v, double ca) {
  active_ = true;
  beat_ = beat;
  t0_ = t_prev_ = t_peak_ = t;
  v_prev_ = v_rest_ = v_peak_ = v;
  dvdt_max_ = -std::numeric_limits<double>::infinity();
  t_act_ = kNaN;
  for (double& c : cross_) c = kNaN;
  has_ca_ = std::isfinite(ca);
  ca_prev_ = ca_rest_ = ca_peak_ = ca;
  ca_cross_ = kNaN;
}

void BeatTracker::sample(double t, double v, double ca) {
  if (!active_ || !(t > t_prev_)) return;
  const double dvdt = (v - v_prev_) / (t - t_prev_);
  if (dvdt > dvdt_max_) {
    dvdt_max_ = dvdt;
    t_act_ = 0.5 * (t + t_prev_);
  }
  if (v > v_peak_) {
    // A new peak invalidates crossings measured against the old one.
    v_peak_ = v;
    t_peak_ = t;
    for (double& c : cross_) c = kNaN;
  } else {
    for (int k = 0; k < 3; ++k) {
      if (!std::isnan(cross_[k])) continue;
      const double level = v_peak_ - kApdLevels[k] * (v_peak_ - v_rest_);
      if (v_prev_ >= level && v < level) cross_[k] = interpolate(t_prev_, v_prev_, t, v, level);
    }
  }
  if (has_ca_) {
    if (ca > ca_peak_) {
      ca_peak_ = ca;
      ca_cross_ = kNaN;
    } else if (std::isnan(ca_cross_)) {
      const double level = ca_peak_ - 0.9 * (ca_peak_ - ca_rest_);
      if (ca_prev_ >= level && ca < level)
        ca_cross_ = interpolate(t_prev_, ca_prev_, t, ca, level);
    }
    ca_prev_ = ca;
  }
  t_prev_ = t;
  v_prev_ = v;
}

BeatBiomarkers BeatTracker::finish() const {
  BeatBiomarkers b;
  if (!active_) return b;
  b.beat = beat_;
  b.t_start = t0_;
  b.v_rest = v_rest_;
  b.v_peak = v_peak_;
  if (std::isfinite(dvdt_max_)) b.dvdt_max = dvdt_max_;
  b.t_activation = t_act_;
  // A repolarisation crossing before the steepest upstroke belongs to no action potential
  // of this beat (e.g. a self-oscillating cell whose upstroke falls late in the window).
  auto duration = [this](double cross) { return cross > t_act_ ? cross - t_act_ : kNaN; };
  b.apd30 = duration(cross_[0]);
  b.apd50 = duration(cross_[1]);
  b.apd90 = duration(cross_[2]);
  if (has_ca_) {
    b.cat_amplitude = ca_peak_ - ca_rest_;
    b.catd90 = duration(ca_cross_);
  }
  return b;
}

std::string format_beats_table(const std::vector<BeatBiomarkers>& beats, bool with_calcium) {
  std::string out = fmt::format("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9}", "beat",
                                "APD90", "APD50", "APD30", "dV/dt max", "V peak", "V rest");
  if (with_calcium) out += fmt::format(" {:>11} {:>9}", "CaT ampl", "CaTD90");
  out += "\n";
  out += fmt::format("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9}", "", "ms", "ms", "ms",
                     "mV/ms", "mV", "mV");
  if (with_calcium) out += fmt::format(" {:>11} {:>9}", "(model)", "ms");
  out += "\n";
  for (const auto& b : beats) {
    out += fmt::format("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9}", b.beat, num(b.apd90, 2),
                       num(b.apd50, 2), num(b.apd30, 2), num(b.dvdt_max, 2),
                       num(b.v_peak, 2), num(b.v_rest, 2));
    if (with_calcium)
      out += fmt::format(" {:>11} {:>9}", num(b.cat_amplitude, 6), num(b.catd90, 2));
    out += "\n";
  }
  return out;
}

std::string biomarker_csv_header() {
  return "apd90,apd50,apd30,dvdt_max,v_peak,v_rest,cat_amplitude,catd90";
}

std::string biomarker_csv_row(const BeatBiomarkers& b) {
  return fmt::format("{},{},{},{},{},{},{},{}", csv_num(b.apd90), csv_num(b.apd50),
                     csv_num(b.apd30), csv_num(b.dvdt_max), csv_num(b.v_peak),
                     csv_num(b.v_rest), csv_num(b.cat_amplitude), csv_num(b.catd90));
}

}  // namespace hw::cell
