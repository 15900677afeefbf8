// The GPU population's launches and per-cell body (kernels/population_k.hpp) run on the host
// with a cpu kernel standing in for the printed CUDA model, against run_population: the
// same biomarkers to the bit. This checks, without a GPU, everything of the GPU path but
// the printed model and the launch mechanics: the launch plan, the stimulus switch, the
// model times, the tracker on the "device" and reading it back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cell/population_gpu.hpp"
#include "cell_test_models.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"

using namespace hw::cell;

namespace {

// A cpu kernel as population_cell's M: sizes fixed at compile time (NS, NP), the rest set
// per run. Its step computes the constants itself, as CellKernel::step does per call.
template <class Real, int NS, int NP>
struct HostModel {
  static constexpr int ns = NS, np = NP, nc = 1;
  inline static int kv = 0, kc = -1, kon = -1;
  inline static const CellKernel* kernel = nullptr;
  inline static Integrator method = Integrator::rl2;
  static constexpr int slot(int q) { return q; }  // every parameter has its row
  static void constants(const Real*, Real*) {}
  static void step(Real t, Real dt, Real* y, const Real* p, const Real*) {
    Batch<Real> b;
    b.n = 1;
    b.stride = 1;
    b.y = y;
    b.p = p;
    b.per_cell_params = true;
    kernel->step(method, t, dt, 1, b);
  }
};

// The GPU driver's loop (cell/population_gpu.cpp, run_typed) with the launches run on the host.
template <class Real, int NS, int NP>
std::vector<BeatBiomarkers> emulate(const CellKernel& k, const CellSetup& s,
                                    const PopulationDesign& d, const StimulusTrain& train,
                                    const SolverOptions& solver, long max_steps) {
  using M = HostModel<Real, NS, NP>;
  EXPECT_EQ(static_cast<int>(s.initial_states.size()), NS);
  EXPECT_EQ(static_cast<int>(s.params.size()), NP);
  M::kernel = &k;
  M::method = solver.method;
  M::kv = s.voltage;
  M::kc = s.calcium;
  M::kon = s.stim_on;
  std::vector<Real> y, p;
  population_arrays(s, d, y, p);
  const std::size_t n = d.cells();
  std::vector<hw::kernels::BeatState> tracks(n);
  std::memset(tracks.data(), 0, n * sizeof(hw::kernels::BeatState));
  hw::kernels::PopulationArgs<Real> a{};
  a.n = n;
  a.y = y.data();
  a.p = p.data();
  a.track = tracks.data();
  a.dt_model = solver.dt_ms / s.time_to_ms;
  a.dt_ms = solver.dt_ms;
  a.to_mv = s.voltage_to_mV;
  for (const auto& l : population_launches(train, solver.dt_ms, max_steps)) {
    a.l = l;
    for (std::size_t c = 0; c < n; ++c) hw::kernels::population_cell<Real, M>(a, c);
  }
  std::vector<BeatBiomarkers> out;
  for (const auto& t : tracks) out.push_back(BeatTracker(t).finish());
  return out;
}

// Equality of every biomarker (NaN equal to NaN): bitwise for rel = 0, else to rel.
void expect_same(const std::vector<BeatBiomarkers>& a, const std::vector<BeatBiomarkers>& b,
                 double rel = 0) {
  ASSERT_EQ(a.size(), b.size());
  auto same = [rel](double x, double y) {
    if (std::memcmp(&x, &y, sizeof x) == 0) return true;
    return rel > 0 && std::fabs(x - y) <= rel * std::max(std::fabs(x), std::fabs(y));
  };
  for (std::size_t c = 0; c < a.size(); ++c) {
    SCOPED_TRACE("cell " + std::to_string(c));
    EXPECT_EQ(a[c].beat, b[c].beat);
    for (auto f : {&BeatBiomarkers::t_start, &BeatBiomarkers::t_activation, &BeatBiomarkers::apd30,
                   &BeatBiomarkers::apd50, &BeatBiomarkers::apd90, &BeatBiomarkers::dvdt_max,
                   &BeatBiomarkers::v_peak, &BeatBiomarkers::v_rest,
                   &BeatBiomarkers::cat_amplitude, &BeatBiomarkers::catd90})
      EXPECT_TRUE(same(a[c].*f, b[c].*f)) << a[c].*f << " vs " << b[c].*f;
  }
}

}  // namespace

TEST(PopulationGpuPlan, LaunchesFollowTheCpuSchedule) {
  // 3 beats of 100 ms, 2 ms pulses, dt 0.5: 600 steps, pulses at 0, 200, 400 (4 steps wide).
  const auto train = StimulusTrain::periodic(100, 3, 2.0);
  const auto ls = population_launches(train, 0.5, 150);
  long next = 0;
  int begins = 0;
  for (const auto& l : ls) {
    EXPECT_EQ(l.first, next);  // contiguous, in order
    next = l.first + l.steps;
    EXPECT_LE(l.steps, 150);
    EXPECT_EQ(l.track, l.first >= 400 ? 1 : 0);
    EXPECT_EQ(l.stim_on, (l.first % 200) < 4 ? 1 : 0);
    EXPECT_EQ(l.beat, 3);
    begins += l.begin;
    if (l.begin) EXPECT_EQ(l.first, 400);
    // A piece of a longer cpu call keeps that call's start for its model times.
    EXPECT_TRUE(l.interval == l.first || (l.first - l.interval) % 150 == 0);
  }
  EXPECT_EQ(next, 600);
  EXPECT_EQ(begins, 1);
  // Off-interval 4..200 in pieces of 150: 4..154 and 154..200, both from edge 4.
  EXPECT_EQ(ls[1].first, 4);
  EXPECT_EQ(ls[2].first, 154);
  EXPECT_EQ(ls[2].interval, 4);
}

