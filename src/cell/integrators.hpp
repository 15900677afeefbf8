// Fixed-step integrators for one cell and for a batch of cells in structure-of-arrays.
//
// Header-only on purpose: the same templates are instantiated by the interpreter (the
// oracle), by the C++ the model compiler prints for built-in models at build time, and by
// the C++ it prints for a user's model and compiles at run time (model/jit). So every
// backend runs literally the same integrator code.
//
// A cell model M is anything with (Real = float or double):
//   int  n_states() const;  int n_params() const;  int n_constants() const;
//   bool is_gate(int i) const;                       // dy_i/dt = a - b*y_i
//   void constants(const Real* p, Real* c) const;    // once per cell ("computed constants")
//   void rhs(Real t, const Real* y, const Real* p, const Real* c, Real* dydt) const;
//   void rhs_jac(Real t, const Real* y, const Real* p, const Real* c,
//                Real* dydt, Real* jdiag) const;     // also exact d(dy_i/dt)/dy_i
//
// The stimulus is not special here: the driver writes it into a parameter each step.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace hw::cell {

enum class Integrator : std::uint8_t { fe, rk2, rk4, rl1, rl2, sbe };
inline constexpr int kIntegratorCount = 6;
inline constexpr int kMaxStates = 256;  // front ends reject larger models
inline constexpr int kMaxParams = 1024;

// Short names used on the command line and in generated symbol names.
constexpr const char* integrator_name(Integrator i) {
  constexpr const char* names[] = {"fe", "rk2", "rk4", "rl1", "rl2", "sbe"};
  return names[static_cast<int>(i)];
}

// Formal order of accuracy (what the convergence tests measure).
constexpr int integrator_order(Integrator i) {
  constexpr int orders[] = {1, 2, 4, 1, 2, 1};
  return orders[static_cast<int>(i)];
}

namespace detail {

// (e^{J h} - 1)/J, the exact propagator factor of y' = f + J (y - y0); → h as J → 0.
template <class Real>
[[gnu::always_inline]] inline Real expm1_over(Real J, Real h) {
  const Real x = J * h;
  // Below |x| ~ 1e-5 (double) the series beats expm1's rounding for this quotient. Both
  // sides are computed and one is selected, so a loop over cells that calls this can be
  // if-converted and vectorised. `+ Real(0) * e` keeps GCC from sinking the expm1 call into
  // the large-|x| side (which would bring the branch back); it adds ±0 to the series, as e
  // is finite (|e| < 2e-5) whenever the series is selected. At J == 0 the unused quotient
  // is NaN.
  const Real e = std::expm1(x);
  const Real series = h * (Real(1) + x * (Real(0.5) + x * Real(1.0 / 6.0))) + Real(0) * e;
  const Real exact = e / J;
  return std::fabs(x) < Real(1e-5) ? series : exact;
}

// Size of step_cell's scratch arrays: the model's own state count when it is a compile-time
// constant (generated models), so that inside a vectorised loop over cells the arrays are
// small enough to live in registers; kMaxStates for run-time models (the interpreter).
template <class M>
constexpr int scratch_size() {
  if constexpr (requires { M::kStates; }) {
    return M::kStates > 0 ? M::kStates : 1;
  } else {
    return kMaxStates;
  }
}

}  // namespace detail

// The per-state loops are unrolled completely when n is a compile-time constant (generated
// models, up to 64 states), so a vectorised loop over cells that inlines step_cell has no
// inner loop left (GCC 12 vectorises only innermost loops).
#define HW_STATE_LOOP _Pragma("GCC unroll 64")

