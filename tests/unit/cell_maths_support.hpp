// What the cell-maths bounds tests share (test_tables_bounds.cpp, test_fast_maths_bounds.cpp):
// the models they run (the stiff set and every shared CellML model) and one paced beat with
// GRL2 at dt 0.01 ms, V sampled for RRMS (verify_support.hpp) and the last beat's APD90.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cell/single_cell.hpp"
#include "verify_support.hpp"

namespace hw::verify {

inline std::vector<std::string> cell_maths_model_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(HW_TEST_DATA_DIR) / "data" / "stiff", ec))
    if (e.path().extension() == ".cellml") files.push_back(e.path().string());
  for (const auto& name : shared_model_names()) files.push_back((shared_models_dir() / (name + ".cellml")).string());
  std::sort(files.begin(), files.end());
  return files;
}

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

// A parameterised test's name from a model file: its stem, every other character '_'.
inline std::string model_test_name(const std::string& file) {
  std::string n = fs::path(file).stem().string();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace hw::verify
