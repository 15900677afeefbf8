// Lookup tables of functions of V (model/passes/tabulate.hpp): what the pass finds, the
// error it measures against an independent check, and what the printers make of it.
//
// The end-to-end bounds on every shared model and the stiff set are in
// test_tables_bounds.cpp; the GPU kernels' in tests/gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/load.hpp"
#include "model/passes/eval.hpp"
#include "model/passes/specialise.hpp"
#include "model/passes/tabulate.hpp"
#include "test_tissue_util.hpp"
#include "tissue/simulation.hpp"
#include "verify_support.hpp"

namespace {

using namespace hw::model;

LoadedModel load(const std::string& name) { return load_model(name, LoadOptions{}); }

// Linear interpolation in a group, written here from the Tabulation's numbers alone.
double look_up(const Tabulation& t, const TabulatedFunction& f, double v) {
  const TableGroup& g = t.groups[std::size_t(f.group)];
  const double x = (v - g.lo) / g.step;
  const int i = std::min(static_cast<int>(std::floor(x)), g.rows - 2);
  const std::size_t w = g.functions.size();
  const double a = g.values[std::size_t(i) * w + std::size_t(f.column)];
  const double b = g.values[std::size_t(i + 1) * w + std::size_t(f.column)];
  return a + (x - i) * (b - a);
}

TEST(Tables, TenTusscherRatesAreTabulatedWithinTheTolerance) {
  const LoadedModel lm = load("tentusscher_2006_epi");
  const Model& m = lm.analysed;
  const Tabulation t = tabulate_voltage_functions(m);
  ASSERT_FALSE(t.empty()) << t.not_tabulated;
  EXPECT_GE(t.functions.size(), 12u) << t.report();
  // At random voltages (not the pass's own check points), against the exact expression.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> v_of(t.options.v_min_mV / t.v2mV, t.options.v_max_mV / t.v2mV);
  std::vector<double> y(m.states.size(), 0.0), p(m.parameters.size(), 0.0);
  for (const TabulatedFunction& f : t.functions) {
    const Tape exact(m, f.expr);
    const TableGroup& g = t.groups[std::size_t(f.group)];
    std::vector<double> mags;
    for (int r = 0; r < g.rows; ++r) mags.push_back(std::fabs(g.values[std::size_t(r) * g.functions.size() + std::size_t(f.column)]));
    std::sort(mags.begin(), mags.end());
    const double scale = mags[mags.size() / 2];  // the median, as the pass's floor
    double worst = 0;
    for (int k = 0; k < 2000; ++k) {
      const double v = v_of(rng);
      y[t.voltage] = v;
      const double e = exact(0, y.data(), p.data());
      worst = std::max(worst, std::fabs(look_up(t, f, v) - e) / std::max(std::fabs(e), t.options.floor * scale));
    }
    // The pass checks quarter points of every interval; random points may land a little
    // worse than those (the error's maximum in an interval is near, not at, its middle).
    EXPECT_LE(worst, 1.5 * t.options.tolerance) << f.label << " (pass measured " << f.max_error << ")";
  }
  // Every tabulated node is a function of V alone: moving any other state changes nothing.
  for (const TabulatedFunction& f : t.functions) {
    const Tape exact(m, f.expr);
    std::vector<double> y1(m.states.size(), 0.3), y2(m.states.size(), 0.7);
    y1[t.voltage] = y2[t.voltage] = -20;
    EXPECT_EQ(exact(0, y1.data(), p.data()), exact(0, y2.data(), p.data())) << f.label;
  }
}

TEST(Tables, JumpsAreSplitIntoTheirSmoothParts) {
  // TT06's h and j gates switch formula at V = -40 mV: the switch itself is no table's. Their
  // rates read the parameter shift_INa_inact, so only a kernel with it compiled in (the GPU's)
  // sees them as functions of V alone.
  const LoadedModel lm = load("tentusscher_2006_epi");
  std::vector<std::optional<double>> fixed;
  for (const Parameter& p : lm.analysed.parameters) fixed.emplace_back(p.value);
  const Tabulation t = tabulate_voltage_functions(specialise_parameters(lm.analysed, fixed));
  bool split = false;
  for (const std::string& s : t.left_exact) split = split || s.find("jump") != std::string::npos;
  EXPECT_TRUE(split) << t.report();
}

TEST(Tables, DimensionlessModelsHaveNone) {
  const LoadedModel lm = load("aliev_panfilov_1996");
  const Tabulation t = tabulate_voltage_functions(lm.analysed);
  EXPECT_TRUE(t.empty());
  EXPECT_NE(t.not_tabulated.find("dimensionless"), std::string::npos) << t.not_tabulated;
}

TEST(Tables, PrintersLookUpInsteadOfComputing) {
  const LoadedModel lm = load("tentusscher_2006_epi");
  const Model sm = specialise_parameters(lm.analysed, std::vector<std::optional<double>>(lm.analysed.parameters.size()));
  const Tabulation t = tabulate_voltage_functions(sm);
  ASSERT_FALSE(t.empty());
  CppOptions co;
  const std::string exact = print_cpp(sm, co);
  co.tables = &t;
  const std::string tabled = print_cpp(sm, co);
  EXPECT_NE(tabled.find("template <class T> alignas(64) constexpr T hw_lut0["), std::string::npos);
  EXPECT_NE(tabled.find("lut_w0"), std::string::npos);
  EXPECT_EQ(exact.find("hw_lut0"), std::string::npos);
  const auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_LT(count(tabled, "std::exp("), count(exact, "std::exp(")) << "tables replace exponentials of V";
  CudaOptions cu;
  cu.tables = &t;
  const std::string cuda = print_cuda(sm, cu);
  EXPECT_NE(cuda.find("__device__ const float hw_model_lut0["), std::string::npos);
  EXPECT_NE(cuda.find("__ldg(hw_model_lut0 + lut_b0"), std::string::npos);
}

TEST(Tables, TissueWithinOneDtAndHalfAPercentOfCv) {
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(hw::tissue::Backend::cpu, "cpu", {.tables = true});
}

// cell_maths "fast": the CUDA printer's float kernel calls the intrinsics and its double kernel
// does not; the C++ printer calls its float emulation, named for the kernel's Real.
TEST(FastMaths, PrintersEmitTheIntrinsicsInFloatOnly) {
  const LoadedModel lm = load("tentusscher_2006_epi");
  CppOptions co;
  co.fast_intrinsics = true;
  const std::string cpp = print_cpp(lm.analysed, co);
  EXPECT_NE(cpp.find("hw_fast_exp<Real>("), std::string::npos);
  EXPECT_NE(cpp.find("hw_fast_div<Real>("), std::string::npos);
  EXPECT_NE(cpp.find("std::exp2(x * 1.44269504f)"), std::string::npos) << "the emulation of __expf";
  EXPECT_EQ(print_cpp(lm.analysed).find("hw_fast_"), std::string::npos);
  CudaOptions cu;
  cu.fast_intrinsics = true;
  const std::string f32 = print_cuda(lm.analysed, cu);
  EXPECT_NE(f32.find("__expf("), std::string::npos);
  EXPECT_NE(f32.find("__fdividef("), std::string::npos);
  EXPECT_NE(f32.find("__logf("), std::string::npos);  // the reversal potentials
  cu.use_float = false;
  const std::string f64 = print_cuda(lm.analysed, cu);
  EXPECT_EQ(f64.find("__expf("), std::string::npos);
  EXPECT_EQ(f64.find("__fdividef("), std::string::npos);
}

// The fast intrinsics as the C++ printer evaluates them (cpp_printer.cpp, kFastMath), alone
// and with the tables.
TEST(FastMaths, TissueWithinOneDtAndHalfAPercentOfCv) {
  using hw::tissue::Backend;
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(Backend::cpu, "cpu", {.fast = true});
  hw::tissue::testing::expect_cell_maths_within_bounds_in_tissue(Backend::cpu, "cpu", {.tables = true, .fast = true});
}

TEST(Tables, VoltageOutsideTheTablesStopsTheRunAndSaysWhy) {
  using namespace hw::tissue;
  TissueCase c = hw::tissue::testing::sheet(6, 4, 1, 0.25, "tentusscher_2006_epi");
  c.time.cell_maths.tables = true;
  c.initial.push_back(hw::tissue::testing::box_initial({0, 0, 0}, {0.5, 0.5, 0.25}, "V", 180));  // beyond 100 mV
  SimulationOptions o;
  o.backend = Backend::cpu;
  Simulation sim(c, o);
  try {
    sim.step();
    FAIL() << "a V of 180 mV has no table value";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("cell_maths"), std::string::npos) << e.what();
    EXPECT_EQ(e.cell[0], 0) << e.what();
  }
  c.time.cell_maths.tables = false;  // the exact maths steps it
  Simulation exact(c, o);
  EXPECT_NO_THROW(exact.step());
}

}  // namespace
