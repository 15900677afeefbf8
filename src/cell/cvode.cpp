// See cvode.hpp.
#include "cell/cvode.hpp"

#include <cmath>
#include <memory>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <fmt/format.h>

#include "cell/recorder.hpp"

namespace hw::cell {

namespace {

struct RhsData {
  const CellKernel* k = nullptr;
  std::vector<double> p, c, jdiag;
  std::string last_error;
};

int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void* user) {
  auto* d = static_cast<RhsData*>(user);
  double* f = N_VGetArrayPointer(ydot);
  d->k->rhs_jac(t, N_VGetArrayPointer(y), d->p.data(), d->c.data(), f, d->jdiag.data());
  const auto n = N_VGetLength(ydot);
  for (sunindextype i = 0; i < n; ++i)
    if (!std::isfinite(f[i])) return 1;  // recoverable: CVODE retries with a smaller step
  return 0;
}

void on_error(int code, const char* module, const char* function, char* msg, void* user) {
  static_cast<RhsData*>(user)->last_error = fmt::format("{} ({}): {}", function, code, msg);
}

// Owns the SUNDIALS objects of one integration.
class Cvode {
 public:
  Cvode(const CellKernel& k, const std::vector<double>& y0, const std::vector<double>& p,
        double t0, double rtol, double atol, double max_step)
      : n_(k.n_states()) {
    data_.k = &k;
    data_.p = p;
    data_.c.assign(std::max(1, k.n_constants()), 0.0);
    data_.jdiag.assign(std::max(1, n_), 0.0);
    k.constants(data_.p.data(), data_.c.data());
    if (SUNContext_Create(nullptr, &ctx_) != 0) throw Error("CVODE: SUNContext_Create failed");
    y_ = N_VNew_Serial(n_, ctx_);
    std::copy(y0.begin(), y0.end(), N_VGetArrayPointer(y_));
    mem_ = CVodeCreate(CV_BDF, ctx_);
    if (!mem_ || !y_) throw Error("CVODE: out of memory");
    check(CVodeSetErrHandlerFn(mem_, on_error, &data_), "CVodeSetErrHandlerFn");
    check(CVodeInit(mem_, rhs, t0, y_), "CVodeInit");
    check(CVodeSStolerances(mem_, rtol, atol), "CVodeSStolerances");
    check(CVodeSetUserData(mem_, &data_), "CVodeSetUserData");
    A_ = SUNDenseMatrix(n_, n_, ctx_);
    ls_ = SUNLinSol_Dense(y_, A_, ctx_);
    check(CVodeSetLinearSolver(mem_, ls_, A_), "CVodeSetLinearSolver");
    check(CVodeSetMaxNumSteps(mem_, 1000000), "CVodeSetMaxNumSteps");
    if (max_step > 0) check(CVodeSetMaxStep(mem_, max_step), "CVodeSetMaxStep");
  }
  ~Cvode() {
    if (mem_) CVodeFree(&mem_);
    if (ls_) SUNLinSolFree(ls_);
    if (A_) SUNMatDestroy(A_);
    if (y_) N_VDestroy(y_);
    if (ctx_) SUNContext_Free(&ctx_);
  }
  Cvode(const Cvode&) = delete;
  Cvode& operator=(const Cvode&) = delete;

  double* y() { return N_VGetArrayPointer(y_); }
  std::vector<double>& params() { return data_.p; }

  // Restart at t (after a discontinuity) with the current y and parameters.
  void restart(double t, double t_stop) {
    data_.k->constants(data_.p.data(), data_.c.data());
    check(CVodeReInit(mem_, t, y_), "CVodeReInit");
    check(CVodeSetStopTime(mem_, t_stop), "CVodeSetStopTime");
  }

  void advance(double tout) {
    double tret = 0;
    const int flag = CVode(mem_, tout, y_, &tret, CV_NORMAL);
    if (flag < 0)
      throw Error(fmt::format("CVODE failed before t = {} (model time): {}", tout,
                              data_.last_error.empty() ? std::to_string(flag)
                                                       : data_.last_error));
  }

  long steps() const {
    long n = 0;
    CVodeGetNumSteps(mem_, &n);
    return n;
  }

 private:
  void check(int flag, const char* what) {
    if (flag != 0) throw Error(fmt::format("CVODE: {} failed ({})", what, flag));
  }
  int n_;
  RhsData data_;
  SUNContext ctx_ = nullptr;
  N_Vector y_ = nullptr;
  void* mem_ = nullptr;
  SUNMatrix A_ = nullptr;
  SUNLinearSolver ls_ = nullptr;
};

void check_tolerances(double rtol, double atol) {
  if (!(rtol > 0) || !(atol > 0) || !std::isfinite(rtol) || !std::isfinite(atol))
    throw InputError(SourceLoc{}, fmt::format("--rtol and --atol must be positive (got {} "
                                              "and {})", rtol, atol));
}

}  // namespace

SingleCellResult run_cvode(const CellKernel& k, const CellSetup& s, const StimulusTrain& train,
                           const SolverOptions& solver, const TraceOptions& trace,
                           const PacingControl& control, const StopCheck& stop) {
  check_tolerances(solver.rtol, solver.atol);
  const StepSchedule sched(train, solver.dt_ms);
  SingleCellResult out;
  detail::Recorder rec(k, s, sched, trace, solver.dt_ms, out, control);
  const double dt_model = solver.dt_ms / s.time_to_ms;
  Cvode cv(k, s.initial_states, s.params, 0.0, solver.rtol, solver.atol,
           solver.max_step_ms / s.time_to_ms);
  const auto edges = sched.edges();
  long total_steps = 0;
  for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
    const long a = edges[e], b = edges[e + 1];
    if (s.stim_on >= 0) cv.params()[s.stim_on] = sched.on(a) ? 1.0 : 0.0;
    rec.params_changed();
    total_steps += cv.steps();
    cv.restart(a * dt_model, b * dt_model);
    for (long n = a; n < b && !rec.stopped(); ++n) {
      rec.observe(n, cv.y(), cv.params().data());
      if (stop && n > 0 && n % 1024 == 0 && stop()) {
        out.stopped = true;
        out.t_stopped_ms = double(n) * solver.dt_ms;
        out.steps = total_steps + cv.steps();
        out.final_states.assign(cv.y(), cv.y() + k.n_states());
        return out;  // the beat under way is not finished: not recorded
      }
      if (!rec.stopped()) cv.advance((n + 1) * dt_model);
    }
    if (rec.stopped()) break;
  }
  total_steps += cv.steps();
  if (!rec.stopped()) rec.observe(sched.total_steps(), cv.y(), cv.params().data());
  rec.finish();
  out.steps = total_steps;
  out.final_states.assign(cv.y(), cv.y() + k.n_states());
  return out;
}

long cvode_integrate(const CellKernel& k, std::vector<double>& y,
                     const std::vector<double>& params, double t0, double t1, double rtol,
                     double atol) {
  check_tolerances(rtol, atol);
  Cvode cv(k, y, params, t0, rtol, atol, 0.0);
  cv.restart(t0, t1);
  cv.advance(t1);
  y.assign(cv.y(), cv.y() + k.n_states());
  return cv.steps();
}

}  // namespace hw::cell
