// The stiff reference: SUNDIALS CVODE (BDF, Newton with a dense direct linear solver and a
// difference-quotient Jacobian) over a CellKernel's rhs_jac in double.
//
// Why a dense solver: cardiac models have at most a few dozen states, where dense LU is
// cheap and exact; the kernel provides only the Jacobian's diagonal, so CVODE forms the
// full matrix by difference quotients. Stimulus edges are discontinuities of the RHS:
// the runner integrates each interval of constant stimulus separately, stopping exactly
// at the edge (CVodeSetStopTime) and re-initialising there.
#pragma once

#include "cell/single_cell.hpp"

namespace hw::cell {

// Same contract as run_single_cell with solver.cvode set: samples every dt_ms (for the
// biomarkers, by CVODE's interpolation), records every interval_ms.
SingleCellResult run_cvode(const CellKernel& kernel, const CellSetup& setup,
                           const StimulusTrain& train, const SolverOptions& solver,
                           const TraceOptions& trace, const PacingControl& control = {},
                           const StopCheck& stop = {});

// Integrates y' = rhs(t, y) of the kernel (no pacing) from t0 to t1 (model units) with
// the given parameters; for tests and tools. Returns the internal step count.
long cvode_integrate(const CellKernel& kernel, std::vector<double>& y,
                     const std::vector<double>& params, double t0, double t1, double rtol,
                     double atol);

}  // namespace hw::cell
