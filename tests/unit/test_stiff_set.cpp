// The stiff test set (tests/data/stiff, see its SOURCES.md) and every shared CellML model
// at the fixed steps tissue uses: the bar of the stiff-integration issue.
//
// For each model, against CVODE (BDF, rtol 1e-8), 3 beats at BCL 1000 ms with the model's
// own stimulus amplitude and duration: `auto` at dt 0.01 and 0.02 ms, and GRL2 at dt
// 0.01 ms, each with last-beat APD90 within 1 ms and RRMS of V <= 1% over the 3 beats
// (on the 0.5 ms grid of verify_support.hpp); GRL2 and `auto` in float at dt 0.01 ms finish
// with no non-finite value. Each model prints `HW_STIFF` lines (model, states, blocks, the
// scheme `auto` chose, errors) that tools/make_verification_doc.py reads.
//
// Why the library and not the CLI here: one compiled kernel per model (rl2 and grl2, both
// precisions) serves every run; through the CLI each integrator/precision pair would be a
// run-time compile of its own. The CLI's `-i auto` path is the same choose_integrator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "cell/auto_integrator.hpp"
#include "cell/single_cell.hpp"
#include "model/jit/jit.hpp"
#include "model/emit/interpreter.hpp"
#include "model/load.hpp"
#include "test_codegen_support.hpp"
#include "cell_maths_support.hpp"
#include "verify_support.hpp"

namespace {

using namespace hw::verify;
using hw::cell::Integrator;

struct CellRun {
  Trace trace;
  double apd90_last = NAN;
  std::string diverged;  // the DivergenceError's message
};

CellRun run(const hw::cell::CellKernel& k, const hw::cell::CellSetup& s, const hw::cell::StimulusTrain& train,
        const hw::cell::SolverOptions& solver) {
  hw::cell::TraceOptions t;
  t.interval_ms = kGridMs;
  CellRun r;
  try {
    const auto res = hw::cell::run_single_cell(k, s, train, solver, t);
    for (std::size_t row = 0; row < res.trace.rows(); ++row) {
      r.trace.t.push_back(res.trace.at(row, 0));
      r.trace.v.push_back(res.trace.at(row, 1));
    }
    if (!res.beats.empty()) r.apd90_last = res.beats.back().apd90;
  } catch (const hw::cell::DivergenceError& e) {
    r.diverged = e.what();
  }
  return r;
}

// Every model is held to the bar in every run. Each is a run-time compile, a CVODE
// reference and `auto`'s probes, 5 s to 5 minutes per model on one core of the GPU host
// (the slowest are CiPA, Decker, Iyer and Shannon). The whole set is also recorded on the
// GPU host's cores (tools/device/stiff-set.sh, docs/data/stiff/) and tabled in
// docs/verification.md.
class StiffSet : public ::testing::TestWithParam<std::string> {};

TEST_P(StiffSet, FixedStepsHoldAgainstCvode) {
  const fs::path file = GetParam();
  const std::string model = file.stem().string();
  if (!fs::exists(file)) GTEST_SKIP() << file << " not found";
  const auto [lm, setup, train] = load_for_beats(file, kBeats);
  const double duration = lm.stimulus.default_duration_ms.value_or(1.0);
  const auto needs = hw::model::KernelNeeds::only({Integrator::rl2, Integrator::grl2}, false);
  hw::model::KernelNeeds both = needs;
  both.single_precision = true;
  std::string how;
  const auto k = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::automatic, &how, both);
  if (!lm.analysed.blocks.empty() && how.rfind("compiled C++", 0) == 0) {
    // The printed block solver (each block's nonzeros, in minimum-degree order:
    // model/emit/block_solver.hpp) against the interpreter's dense loops in the block's own
    // order: one GRL2 step (factorisation, two solves, two products) from the initial and
    // from perturbed states, in double.
    const auto interp = hw::model::make_interpreter(lm.analysed);
    hw::model::cgtest::expect_steps_match<double>(lm.analysed, *k, 0.01 / lm.analysed.roles.time_to_ms, 1e-12, interp.get(), 1,
                                                  1u << int(Integrator::grl2));
  }

  hw::cell::SolverOptions cvode;
  cvode.cvode = true;
  cvode.dt_ms = 0.01;
  const CellRun ref = run(*k, setup, train, cvode);
  ASSERT_TRUE(ref.diverged.empty()) << ref.diverged;
  const bool paced = !unpaced(model) && std::isfinite(ref.apd90_last);
  std::size_t in_blocks = 0;
  for (const auto& b : lm.analysed.blocks) in_blocks += b.states.size();

  struct Config {
    const char* integrator;
    double dt;
    bool f32;
  };
  for (const Config& c : {Config{"auto", 0.01, false}, Config{"auto", 0.02, false}, Config{"grl2", 0.01, false},
                          Config{"grl2", 0.01, true}, Config{"auto", 0.01, true}}) {
    hw::cell::SolverOptions s;
    s.single_precision = c.f32;
    s.dt_ms = c.dt;
    std::string chosen = c.integrator;
    if (chosen == "auto") {
      hw::cell::AutoOptions ao;
      ao.dt_ms = c.dt;
      ao.single_precision = c.f32;
      ao.stim_duration_ms = duration;
      const auto ch = hw::cell::choose_integrator(lm.analysed, *k, setup, ao);
      s.method = ch.method;
      s.dt_ms = c.dt / ch.substeps;
      chosen = std::string(hw::cell::integrator_name(ch.method)) + (ch.substeps > 1 ? "x" + std::to_string(ch.substeps) : "");
    } else {
      s.method = Integrator::grl2;
    }
    const std::string what = model + " " + c.integrator + " dt " + std::to_string(c.dt) + (c.f32 ? " float" : " double");
    const CellRun r = run(*k, setup, train, s);
    ASSERT_TRUE(r.diverged.empty()) << what << ": " << r.diverged;
    if (c.f32) continue;  // float: finishes finite; accuracy is double's bar
    const double e = rrms(r.trace, ref.trace);
    EXPECT_LE(e, 0.01) << what << " (" << chosen << "): RRMS(V) vs CVODE";
    double d = NAN;
    if (paced) {
      d = std::fabs(r.apd90_last - ref.apd90_last);
      EXPECT_LE(d, 1.0) << what << " (" << chosen << "): last-beat APD90 " << r.apd90_last << " vs CVODE "
                        << ref.apd90_last;
    }
    std::printf("HW_STIFF model=%s states=%zu blocks=%zu block_states=%zu integrator=%s dt=%g chosen=%s "
                "apd90_diff_ms=%.4f rrms=%.3e apd90=%.3f ref_apd90=%.3f\n",
                model.c_str(), lm.analysed.states.size(), lm.analysed.blocks.size(), in_blocks, c.integrator, c.dt,
                chosen.c_str(), d, e, r.apd90_last, ref.apd90_last);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, StiffSet, ::testing::ValuesIn(stiff_set_files()),
                         [](const auto& info) { return model_test_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StiffSet);

}  // namespace