// Advances one cell by dt. y has n_states entries; c holds the cell's computed constants.
// Always inlined: a loop over cells vectorises only when the whole step is in its body, and
// GCC's size heuristics otherwise give up on the larger models and integrators.
template <class Real, class M>
[[gnu::always_inline]] inline void step_cell(const M& m, Integrator method, Real t, Real dt, Real* y, const Real* p,
                      const Real* c) {
  const int n = m.n_states();
  constexpr int kScratch = detail::scratch_size<M>();
  Real f[kScratch], J[kScratch], ys[kScratch];
  switch (method) {
    case Integrator::fe: {
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i];
      return;
    }
    case Integrator::rk2: {  // explicit midpoint
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) ys[i] = y[i] + Real(0.5) * dt * f[i];
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i];
      return;
    }
    case Integrator::rk4: {
      Real acc[kScratch];
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] = f[i]; ys[i] = y[i] + Real(0.5) * dt * f[i]; }
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] += 2 * f[i]; ys[i] = y[i] + Real(0.5) * dt * f[i]; }
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] += 2 * f[i]; ys[i] = y[i] + dt * f[i]; }
      m.rhs(t + dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt / Real(6) * (acc[i] + f[i]);
      return;
    }
    case Integrator::rl1: {  // Rush-Larsen: gates exact for frozen a, b; the rest FE
      m.rhs_jac(t, y, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i)
        y[i] += m.is_gate(i) ? f[i] * detail::expm1_over(J[i], dt) : dt * f[i];
      return;
    }
    case Integrator::rl2: {
      // Second-order Rush-Larsen (Perego & Veneziani 2009; Sundnes et al. 2009): a
      // half RL1 step to the midpoint, then a full step from y with the gates' a, b and the
      // other states' slopes taken at the midpoint (midpoint RK2 for non-gates).
      m.rhs_jac(t, y, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i)
        ys[i] = y[i] + (m.is_gate(i) ? f[i] * detail::expm1_over(J[i], Real(0.5) * dt)
                                     : Real(0.5) * dt * f[i]);
      m.rhs_jac(t + Real(0.5) * dt, ys, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) {
        if (m.is_gate(i)) {
          // y' = f* + J*(y - y*), exact from y over dt.
          const Real slope = f[i] + J[i] * (y[i] - ys[i]);
          y[i] += slope * detail::expm1_over(J[i], dt);
        } else {
          y[i] += dt * f[i];
        }
      }
      return;
    }
    case Integrator::sbe: {  // simplified backward Euler: one Newton step, diagonal J
      m.rhs_jac(t, y, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i] / (Real(1) - dt * J[i]);
      return;
    }
  }
}

// A batch of cells in structure-of-arrays layout: state k of cell i is y[k*stride + i];
// with per_cell_params, parameter k of cell i is p[k*stride + i], else p[k] for all.
template <class Real>
struct Batch {
  std::size_t n = 0;
  std::size_t stride = 0;
  Real* y = nullptr;
  const Real* p = nullptr;
  bool per_cell_params = false;
  // Optional, for kernels whose external_voltage(k) is true, with shared parameters only:
  // the voltage (state v_state) of cell i is v[i], read and written in place, and y holds
  // the other states with that slot left out (state k at slot k < v_state ? k : k − 1).
  // The tissue engine steps its compact state arrays and the next V field this way,
  // without copying them into a scratch batch.
  Real* v = nullptr;
  int v_state = -1;
};

// Advances every cell of the batch by `steps` steps of dt from t.
template <class Real, class M>
inline void step_batch(const M& m, Integrator method, Real t, Real dt, int steps,
                       const Batch<Real>& b) {
  const int ns = m.n_states(), np = m.n_params(), nc = m.n_constants();
  Real c_uniform[kMaxParams];
  if (!b.per_cell_params) m.constants(b.p, c_uniform);
  for (std::size_t i = 0; i < b.n; ++i) {
    Real y[kMaxStates], p[kMaxParams], c_cell[kMaxParams];
    const Real* pc = b.p;
    const Real* cc = c_uniform;
    if (b.per_cell_params) {
      for (int k = 0; k < np; ++k) p[k] = b.p[k * b.stride + i];
      m.constants(p, c_cell);
      pc = p;
      cc = c_cell;
    }
    (void)nc;
    for (int k = 0; k < ns; ++k) y[k] = b.y[k * b.stride + i];
    for (int s = 0; s < steps; ++s) step_cell(m, method, t + s * dt, dt, y, pc, cc);
    for (int k = 0; k < ns; ++k) b.y[k * b.stride + i] = y[k];
  }
}

}  // namespace hw::cell
