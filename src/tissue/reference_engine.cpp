// The reference engine: the oracle every fast engine is tested against.
//
// Why its own short file: an oracle that shares the fast engines' structure shares their
// mistakes. This one keeps V on the whole box in double (float cases too: it never computes
// in float), diffuses with the reference operator (kernels/reference: plain loops, one
// scatter per link) and, for the implicit schemes, solves with its own naive CG
// (tissue/reference_implicit.*: serial double loops, stopped on the true residual, at least
// 1e-12 tighter than the case's time.cg_tolerance allows the fast engines); it steps each
// model region's cells through the IR interpreter (model/emit/interpreter), which shares no
// code with the printed C++ and CUDA. No row layout, no fusion, no blocks, no threads, no
// flushing of subnormals. It is slow; it is for tests and small cases.
//
// What it still shares with the cpu and CUDA engines, and why each is safe:
//   * The set-up (SimSetup, tissue/reaction.*): the case read and checked, the geometry and
//     mask, σ (or φσ) per voxel, φ, the parts with their cells, parameters and initial
//     states, the stimuli's schedules and cell lists (tissue/stimuli.hpp; it adds them cell
//     by cell itself, not through kernels/stimulus_k.hpp). This is the problem statement, not the method: a bug
//     there poses every engine the same wrong problem, and is tested on its own (geometry,
//     conductivity, case and phase-field tests against shapes and hand values).
//   * The link walker (kernels/diffusion_links.hpp) and the face/edge weights
//     (kernels/diffusion_k.hpp): which links exist (mask, walls, periodic wrap) and their
//     coefficients from σ. The reference applies L by scattering along the walker's links;
//     the cpu and CUDA engines store the same walk as coefficient arrays (build_link_coeffs)
//     and gather. So an error in a weight or a missing link would pass both: the operator is
//     checked against analytic answers instead (TissueDiffusion: second-order convergence on
//     manufactured solutions, symmetry, conservation, zero flux through walls). The
//     fourth-order stencil's d2_fourth and mirror_or_wrap are shared likewise and checked by
//     its fourth-order convergence.
//   * The DiffusionOperator wrapper (tissue/diffusion.*): argument checks, and the
//     diagonal/Gershgorin bound that the forward-Euler dt limit uses (the reference computes
//     its own Jacobi diagonal from the walker).
//   * The model: the parsed and analysed IR (model/) that the interpreter evaluates and the
//     printers print; and the cell integrators' maths (runtime/) that the interpreter's step
//     calls, as the printed kernels do. The IR is checked against CVODE and Myokit goldens;
//     the integrators by their convergence orders.
//   * throw_numerical_error's message, failing_variable's naming, the canonical state format
//     and the initial state it is made from (engine.hpp): the problem's statement, not the
//     method.
// It shares nothing of the fast path: not the row layout, fused passes or block batches,
// not tissue/pcg.hpp, tissue/cg.hpp or tissue/diffusion_stepper.* (the implicit solve), not the CUDA
// kernels.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/emit/interpreter.hpp"
#include "tissue/engine.hpp"
#include "tissue/reference_implicit.hpp"

namespace hw::tissue {

namespace {

class ReferenceEngine final : public Engine {
 public:
  // The set-up's box-sized φ and σ are freed once the engines are built (simulation.cpp):
  // what is needed of them is copied here.
  explicit ReferenceEngine(const SimSetup& s) : s_(s), sinks_(*this, s.geo.grid.size()), phase_(!s.phi.empty()) {
    const Grid& g = s.geo.grid;
    v_ = Field<double>(g.size(), 0.0);
    for (const Part& p : s.parts) {
      Region r;
      r.kernel = model::make_interpreter(*p.analysed);
      r.y.assign(std::size_t(p.ns) * p.n, 0.0);  // all states, V included, state-major
      for (int k = 0; k < p.ns; ++k)
        for (std::size_t i = 0; i < p.n; ++i) r.y[std::size_t(k) * p.n + i] = p.setup.initial_states[k];
      r.p = p.per_cell ? p.pcell : p.params;
      regions_.push_back(std::move(r));
    }
    load(initial_state(s));  // V and the states but V: the defaults, then the initial conditions
    const DiffusionSetup ds = diffusion_setup(s);
    op_ = make_diffusion_operator(ds, Backend::reference);
    if (s.time.diffusion != DiffusionScheme::forward_euler) {
      implicit_ = std::make_unique<reference::ImplicitDiffusion>(*op_, ds, s.chi, s.cm, s.time.dt,
                                                                 s.time.diffusion, s.phi,
                                                                 s.time.cg_tolerance);
    } else if (!s.phi.empty()) {
      phi_ = s.phi;
    }
  }

