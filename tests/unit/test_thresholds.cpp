// State thresholds (model/passes/thresholds.hpp): which comparisons a step stops at, and
// that every integrator then sees a window of a state it crosses inside one step, in the
// interpreter and in the printed C++ alike.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/integrators.hpp"
#include "model/emit/interpreter.hpp"
#include "model/ir/print.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "model/passes/thresholds.hpp"

namespace {

using hw::cell::Integrator;

hw::model::LoadedModel window_switch() {
  return hw::model::load_model(std::string(HW_TEST_DATA_DIR) + "/data/hwm/window_switch.hwm");
}

TEST(Thresholds, FindsTheWindowOnAStateButNotTheVoltageOrTime) {
  const auto lm = window_switch();
  const auto& m = lm.analysed;
  std::vector<std::string> found;
  for (auto g : m.thresholds) found.push_back(hw::model::to_infix(m, g));
  ASSERT_EQ(found.size(), 2u) << hw::model::describe_thresholds(m);
  for (const std::string& g : found) {
    EXPECT_NE(g.find('x'), std::string::npos) << g;
    EXPECT_EQ(g.find('V'), std::string::npos) << g;
    EXPECT_EQ(g.find('t'), std::string::npos) << g;
  }
  EXPECT_NE(hw::model::describe_thresholds(m).find("2 state thresholds"), std::string::npos);
}

// y after 1 ms at dt 0.1 ms: the time x spent in its window, 0.01 ms. A step crosses each
// threshold in a sliver of 2e-4 dt (2e-5 ms here), in which a scheme that reads its rates at
// the start is on the wrong side: y is within a sliver per crossing of it.
double time_in_window(const hw::cell::CellKernel& k, Integrator method, bool f32) {
  const auto lm = window_switch();
  std::vector<double> p;
  for (const auto& q : lm.analysed.parameters) p.push_back(q.value);
  std::vector<double> y0;
  for (const auto& s : lm.analysed.states) y0.push_back(s.initial);
  const auto yi = *lm.analysed.find_state("y");
  const auto run = [&](auto real) {
    using Real = decltype(real);
    std::vector<Real> y(y0.begin(), y0.end()), pr(p.begin(), p.end());
    hw::cell::Batch<Real> b;
    b.n = 1;
    b.stride = 1;
    b.y = y.data();
    b.p = pr.data();
    k.step(method, Real(0), Real(0.1), 10, b);
    return double(y[yi]);
  };
  return f32 ? run(0.0f) : run(0.0);
}

TEST(Thresholds, EveryIntegratorSeesAWindowCrossedInsideAStep) {
  const auto lm = window_switch();
  const auto interpreted = hw::model::make_interpreter(lm.analysed);
  const auto compiled = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::compiled);
  for (int i = 0; i < hw::cell::kIntegratorCount; ++i) {
    const auto method = Integrator(i);
    for (bool f32 : {false, true}) {
      const double a = time_in_window(*interpreted, method, f32), b = time_in_window(*compiled, method, f32);
      EXPECT_NEAR(a, 0.01, 5e-5) << "interpreter, " << hw::cell::integrator_name(method) << (f32 ? " float" : "");
      EXPECT_NEAR(b, a, f32 ? 1e-6 : 1e-12) << "compiled C++, " << hw::cell::integrator_name(method)
                                           << (f32 ? " float" : "");
    }
  }
}

// The same model as a hand-written struct, to show what the thresholds change: one plain
// step over the window sees nothing.
struct Window {
  static constexpr int kStates = 2;
  static constexpr int kThresholds = 2;
  int n_states() const { return 2; }
  int n_params() const { return 0; }
  int n_constants() const { return 0; }
  bool is_gate(int) const { return false; }
  void constants(const double*, double*) const {}
  void rhs(double, const double* y, const double*, const double*, double* f) const {
    f[0] = 1;
    f[1] = y[0] > 0.42 && y[0] < 0.43 ? 1 : 0;
  }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* f, double* J) const {
    rhs(t, y, p, c, f);
    J[0] = J[1] = 0;
  }
  void thresholds(double, const double* y, const double*, const double*, double* g) const {
    g[0] = y[0] - 0.42;
    g[1] = y[0] - 0.43;
  }
};

TEST(Thresholds, APlainStepMissesTheWindow) {
  const double* none = nullptr;
  double plain[2] = {0.4, 0}, stopping[2] = {0.4, 0};
  hw::cell::detail::step_once(Window{}, Integrator::rl2, 0.0, 0.1, plain, none, none);
  hw::cell::step_cell(Window{}, Integrator::rl2, 0.0, 0.1, stopping, none, none);
  EXPECT_EQ(plain[1], 0.0);
  EXPECT_NEAR(stopping[1], 0.01, 5e-5);
  EXPECT_NEAR(stopping[0], 0.5, 1e-12);  // the step still ends at t + dt
}

}  // namespace
