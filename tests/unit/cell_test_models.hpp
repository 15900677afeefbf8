// Hand-written cell models for the cell runner tests, in the integrators' model concept.
// They have known behaviour (pure integrator, exponential decay, Mitchell-Schaeffer), so
// tests can assert exact protocol timing and monotone biomarkers without a model file.
#pragma once

#include <cmath>

#include "cell/cell_setup.hpp"
#include "runtime/concept_kernel.hpp"

namespace hw::cell::cell_models {

// dV/dt = amp · on: V counts the stimulus charge delivered. Params: amp, on.
struct Counter {
  int n_states() const { return 1; }
  int n_params() const { return 2; }
  int n_constants() const { return 0; }
  bool is_gate(int) const { return false; }
  template <class R> void constants(const R*, R*) const {}
  template <class R> void rhs(R, const R*, const R* p, const R*, R* f) const { f[0] = p[0] * p[1]; }
  template <class R> void rhs_jac(R t, const R* y, const R* p, const R* c, R* f, R* j) const {
    rhs(t, y, p, c, f);
    j[0] = 0;
  }
};

// dy/dt = -k y. Params: k.
struct Decay {
  int n_states() const { return 1; }
  int n_params() const { return 1; }
  int n_constants() const { return 0; }
  bool is_gate(int) const { return true; }
  template <class R> void constants(const R*, R*) const {}
  template <class R> void rhs(R, const R* y, const R* p, const R*, R* f) const { f[0] = -p[0] * y[0]; }
  template <class R> void rhs_jac(R t, const R* y, const R* p, const R* c, R* f, R* j) const {
    rhs(t, y, p, c, f);
    j[0] = -p[0];
  }
};

// Mitchell & Schaeffer 2003 (dimensionless V in [0, 1], time in ms); APD grows with
// tau_close (≈ tau_close · ln(tau_out / (4 tau_in))). Params: tau_in, tau_out, tau_open,
// tau_close, v_gate, amp, on. The stimulus is additive on dV/dt.
struct MitchellSchaeffer {
  int n_states() const { return 2; }
  int n_params() const { return 7; }
  int n_constants() const { return 0; }
  bool is_gate(int i) const { return i == 1; }
  template <class R> void constants(const R*, R*) const {}
  template <class R> void rhs(R, const R* y, const R* p, const R*, R* f) const {
    const R v = y[0], h = y[1];
    f[0] = h * v * v * (R(1) - v) / p[0] - v / p[1] + p[5] * p[6];
    f[1] = v < p[4] ? (R(1) - h) / p[2] : -h / p[3];
  }
  template <class R> void rhs_jac(R t, const R* y, const R* p, const R* c, R* f, R* j) const {
    rhs(t, y, p, c, f);
    const R v = y[0], h = y[1];
    j[0] = h * (R(2) * v - R(3) * v * v) / p[0] - R(1) / p[1];
    j[1] = v < p[4] ? -R(1) / p[2] : -R(1) / p[3];
  }
};

inline CellSetup counter_setup() {
  CellSetup s;
  s.model_name = "counter";
  s.state_names = {"V"};
  s.initial_states = {0.0};
  s.param_names = {"amp", "_hw_stim_on"};
  s.params = {1.0, 0.0};
  s.voltage = 0;
  s.stim_amplitude = 0;
  s.stim_on = 1;
  s.stimulus.kind = model::StimulusInfo::Kind::additive;
  s.stimulus.amplitude_param = "amp";
  s.stimulus.on_param = "_hw_stim_on";
  return s;
}

inline CellSetup ms_setup() {
  CellSetup s;
  s.model_name = "mitchell_schaeffer";
  s.state_names = {"v", "h"};
  s.initial_states = {0.0, 1.0};
  s.param_names = {"tau_in", "tau_out", "tau_open", "tau_close", "v_gate", "amp", "_hw_stim_on"};
  s.params = {0.3, 6.0, 120.0, 150.0, 0.13, 0.2, 0.0};
  s.voltage = 0;
  s.stim_amplitude = 5;
  s.stim_on = 6;
  s.stimulus.kind = model::StimulusInfo::Kind::additive;
  s.stimulus.amplitude_param = "amp";
  s.stimulus.on_param = "_hw_stim_on";
  return s;
}

}  // namespace hw::cell::cell_models
