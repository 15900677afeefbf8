// GPU populations (cell/population_gpu) against the cpu's run_population on the same LHS
// designs of built-in models: every biomarker of every cell, the NaN patterns, float and
// double, batches, and the model's own stimulus (whose times the kernel must get right).
// Every test skips with the reason where there is no usable GPU, and prints "[measured]"
// lines with the largest differences.
//
// Tolerances, per biomarker, |gpu − cpu| <= tol · max(|cpu|, floor), floor 1 (1e-6 for the
// calcium amplitude, in mM):
//   double: 1e-9. GPU and cpu differ only in the last bits of exp/log/pow (CUDA's libdevice
//     against glibc and its vector variants). Two such implementations on the cpu (the
//     compiled kernel, vectorised, against the scalar interpreter) give biomarkers within
//     2e-15 of each other for these designs: a paced cell forgets such perturbations. 1e-9
//     leaves room without hiding a real difference (one step of dt moves an APD by 1e-4).
//   float: 3x the cpu's own float-vs-double difference for the same cells and biomarker
//     (printed), at least 1e-5. Float rounding, amplified in the upstroke, is what separates
//     two float implementations, and float against double measures it: on the cpu it is
//     3e-4 for these ten Tusscher cells and up to 3e-3 (calcium amplitude) for O'Hara-Rudy.
//     GPU and cpu float are two such roundings, hence a factor above 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "cell/population.hpp"
#include "cell/population_gpu.hpp"
#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"

using namespace hw::cell;

namespace {

struct Loaded {
  hw::model::LoadedModel lm;
  std::unique_ptr<CellKernel> kernel;
  CellSetup setup;
  StimulusTrain train;
};

Loaded load(const std::string& name, double bcl, int beats, bool model_stimulus = false) {
  Loaded r;
  hw::model::LoadOptions lo;
  lo.keep_model_stimulus = model_stimulus;
  r.lm = hw::model::load_model(name, lo);
  r.kernel = hw::model::make_kernel(r.lm.analysed, hw::model::KernelChoice::automatic);
  r.setup = make_cell_setup(r.lm.analysed, r.lm.stimulus);
  r.train = StimulusTrain::periodic(bcl, beats, r.lm.stimulus.default_duration_ms.value_or(1.0));
  return r;
}

using Field = double BeatBiomarkers::*;
const std::pair<const char*, Field> kFields[] = {
    {"apd90", &BeatBiomarkers::apd90},       {"apd50", &BeatBiomarkers::apd50},
    {"apd30", &BeatBiomarkers::apd30},       {"dvdt_max", &BeatBiomarkers::dvdt_max},
    {"v_peak", &BeatBiomarkers::v_peak},     {"v_rest", &BeatBiomarkers::v_rest},
    {"cat_amplitude", &BeatBiomarkers::cat_amplitude}, {"catd90", &BeatBiomarkers::catd90}};

// The largest relative difference of each biomarker over the cells whose values are both
// finite, and the number of cells where one is NaN and the other not.
struct Diff {
  double rel = 0, abs = 0;
  std::size_t finite = 0, nan_mismatch = 0;
};
std::map<std::string, Diff> differences(const std::vector<BeatBiomarkers>& a,
                                        const std::vector<BeatBiomarkers>& b) {
  std::map<std::string, Diff> out;
  for (const auto& [name, f] : kFields) {
    const double floor = std::strcmp(name, "cat_amplitude") == 0 ? 1e-6 : 1.0;
    Diff& d = out[name];
    for (std::size_t c = 0; c < a.size() && c < b.size(); ++c) {
      const double x = a[c].*f, y = b[c].*f;
      if (std::isnan(x) != std::isnan(y)) {
        ++d.nan_mismatch;
        continue;
      }
      if (std::isnan(x)) continue;
      ++d.finite;
      d.abs = std::max(d.abs, std::fabs(x - y));
      d.rel = std::max(d.rel, std::fabs(x - y) / std::max(std::fabs(y), floor));
    }
  }
  return out;
}

// Compares every cell's biomarkers, gpu against cpu; tol(name) is the relative tolerance.
template <class Tol>
void compare(const char* what, const std::vector<BeatBiomarkers>& gpu,
             const std::vector<BeatBiomarkers>& cpu, Tol tol) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (const auto& [name, d] : differences(gpu, cpu)) {
    const double t = tol(name);
    std::printf("[measured] %s %s: max rel diff %.3g (abs %.3g, tolerance %.3g) over %zu cells, "
                "%zu NaN mismatches\n",
                what, name.c_str(), d.rel, d.abs, t, d.finite, d.nan_mismatch);
    EXPECT_EQ(d.nan_mismatch, 0u) << what << " " << name;
    EXPECT_LE(d.rel, t) << what << " " << name;
    // The designs are chosen so that (nearly) every cell repolarises within its beat.
    if (name == "apd90") EXPECT_GE(d.finite, cpu.size() * 9 / 10) << what << ": too few finite APD90s";
  }
}

