// Wraps any "cell model concept" type (see integrators.hpp) as a CellKernel.
//
// Why: hand-written C++ models (tests, analytic problems such as dy/dt = -y) and any
// generated model struct can be driven by the same runners, CVODE and populations as the
// interpreter, without a second code path. M's methods must be templates over Real (or
// overloads for float and double). Algebraics are optional: M may provide
// n_algebraics() and algebraics(t, y, p, c, out) in double.
#pragma once

#include <string>
#include <utility>

#include "runtime/cell_kernel.hpp"

namespace hw::cell {

template <class M>
class ConceptKernel final : public CellKernel {
 public:
  explicit ConceptKernel(M m, std::string what = "hand-written C++")
      : m_(std::move(m)), what_(std::move(what)) {}

  std::string describe() const override { return what_; }
  int n_states() const override { return m_.n_states(); }
  int n_params() const override { return m_.n_params(); }
  int n_constants() const override { return m_.n_constants(); }
  int n_algebraics() const override {
    if constexpr (requires { m_.n_algebraics(); })
      return m_.n_algebraics();
    else
      return 0;
  }
  bool is_gate(int i) const override { return m_.is_gate(i); }

  void step(Integrator method, double t, double dt, int steps,
            const Batch<double>& b) const override {
    step_batch(m_, method, t, dt, steps, b);
  }
  void step(Integrator method, float t, float dt, int steps,
            const Batch<float>& b) const override {
    step_batch(m_, method, t, dt, steps, b);
  }
  void constants(const double* p, double* c) const override { m_.constants(p, c); }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* dydt,
               double* jdiag) const override {
    m_.rhs_jac(t, y, p, c, dydt, jdiag);
  }
  void algebraics(double t, const double* y, const double* p, const double* c,
                  double* out) const override {
    if constexpr (requires { m_.algebraics(t, y, p, c, out); }) m_.algebraics(t, y, p, c, out);
  }

  const M& model() const { return m_; }

 private:
  M m_;
  std::string what_;
};

}  // namespace hw::cell
