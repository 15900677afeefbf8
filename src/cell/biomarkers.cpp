// See biomarkers.hpp for the definitions.
#include "cell/biomarkers.hpp"

#include <fmt/format.h>

namespace hw::cell {

namespace {
std::string num(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string("-");
}
std::string csv_num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "nan"; }
}  // namespace

BeatBiomarkers BeatTracker::finish() const {
  BeatBiomarkers b;
  if (!s_.active) return b;
  b.beat = s_.beat;
  b.t_start = s_.t0;
  b.v_rest = s_.v_rest;
  b.v_peak = s_.v_peak;
  if (std::isfinite(s_.dvdt_max)) b.dvdt_max = s_.dvdt_max;
  b.t_activation = s_.t_act;
  // A repolarisation crossing before the steepest upstroke belongs to no action potential
  // of this beat (e.g. a self-oscillating cell whose upstroke falls late in the window).
  const double t_act = s_.t_act;
  auto duration = [t_act](double cross) { return cross > t_act ? cross - t_act : kNaN; };
  b.apd30 = duration(s_.cross[0]);
  b.apd50 = duration(s_.cross[1]);
  b.apd90 = duration(s_.cross[2]);
  if (s_.has_ca) {
    b.cat_amplitude = s_.ca_peak - s_.ca_rest;
    b.catd90 = duration(s_.ca_cross);
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
