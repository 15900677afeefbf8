// What the cell-maths bounds tests share (test_tables_bounds.cpp, test_fast_maths_bounds.cpp;
// the stiff set loads its models here too): a model loaded for paced beats, and one beat with GRL2 at dt 0.01 ms: V sampled for
// RRMS (verify_support.hpp) and the last beat's APD90.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cell/single_cell.hpp"
#include "model/load.hpp"
#include "verify_support.hpp"

namespace hw::verify {

struct Beat {
  Trace trace;
  double apd90 = NAN;
  bool finite = true;  // every sample of V
};

inline Beat one_beat(const hw::cell::CellKernel& k, const hw::cell::CellSetup& s, const hw::cell::StimulusTrain& train,
                     bool f32) {
  hw::cell::SolverOptions solver;
  solver.method = hw::cell::Integrator::grl2;
  solver.dt_ms = 0.01;
  solver.single_precision = f32;
  hw::cell::TraceOptions t;
  t.interval_ms = kGridMs;
  const auto res = hw::cell::run_single_cell(k, s, train, solver, t);
  Beat b;
  for (std::size_t row = 0; row < res.trace.rows(); ++row) {
    b.trace.t.push_back(res.trace.at(row, 0));
    b.trace.v.push_back(res.trace.at(row, 1));
    b.finite = b.finite && std::isfinite(b.trace.v.back());
  }
  if (!res.beats.empty()) b.apd90 = res.beats.back().apd90;
  return b;
}

// A model of stiff_set_files() loaded for `beats` paced beats at BCL 1000 ms: FitzHugh-Nagumo's
// stimulus named (verify_support.hpp), Noble 1962 unpaced (it oscillates by itself).
struct BeatCase {
  hw::model::LoadedModel lm;
  hw::cell::CellSetup setup;
  hw::cell::StimulusTrain train;
};
inline BeatCase load_for_beats(const fs::path& file, int beats) {
  const std::string model = file.stem().string();
  hw::model::LoadOptions lo;
  if (model == "fitzhugh_nagumo_1961") lo.roles.stimulus_current = "I";
  BeatCase c{hw::model::load_model(file.string(), lo), {}, {}};
  c.setup = hw::cell::make_cell_setup(c.lm.analysed, c.lm.stimulus);
  if (model == "noble_1962") c.setup.set_stimulus_magnitude(0);
  c.train = hw::cell::StimulusTrain::periodic(kBclMs, beats, c.lm.stimulus.default_duration_ms.value_or(1.0));
  return c;
}
inline BeatCase load_for_one_beat(const fs::path& file) { return load_for_beats(file, 1); }

}  // namespace hw::verify
