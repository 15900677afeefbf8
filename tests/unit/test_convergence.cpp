// Observed convergence order of every fixed-step integrator in runtime/integrators.hpp.
//
// Why: a wrong coefficient in an integrator (a midpoint taken at the wrong time, a gate's
// propagator with the wrong slope) usually still converges, only at a lower order, so
// agreement with a reference at one dt proves little. Halving dt and watching the error
// fall by 2^p catches it. The problem is manufactured so its exact solution is known:
//
//   y0 (gate):     y0' = a(t, y1) - b(y1) y0,  b = 2 + y1^2,  a = y0e' + b y0e
//   y1 (non-gate): y1' = y1e' - (y1^3 - y1e^3) + (y0^2 - y0e^2)
//
// with y0e = 1 + sin(t)/2 and y1e = 1 + cos(t)/2. At the exact solution both right-hand
// sides reduce to the derivatives of y0e, y1e, so (y0e, y1e) solves the system exactly,
// while the time-dependent, state-coupled coefficients make every integrator's error
// terms non-zero (a constant-coefficient gate would be solved exactly by Rush-Larsen).
//
// Each run prints `HW_CONVERGENCE integrator=<name> expected=<p> observed=<q>` lines
// that tools/make_verification_doc.py parses for docs/verification.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/integrators.hpp"

namespace {

using hw::cell::Integrator;

double y0e(double t) { return 1.0 + 0.5 * std::sin(t); }
double y0e_dot(double t) { return 0.5 * std::cos(t); }
double y1e(double t) { return 1.0 + 0.5 * std::cos(t); }
double y1e_dot(double t) { return -0.5 * std::sin(t); }

// The cell model concept of integrators.hpp, written by hand.
struct ManufacturedModel {
  int n_states() const { return 2; }
  int n_params() const { return 0; }
  int n_constants() const { return 0; }
  bool is_gate(int i) const { return i == 0; }
  void constants(const double*, double*) const {}
  void rhs(double t, const double* y, const double* p, const double* c, double* f) const {
    double jd[2];
    rhs_jac(t, y, p, c, f, jd);
  }
  void rhs_jac(double t, const double* y, const double*, const double*, double* f,
               double* jd) const {
    const double b = 2.0 + y[1] * y[1];
    const double a = y0e_dot(t) + b * y0e(t);
    f[0] = a - b * y[0];
    jd[0] = -b;
    const double ye1 = y1e(t), ye0 = y0e(t);
    f[1] = y1e_dot(t) - (y[1] * y[1] * y[1] - ye1 * ye1 * ye1) + (y[0] * y[0] - ye0 * ye0);
    jd[1] = -3.0 * y[1] * y[1];
  }
};

constexpr double kT = 2.0;

// Max-norm error at t = kT after n steps of one integrator, through step_batch (the path
// every backend uses) on a batch of one cell.
double error_at_end(Integrator method, int n) {
  const ManufacturedModel m;
  std::vector<double> y = {y0e(0.0), y1e(0.0)};
  hw::cell::Batch<double> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = nullptr;
  const double dt = kT / n;
  // One step per call so that t is exact at every step (no accumulated t + s*dt drift).
  for (int s = 0; s < n; ++s) hw::cell::step_batch(m, method, s * dt, dt, 1, b);
  return std::max(std::fabs(y[0] - y0e(kT)), std::fabs(y[1] - y1e(kT)));
}

// Observed order from the two finest halvings of dt.
double observed_order(Integrator method) {
  // RK4 reaches round-off sooner; start it coarser.
  const int n0 = method == Integrator::rk4 ? 8 : 40;
  std::vector<double> e;
  for (int k = 0; k < 4; ++k) e.push_back(error_at_end(method, n0 << k));
  const double p1 = std::log2(e[1] / e[2]);
  const double p2 = std::log2(e[2] / e[3]);
  return 0.5 * (p1 + p2);
}

class ConvergenceTest : public ::testing::TestWithParam<Integrator> {};

TEST_P(ConvergenceTest, ObservedOrderMatchesFormalOrder) {
  const Integrator method = GetParam();
  const double q = observed_order(method);
  const int p = hw::cell::integrator_order(method);
  std::printf("HW_CONVERGENCE integrator=%s expected=%d observed=%.3f\n",
              hw::cell::integrator_name(method), p, q);
  EXPECT_NEAR(q, p, 0.2) << hw::cell::integrator_name(method);
}

TEST_P(ConvergenceTest, ErrorFallsMonotonically) {
  const Integrator method = GetParam();
  double prev = error_at_end(method, 10);
  for (int n = 20; n <= 160; n *= 2) {
    const double e = error_at_end(method, n);
    EXPECT_LT(e, prev) << hw::cell::integrator_name(method) << " n=" << n;
    prev = e;
  }
}

INSTANTIATE_TEST_SUITE_P(AllIntegrators, ConvergenceTest,
                         ::testing::Values(Integrator::fe, Integrator::rk2, Integrator::rk4,
                                           Integrator::rl1, Integrator::rl2, Integrator::sbe,
                                           Integrator::grl1, Integrator::grl2),
                         [](const auto& info) {
                           return std::string(hw::cell::integrator_name(info.param));
                         });

}  // namespace