  void step(long n) override {
    const double dt = s_.time.dt, t = double(n) * dt;
    std::vector<int> active;
    s_.stimuli.active(n, active);
    // Godunov: D(dt) then R(dt). Strang: R(dt/2), D(dt), R(dt/2). A failure leaves v_ and
    // every state as they were.
    Field<double> v = v_;
    std::vector<std::vector<double>> y;
    for (const Region& r : regions_) y.push_back(r.y);
    if (s_.time.splitting == Splitting::godunov) {
      diffuse(v);
      react(v, y, dt, t, active, n);
    } else {
      react(v, y, 0.5 * dt, t, active, n);
      diffuse(v);
      react(v, y, 0.5 * dt, t + 0.5 * dt, active, n);
    }
    v_ = std::move(v);
    for (std::size_t q = 0; q < regions_.size(); ++q) regions_[q].y = std::move(y[q]);
  }

  void voltage(Field<float>& out) const override {
    out.resize(v_.size());
    for (std::size_t n = 0; n < v_.size(); ++n)
      out[n] = is_tissue(&s_.geo.mask, n) ? float(v_[n]) : std::numeric_limits<float>::quiet_NaN();
  }

  double voltage_at(std::size_t n) const override {
    return is_tissue(&s_.geo.mask, n) ? v_[n] : std::numeric_limits<double>::quiet_NaN();
  }

  void state(std::size_t q, int k, Field<float>& out) const override {
    const Part& p = s_.parts[q];
    for (std::size_t i = 0; i < p.n; ++i) out[p.grid_index(i)] = float(regions_[q].y[std::size_t(k) * p.n + i]);
  }

  double state_at(std::size_t q, int k, std::size_t i) const override {
    return regions_[q].y[std::size_t(k) * s_.parts[q].n + i];
  }

  CanonicalState save() const override {
    CanonicalState st;
    st.bytes = 8;
    for (std::size_t q = 0; q < regions_.size(); ++q) {
      const Part& p = s_.parts[q];
      std::vector<double> y;
      for (int k = 0; k < p.ns; ++k)
        if (k != p.kv) y.insert(y.end(), regions_[q].y.begin() + std::ptrdiff_t(k * p.n),
                                regions_[q].y.begin() + std::ptrdiff_t((k + 1) * p.n));
      st.parts.push_back(std::move(y));
    }
    for (std::size_t n = 0; n < v_.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) st.v.push_back(v_[n]);
    return st;
  }

  void load(const CanonicalState& st) override {
    for (std::size_t q = 0; q < regions_.size(); ++q) {
      const Part& p = s_.parts[q];
      std::size_t j = 0;
      for (int k = 0; k < p.ns; ++k)
        if (k != p.kv)
          for (std::size_t i = 0; i < p.n; ++i) regions_[q].y[std::size_t(k) * p.n + i] = st.parts[q][j++];
    }
    std::size_t i = 0;
    for (std::size_t n = 0; n < v_.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) v_[n] = st.v[i++];
  }

  SinkHost& sinks() const override { return sinks_; }

