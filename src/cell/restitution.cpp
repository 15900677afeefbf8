// See restitution.hpp.
#include "cell/restitution.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace hw::cell {

std::vector<RestitutionPoint> run_s1s2(const CellKernel& k, const CellSetup& setup,
                                       const RestitutionOptions& o,
                                       const SolverOptions& solver, std::vector<double>* end_state) {
  if (o.n_s1 < 1) throw InputError(SourceLoc{}, "--n-s1 must be at least 1");
  if (o.coupling_ms.empty()) throw InputError(SourceLoc{}, "no S1-S2 coupling intervals given");
  TraceOptions no_trace;
  no_trace.record = false;
  if (!(o.start_ms >= 0)) throw InputError(SourceLoc{}, fmt::format("--stim-start must be >= 0, got {}", o.start_ms));
  CellSetup s = setup;
  if (o.n_s1 > 1 || o.start_ms > 0) {
    // The rest before the first S1, then every S1 but the last.
    StimulusTrain pre = StimulusTrain::periodic(o.s1_bcl_ms, 1, o.duration_ms, o.start_ms);
    pre.onsets_ms.clear();
    for (int b = 0; b + 1 < o.n_s1; ++b) pre.onsets_ms.push_back(o.start_ms + b * o.s1_bcl_ms);
    pre.end_ms = o.start_ms + (o.n_s1 - 1) * o.s1_bcl_ms;
    const SingleCellResult r = run_single_cell(k, setup, pre, solver, no_trace, {}, o.stop);
    if (r.stopped) return {};
    s.initial_states = r.final_states;
  }
  // The last S1 beat alone over its BCL: APD90(S1) and its amplitude, once.
  const StimulusTrain last = StimulusTrain::periodic(o.s1_bcl_ms, 1, o.duration_ms);
  const SingleCellResult s1_run = run_single_cell(k, s, last, solver, no_trace);
  if (end_state) *end_state = s1_run.final_states;
  const BeatBiomarkers s1 = s1_run.beats.at(0);
  const double s1_amplitude = s1.v_peak - s1.v_rest;
  std::vector<RestitutionPoint> out;
  for (double ci : o.coupling_ms) {
    if (o.stop && o.stop()) break;
    if (!(ci > o.duration_ms))
      throw InputError(SourceLoc{}, fmt::format("coupling interval {} ms must exceed the "
                                                "stimulus duration", ci));
    StimulusTrain t;
    t.onsets_ms = {0.0, ci};
    t.duration_ms = o.duration_ms;
    t.end_ms = ci + o.s1_bcl_ms;
    const BeatBiomarkers s2 = run_single_cell(k, s, t, solver, no_trace).beats.at(1);
    RestitutionPoint p;
    p.coupling_ms = ci;
    p.apd90_s1 = s1.apd90;
    p.di_ms = ci - s1.apd90;
    p.captured = std::isfinite(s2.apd90) && s2.v_peak - s2.v_rest >= 0.8 * s1_amplitude;
    p.apd90_s2 = p.captured ? s2.apd90 : std::numeric_limits<double>::quiet_NaN();
    out.push_back(p);
  }
  return out;
}

std::vector<DynamicPoint> run_dynamic(const CellKernel& k, const CellSetup& setup, const DynamicOptions& o,
                                      const SolverOptions& solver, std::vector<double>* end_state) {
  if (o.beats < 2) throw InputError(SourceLoc{}, "the dynamic protocol needs at least 2 beats per cycle length");
  if (o.bcl_ms.empty()) throw InputError(SourceLoc{}, "no cycle lengths given");
  TraceOptions no_trace;
  no_trace.record = false;
  CellSetup s = setup;
  double reference = std::numeric_limits<double>::quiet_NaN();  // the first BCL's last upstroke
  std::vector<DynamicPoint> out;
  for (double bcl : o.bcl_ms) {
    if (o.stop && o.stop()) break;
    if (!(bcl > o.duration_ms))
      throw InputError(SourceLoc{}, fmt::format("cycle length {} ms must exceed the stimulus duration", bcl));
    const double start = out.empty() ? o.start_ms : 0.0;  // the rest comes once, before the first
    const SingleCellResult r =
        run_single_cell(k, s, StimulusTrain::periodic(bcl, o.beats, o.duration_ms, start), solver, no_trace, {}, o.stop);
    if (r.stopped) break;  // this cycle length's beats unfinished: no row
    s.initial_states = r.final_states;
    const BeatBiomarkers& last = r.beats.back();
    const BeatBiomarkers& before = r.beats.at(r.beats.size() - 2);
    if (std::isnan(reference)) reference = last.v_peak - last.v_rest;
    auto full = [&](const BeatBiomarkers& b) { return std::isfinite(b.apd90) && b.v_peak - b.v_rest >= 0.8 * reference; };
    DynamicPoint p;
    p.bcl_ms = bcl;
    p.captured = full(last) && full(before);
    p.apd90 = p.captured ? last.apd90 : std::numeric_limits<double>::quiet_NaN();
    p.di_ms = bcl - p.apd90;
    out.push_back(p);
  }
  if (end_state) *end_state = s.initial_states;
  return out;
}

}  // namespace hw::cell