TEST(PopulationGpuPlan, HostRunOfTheDeviceBodyMatchesRunPopulation) {
  const ConceptKernel<cell_models::MitchellSchaeffer> k(cell_models::MitchellSchaeffer{});
  const auto setup = cell_models::ms_setup();
  const auto design = random_design({parse_range("tau_close=0.5:1.5", false),
                                     parse_range("tau_in=0.8:1.2", false)}, 16, 3, true);
  const auto train = StimulusTrain::periodic(400, 3, 1.0);
  PopulationOptions opt;
  opt.solver.dt_ms = 0.05;
  opt.threads = 2;
  // One cell per call, as the host run steps them (calls of many cells may be vectorised).
  opt.chunk = 1;
  for (Integrator m : {Integrator::fe, Integrator::rk2, Integrator::rk4, Integrator::rl1,
                       Integrator::rl2, Integrator::sbe}) {
    opt.solver.method = m;
    SCOPED_TRACE(integrator_name(m));
    for (bool f32 : {false, true}) {
      SCOPED_TRACE(f32 ? "float" : "double");
      opt.solver.single_precision = f32;
      const auto cpu = run_population(k, setup, design, train, opt);
      // rl1 and rl2: GCC contracts multiply-adds into FMAs (its default for C++) and does
      // so differently in the cpu's code for a call of many steps and for a call of one
      // step, which the host run makes: last-bit differences, which a wrong time, stimulus
      // or tracker would exceed by orders of magnitude.
      const bool expm1 = m == Integrator::rl1 || m == Integrator::rl2;
      expect_same(f32 ? emulate<float, 2, 7>(k, setup, design, train, opt.solver, 1234)
                      : emulate<double, 2, 7>(k, setup, design, train, opt.solver, 1234),
                  cpu.last_beat, expm1 ? (f32 ? 1e-5 : 1e-12) : 0.0);
    }
  }
}

// A published model with calcium, through the interpreter (scalar, so a cell's numbers do
// not depend on how many cells a call steps). With the model's own stimulus (no pacing
// switch) the kernel sees the model time, so the launches' times must be the cpu's too.
template <int NS, int NP>
void tentusscher_case(bool model_stimulus, bool f32) {
  SCOPED_TRACE(std::string(model_stimulus ? "model stimulus, " : "paced, ") + (f32 ? "float" : "double"));
  hw::model::LoadOptions lo;
  lo.keep_model_stimulus = model_stimulus;
  const auto lm = hw::model::load_model("tentusscher_2006_epi", lo);
  const auto k = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::interpreter);
  const auto setup = make_cell_setup(lm.analysed, lm.stimulus);
  ASSERT_GE(setup.calcium, 0);
  ASSERT_EQ(setup.stim_on >= 0, !model_stimulus);
  ASSERT_EQ(static_cast<int>(setup.initial_states.size()), NS);
  ASSERT_EQ(static_cast<int>(setup.params.size()), NP) << "update the parameter count";
  const auto design = random_design({parse_range("g_Kr=0.5:1.5", false),
                                     parse_range("g_CaL=0.5:1.5", false)}, 4, 11, true);
  // The model's own protocol paces at 1000 ms from 10 ms; the train only delimits beats.
  const auto train = model_stimulus ? StimulusTrain::periodic(1000, 2, 1.0, 0.0)
                                    : StimulusTrain::periodic(500, 2, lm.stimulus.default_duration_ms.value_or(1.0));
  PopulationOptions opt;
  opt.solver.dt_ms = 0.05;
  opt.solver.method = Integrator::rl2;
  opt.solver.single_precision = f32;
  opt.threads = 2;
  opt.chunk = 1;
  const auto cpu = run_population(*k, setup, design, train, opt);
  const auto host = f32 ? emulate<float, NS, NP>(*k, setup, design, train, opt.solver, 1000)
                        : emulate<double, NS, NP>(*k, setup, design, train, opt.solver, 1000);
  expect_same(host, cpu.last_beat);
  bool apd = false, catd = false;
  for (const auto& b : cpu.last_beat) {
    apd = apd || std::isfinite(b.apd90);
    catd = catd || std::isfinite(b.catd90);
  }
  EXPECT_TRUE(apd && catd) << "the comparison should cover finite APD90 and CaTD90";
}

TEST(PopulationGpuPlan, HostRunMatchesForTenTusscherWithCalcium) {
  tentusscher_case<19, 57>(false, false);
  tentusscher_case<19, 57>(false, true);
  tentusscher_case<19, 56>(true, false);
}