  EngineInfo describe() const override {
    EngineInfo info;
    info.backend = "reference (double, 1 thread)";
    info.storage = fmt::format("the whole box ({} cells per field)", v_.size());
    info.kernels = fmt::format("reference diffusion operator on the whole field{}{}, then the reaction",
                               phase_ ? ", phase-field no-flux boundary" : "",
                               implicit_ ? fmt::format(" (implicit: the reference's own naive CG in double, true "
                                                       "relative residual <= {:.0e})", implicit_->rel_tol())
                                         : phi_.empty() ? "" : " (L(phi sigma) V / phi)");
    for (std::size_t q = 0; q < regions_.size(); ++q) info.part_kernels.push_back("interpreter (the oracle)");
    return info;
  }

 private:
  struct Region {
    std::unique_ptr<cell::CellKernel> kernel;
    std::vector<double> y;                // ns·n, state-major; V's slot holds model units
    std::vector<double> p;                // np (uniform) or np·n (per cell)
  };

  // V ← V + a·L V (or its phase-field form), or the implicit step.
  void diffuse(Field<double>& v) const {
    if (implicit_) {
      implicit_->step(v);
      return;
    }
    const double a = s_.time.dt / (s_.chi * s_.cm);
    Field<double> out(v.size(), 0.0);
    if (phi_.empty()) {
      op_->apply(v, out, a, 1.0);
    } else {
      op_->apply(v, out, a, 0.0);
      for (std::size_t n = 0; n < v.size(); ++n) out[n] = phi_[n] > 0 ? v[n] + out[n] / phi_[n] : v[n];
    }
    v = std::move(out);
  }

  // Every region's cells over h: V* (+ stimulus) into the model, the interpreter's step, V
  // back. Throws NumericalError for the first cell (grid order) whose V is not finite.
  void react(Field<double>& v, std::vector<std::vector<double>>& y, double h, double t,
             const std::vector<int>& active, long n) const {
    std::size_t bad = std::numeric_limits<std::size_t>::max();
    std::string var;
    for (std::size_t q = 0; q < regions_.size(); ++q) {
      const Part& p = s_.parts[q];
      std::vector<double>& yq = y[q];
      double* yv = yq.data() + std::size_t(p.kv) * p.n;
      for (std::size_t i = 0; i < p.n; ++i) yv[i] = v[p.grid_index(i)] / p.v2mV;
      for (int st : active) {
        const ResolvedStimulus& r = s_.stimuli.list()[std::size_t(st)];
        for (std::uint32_t i : r.cells[q]) yv[i] += h * r.rate[q];
      }
      const int sub = s_.time.ode_substeps;
      const cell::Batch<double> b{p.n, p.n, yq.data(), regions_[q].p.data(), p.per_cell};
      regions_[q].kernel->step(s_.integrator, t / p.t2ms, h / sub / p.t2ms, sub, b);
      for (std::size_t i = 0; i < p.n; ++i) {
        const std::size_t g = p.grid_index(i);
        if (std::isfinite(yv[i])) {
          v[g] = yv[i] * p.v2mV;
        } else if (g < bad) {
          bad = g;
          var = failing_variable(p, [&](int k) { return yq[std::size_t(k) * p.n + i]; });
        }
      }
    }
    if (bad != std::numeric_limits<std::size_t>::max())
      throw_numerical_error(s_.geo.grid, bad, var, double(n) * s_.time.dt, s_.time.dt);
  }

  const SimSetup& s_;
  mutable SinkHost sinks_;  // the host forms only: the outputs feed the maps and the ECG from V
  Field<double> v_;
  std::vector<Region> regions_;
  std::unique_ptr<DiffusionOperator> op_;
  std::unique_ptr<reference::ImplicitDiffusion> implicit_;
  Field<double> phi_;  // explicit phase field: φ per cell (> 0 on tissue)
  bool phase_ = false;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(const SimSetup& s) { return std::make_unique<ReferenceEngine>(s); }

}  // namespace hw::tissue
