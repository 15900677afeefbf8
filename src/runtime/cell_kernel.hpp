// The one interface every cell-model backend implements: the IR interpreter (the oracle),
// C++ printed and compiled at build time (built-in models), and C++ printed and compiled
// at run time into a cached shared library (a user's model). Single cells, populations,
// CVODE and (later) tissue steppers only ever talk to this.
//
// Indexing follows the analysed Model (after model/passes): states and parameters in the
// Model's order; "constants" are the algebraics with once_per_cell, in the Model's order;
// "algebraics" are all algebraics, in the Model's order.
#pragma once

#include <memory>
#include <string>

#include "runtime/integrators.hpp"

namespace hw::cell {

class CellKernel {
 public:
  virtual ~CellKernel() = default;

  // What runs, for logs: "interpreter", "compiled C++ (built-in)", "compiled C++ (cached: PATH)".
  virtual std::string describe() const = 0;

  virtual int n_states() const = 0;
  virtual int n_params() const = 0;
  virtual int n_constants() const = 0;
  virtual int n_algebraics() const = 0;
  virtual bool is_gate(int i) const = 0;

  // Batch steps (see integrators.hpp for the layout), in double and in float.
  virtual void step(Integrator method, double t, double dt, int steps,
                    const Batch<double>& b) const = 0;
  virtual void step(Integrator method, float t, float dt, int steps,
                    const Batch<float>& b) const = 0;

  // True when step() accepts a Batch whose state k lives outside y (Batch::v): generated
  // kernels for their voltage state; the interpreter never.
  virtual bool external_voltage(int k) const {
    (void)k;
    return false;
  }

  // One cell, double: what CVODE, biomarkers and tests need.
  virtual void constants(const double* p, double* c) const = 0;
  virtual void rhs_jac(double t, const double* y, const double* p, const double* c,
                       double* dydt, double* jdiag) const = 0;
  virtual void algebraics(double t, const double* y, const double* p, const double* c,
                          double* out) const = 0;
};

}  // namespace hw::cell