auto fixed(double t) {
  return [t](const std::string&) { return t; };
}

// The float tolerance: 3x the cpu's float-vs-double difference, printed for the record.
auto float_tolerance(const char* what, const std::vector<BeatBiomarkers>& cpu_f,
                     const std::vector<BeatBiomarkers>& cpu_d) {
  auto spread = differences(cpu_f, cpu_d);
  for (const auto& [name, d] : spread)
    std::printf("[measured] %s cpu float vs cpu double %s: max rel diff %.3g, %zu NaN mismatches\n",
                what, name.c_str(), d.rel, d.nan_mismatch);
  return [spread](const std::string& name) { return std::max(3 * spread.at(name).rel, 1e-5); };
}

PopulationResult gpu_run(const Loaded& m, const PopulationDesign& d, const PopulationOptions& o,
                         const char* what) {
  GpuPopulationInfo info;
  auto r = run_population_gpu(m.lm.analysed, m.setup, d, m.train, o, &info);
  std::printf("[measured] %s: %zu cells on %s, kernel %s, %.3f s on the device\n", what, d.cells(),
              info.device.c_str(), info.kernel.c_str(), info.device_ms / 1000);
  return r;
}

}  // namespace

TEST(CudaPopulation, TenTusscherLhsMatchesCpuInDoubleAndFloat) {
  HW_REQUIRE_GPU();
  const Loaded m = load("tentusscher_2006_epi", 1000, 2);
  const auto design = random_design({parse_range("g_Kr=0.7:1.3", false), parse_range("g_Ks=0.7:1.3", false),
                                     parse_range("g_CaL=0.7:1.3", false), parse_range("g_to=0.7:1.3", false)},
                                    10000, 7, true);
  PopulationOptions o;
  o.solver.method = Integrator::rl2;
  o.solver.dt_ms = 0.02;
  const auto cpu_d = run_population(*m.kernel, m.setup, design, m.train, o);
  compare("tt06 double", gpu_run(m, design, o, "tt06 double").last_beat, cpu_d.last_beat, fixed(1e-9));
  o.solver.single_precision = true;
  const auto cpu_f = run_population(*m.kernel, m.setup, design, m.train, o);
  compare("tt06 float", gpu_run(m, design, o, "tt06 float").last_beat, cpu_f.last_beat,
          float_tolerance("tt06", cpu_f.last_beat, cpu_d.last_beat));
}

TEST(CudaPopulation, OharaRudyLhsMatchesCpu) {
  HW_REQUIRE_GPU();
  const Loaded m = load("ohara_rudy_2011_endo", 1000, 2);
  const auto design = random_design({parse_range("GKr_b=0.7:1.3", false), parse_range("GKs_b=0.7:1.3", false),
                                     parse_range("PCa_b=0.7:1.3", false)},
                                    2000, 11, true);
  PopulationOptions o;
  o.solver.method = Integrator::rl2;
  o.solver.dt_ms = 0.01;
  const auto cpu_d = run_population(*m.kernel, m.setup, design, m.train, o);
  compare("ord double", gpu_run(m, design, o, "ord double").last_beat, cpu_d.last_beat, fixed(1e-9));
  o.solver.single_precision = true;
  const auto cpu_f = run_population(*m.kernel, m.setup, design, m.train, o);
  compare("ord float", gpu_run(m, design, o, "ord float").last_beat, cpu_f.last_beat,
          float_tolerance("ord", cpu_f.last_beat, cpu_d.last_beat));
}

// Batches of cells (as when a population exceeds device memory) give the same numbers
// to the bit as one batch: each cell's thread does the same work either way. Small and
// short, so tools/device/gpu-check.sh also runs it under compute-sanitizer.
TEST(CudaPopulation, BatchesChangeNothing) {
  HW_REQUIRE_GPU();
  const Loaded m = load("tentusscher_2006_epi", 300, 2);
  const auto design = random_design({parse_range("g_Kr=0.5:1.5", false)}, 300, 3, true);
  PopulationOptions o;
  o.solver.dt_ms = 0.05;
  const auto whole = run_population_gpu(m.lm.analysed, m.setup, design, m.train, o);
  o.gpu_batch = 128;  // 128, 128 and a partial 44
  const auto parts = run_population_gpu(m.lm.analysed, m.setup, design, m.train, o);
  for (std::size_t c = 0; c < design.cells(); ++c)
    for (const auto& [name, f] : kFields) {
      const double a = whole.last_beat[c].*f, b = parts.last_beat[c].*f;
      EXPECT_TRUE(std::memcmp(&a, &b, sizeof a) == 0) << "cell " << c << " " << name;
    }
  EXPECT_TRUE(std::isfinite(whole.last_beat[0].v_peak));
}

// The population kernel has no NaN policy, so the runner counts the cells whose state went
// non-finite (bench population refuses to report a roof ratio then): forward Euler at
// dt 1 ms blows ten Tusscher up; RL2 at 0.05 ms does not.
TEST(CudaPopulation, NonFiniteCellsAreCounted) {
  HW_REQUIRE_GPU();
  const Loaded m = load("tentusscher_2006_epi", 300, 1);
  const auto design = random_design({parse_range("g_Kr=0.5:1.5", false)}, 200, 3, true);
  PopulationOptions o;
  o.solver.method = Integrator::fe;
  o.solver.dt_ms = 1.0;
  GpuPopulationInfo blown, held;
  run_population_gpu(m.lm.analysed, m.setup, design, m.train, o, &blown);
  o.solver.method = Integrator::rl2;
  o.solver.dt_ms = 0.05;
  run_population_gpu(m.lm.analysed, m.setup, design, m.train, o, &held);
  std::printf("[measured] non-finite cells of 200: forward Euler at dt 1 ms %zu, RL2 at 0.05 ms %zu\n",
              blown.nonfinite, held.nonfinite);
  EXPECT_GT(blown.nonfinite, 0u);
  EXPECT_EQ(held.nonfinite, 0u);
}

// The model's own stimulus depends on the model time, so this checks the times the launches
// give each step (and a model with no pacing switch, kon = -1); rl1 and rk4 for variety.
// Its pulses (from 100 ms, 1 ms every 1000 ms) have edges at 100, 101, 1100 and 1101 ms:
// dt 0.035 ms puts no step time on an edge, so a last-bit difference in a step's time
// (FMA contraction by GCC or NVRTC) cannot switch the stimulus one step early or late.
// This model variant is no built-in: its cpu kernel is compiled at run time (or
// interpreted, where the machine has no C++ compiler), hence fewer cells.
TEST(CudaPopulation, ModelStimulusAndOtherIntegrators) {
  HW_REQUIRE_GPU();
  const Loaded own = load("tentusscher_2006_epi", 1000, 2, true);
  ASSERT_LT(own.setup.stim_on, 0);
  std::printf("[measured] tt06 model stimulus: cpu kernel %s\n", own.kernel->describe().c_str());
  const auto design = random_design({parse_range("g_Kr=0.7:1.3", false)}, 100, 5, true);
  PopulationOptions o;
  o.solver.method = Integrator::rl1;
  o.solver.dt_ms = 0.035;
  compare("tt06 model stimulus rl1", gpu_run(own, design, o, "tt06 model stimulus rl1").last_beat,
          run_population(*own.kernel, own.setup, design, own.train, o).last_beat, fixed(1e-9));
  const Loaded mfhn = load("mfhn", 500, 2);
  const auto d2 = random_design({parse_range("b=0.8:1.2", false)}, 500, 5, true);
  o.solver.method = Integrator::rk4;
  o.solver.dt_ms = 0.02;
  compare("mfhn rk4", gpu_run(mfhn, d2, o, "mfhn rk4").last_beat,
          run_population(*mfhn.kernel, mfhn.setup, d2, mfhn.train, o).last_beat, fixed(1e-9));
}
