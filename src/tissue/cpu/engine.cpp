// The cpu engine: one template that runs a step for Real = float or double: the passes over
// rows of the grid here, the reaction of blocks of cells in tissue/cpu/reaction.hpp, the maps
// in tissue/cpu/sinks.hpp. (The oracle it is tested against is tissue/reference_engine.cpp,
// which shares none of this.)
//
// Layout (docs/tissue.md): per model region ("part") a compact ascending list of its tissue
// cells' grid indices (none stored when the part is the whole grid), the states other than
// the voltage in structure-of-arrays over those cells, and V in mV only in two fields
// (current and next) that the diffusion stencil reads, stored by rows around the tissue
// (mesh/row_layout.hpp; the whole box on a box). A step
// reads V_cur and writes V_next; the cell states of a block are committed only after its
// V was found finite.
//
// Split over ranks (tissue/split.hpp, docs/parallel.md): every rank holds the arrays of
// the whole grid and steps only the rows of its slab. With the fused explicit stencil a step
// sends the slab's face rows of V, steps the rows the halo does not reach, waits for the
// neighbours' faces and steps the rest; the whole-field operators (fourth order, implicit CG)
// gather V on every rank first and apply the operator to the whole field on each
// (the same bits everywhere), then react only the slab. The reads the outputs make (voltage,
// states, checkpoints) gather the slabs first, so every rank sees the whole state.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "kernels/cpu/flush_denormals.hpp"
#include "kernels/cpu/fused_monodomain.hpp"
#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "parallel/governor.hpp"
#include "parallel/placement.hpp"
#include "parallel/team.hpp"
#include "tissue/cpu/reaction.hpp"
#include "tissue/cpu/sinks.hpp"
#include "tissue/split.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "tissue/engine.hpp"
#include "mesh/row_layout.hpp"

namespace hw::tissue {

namespace {

template <class Real>
class CpuEngine final : public Engine {
 public:
  CpuEngine(const SimSetup& s, int threads, bool adapt, comm::Communicator* comm)
      : s_(s), governor_(threads > 0 ? threads : par::usable_cores(), adapt),
        layout_(row_layout(s.geo.grid, s.geo.mask)), reaction_(s, layout_),
        split_(comm, s.geo.grid, s.geo.mask, s.order == StencilOrder::fourth ? 2 : 1),
        sinks_(*this, s.geo.grid, s.geo.mask, layout_, s.parts, split_,
               [this](const ProbeRead& r) { return local_read(r); }) {
    const Grid& g = s.geo.grid;
    const std::size_t S = layout_.size();
    v_[0] = Field<Real>(S, Real(0));
    v_[1] = Field<Real>(S, Real(0));
    if (s.time.splitting == Splitting::strang) tmp_ = Field<Real>(S, Real(0));
    load(initial_state(s));  // the model's defaults, then the case's initial conditions
    // Diffusion: fused rows for explicit second order on cpu; a whole-field operator
    // otherwise (fourth order, implicit schemes).
    const bool expl = s.time.diffusion == DiffusionScheme::forward_euler;
    fused_ = expl && s.order == StencilOrder::second;
    // Phase field, explicit: 1/φ on tissue (0 elsewhere), for V += α·(L_{φσ} V)/φ. The
    // implicit schemes hand φ to the DiffusionStepper (Φ-weighted CG system) instead.
    phase_field_ = !s.phi.empty();
    if (phase_field_ && expl) {
      const std::vector<double> inv = phase_inverse(s.phi, s.geo.mask, layout_);
      inv_phi_ = Field<Real>(S, Real(0));
      std::transform(inv.begin(), inv.end(), inv_phi_.data(), [](double x) { return Real(x); });
    }
    if (fused_) {
      uniform_ = s.sigma.uniform_diagonal(s.geo.mask.empty(), !s.phi.empty());
      const auto& u = s.sigma.uniform_value();
      if (uniform_)
        for (int a = 0; a < 3; ++a) w_[a] = g.active(a) ? u[a] / (g.h[a] * g.h[a]) : 0.0;
      else
        links_ = kernels::build_link_coeffs<Real>(g, s.sigma, s.geo.mask.empty() ? nullptr : &s.geo.mask,
                                           layout_);
    } else {
      op_ = make_diffusion_operator(diffusion_setup(s, layout_), Backend::cpu);
      if (!expl) {
        const CgOptions cg = cg_options(s.time.cg_tolerance, sizeof(Real) == 4, s.time.cg_max_iterations);
        stepper_ = std::make_unique<DiffusionStepper<Real>>(*op_, s.chi, s.cm, s.time.dt,
                                                            s.time.diffusion, cg, s.phi);
        // Split: the CG works on this rank's rows with sums that do not depend on the rank
        // count (diffusion_stepper.hpp).
        stepper_->share(&split_);
      }
    }
  }

  void step(long n) override {
    // The whole step runs with the governor's team (parallel/governor.hpp), the whole-field
    // kernels and CG too (through the TeamScope), and reports its wall time back.
    const auto start = std::chrono::steady_clock::now();
    team_ = governor_.threads();
    const par::TeamScope scope(team_);
    step_team(n);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    governor_.record(seconds);
    // The team it keeps, not a probe's: a probe of the whole team must not free the thread,
    // or every probe sends it back to the crowded core it had left.
    placement_.after_step(governor_.settled(), seconds);
  }

  void step_team(long n) {
    const double dt = s_.time.dt, t = n * dt;
    reaction_.begin_step(n, s_.time.splitting == Splitting::godunov ? dt : 0.5 * dt);
    Field<Real>& cur = v_[cur_];
    Field<Real>& next = v_[1 - cur_];
    Failure fail;
    if (s_.time.splitting == Splitting::godunov) {
      // Lie splitting, diffusion first: V* = V + a·L V;  then R(dt) from V* (docs/tissue.md).
      diffuse_react(cur, next, dt, t, fail);
    } else {
      // Strang: R(dt/2), D(dt), R(dt/2).
      pass(cur.data(), tmp_.data(), false, 0.5 * dt, t, fail, split_.row_begin(), split_.row_end());
      // Split: the ranks exchange halos in the diffusion, so all take part even after a failure.
      if (!fail.any || split_.active()) diffuse_react(tmp_, next, 0.5 * dt, t + 0.5 * dt, fail);
    }
    if (split_.active()) {
      // Every rank stops at the same step, naming the same cell.
      if (!fail.any) fail.cell = std::numeric_limits<std::size_t>::max();
      split_.agree_on_failure(fail.cell, fail.variable);
      fail.any = fail.cell != std::numeric_limits<std::size_t>::max();
    }
    if (fail.any) throw_numerical_error(s_.geo.grid, fail.cell, fail.variable, t, dt, s_.time.cell_maths.tables);
    if (sinks_.feeding()) sinks_.after_step(cur.data(), next.data(), t, dt, team_);
    cur_ = 1 - cur_;
    v_gathered_ = y_gathered_ = !split_.active();
  }

  // Every rank's slab of V, and of every state, on every rank (collective; once per step).
  void gather_v() const {
    if (v_gathered_) return;
    split_.gather_rows(const_cast<Real*>(v_[cur_].data()), layout_);
    v_gathered_ = true;
  }
  void gather_states() const {
    gather_v();
    if (y_gathered_) return;
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      Real* y = const_cast<Real*>(reaction_.parts()[q].y.data());
      for (int k = 0; k + 1 < p.ns; ++k) split_.gather_part(y + std::size_t(k) * p.n, p);
    }
    y_gathered_ = true;
  }
  // A probe's value as this rank holds it (current on its own slab).
  double local_read(const ProbeRead& r) const {
    if (r.field.part < 0)
      return is_tissue(&s_.geo.mask, r.cell) ? double(v_[cur_][layout_.index(r.cell)])
                                             : std::numeric_limits<double>::quiet_NaN();
    const Part& p = s_.parts[std::size_t(r.field.part)];
    return double(reaction_.parts()[std::size_t(r.field.part)].y[cpu::slot(p, r.field.state) * p.n + r.cell]);
  }

  void voltage(Field<float>& out) const override {
    gather_v();
    const Grid& g = s_.geo.grid;
    out.resize(g.size());
    const Field<Real>& v = v_[cur_];
    for (std::size_t n = 0; n < g.size(); ++n)
      out[n] = is_tissue(&s_.geo.mask, n) ? float(v[layout_.index(n)])
                                          : std::numeric_limits<float>::quiet_NaN();
  }

  double voltage_at(std::size_t n) const override {
    gather_v();
    return is_tissue(&s_.geo.mask, n) ? double(v_[cur_][layout_.index(n)])
                                      : std::numeric_limits<double>::quiet_NaN();
  }

  void state(std::size_t q, int k, Field<float>& out) const override {
    const Part& p = s_.parts[q];
    if (!y_gathered_) split_.gather_part(const_cast<Real*>(reaction_.parts()[q].y.data()) + cpu::slot(p, k) * p.n, p);
    const Real* yk = reaction_.parts()[q].y.data() + cpu::slot(p, k) * p.n;
    for (std::size_t i = 0; i < p.n; ++i) out[p.grid_index(i)] = float(yk[i]);
  }

  double state_at(std::size_t q, int k, std::size_t i) const override {
    gather_states();
    const Part& p = s_.parts[q];
    return double(reaction_.parts()[q].y[cpu::slot(p, k) * p.n + i]);
  }

  CanonicalState save() const override {
    gather_states();
    CanonicalState st;
    st.bytes = sizeof(Real);
    for (const auto& ps : reaction_.parts()) st.parts.emplace_back(ps.y.begin(), ps.y.end());
    const Grid& g = s_.geo.grid;
    st.v.reserve(s_.tissue_cells);
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) st.v.push_back(double(v_[cur_][layout_.index(n)]));
    return st;
  }

  void load(const CanonicalState& st) override {
    for (std::size_t q = 0; q < st.parts.size(); ++q)
      std::transform(st.parts[q].begin(), st.parts[q].end(), reaction_.parts()[q].y.begin(),
                     [](double x) { return Real(x); });
    const Grid& g = s_.geo.grid;
    std::size_t i = 0;
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) v_[cur_][layout_.index(n)] = Real(st.v[i++]);
    v_gathered_ = y_gathered_ = true;  // every rank loaded the whole state
  }

  SinkHost& sinks() const override { return sinks_; }
  std::size_t memory_bytes() const override { return sinks_.bytes(); }

  EngineInfo describe() const override {
    EngineInfo info;
    info.backend = fmt::format("cpu ({}, {} thread{}{})", sizeof(Real) == 8 ? "double" : "float",
                               governor_.max(), governor_.max() > 1 ? "s" : "",
                               governor_.adapts() ? ", fewer while the machine is busy" : "");
    info.threads = governor_.mean_threads();
    if (stepper_) info.cg_iterations = stepper_->mean_iterations();
    info.thread_moves = placement_.moves();
    if (split_.active())
      info.backend += fmt::format(" on each of {} ranks ({}), {}", split_.comm().size(), split_.comm().describe(),
                                  split_.decomposition().describe());
    info.kernels = kernels();
    info.storage = storage();
    for (const Part& p : s_.parts) info.part_kernels.push_back(p.how);
    return info;
  }

  std::string kernels() const {
    std::string d = fused_ ? (uniform_ ? "fused diffusion+reaction rows (uniform diagonal sigma)"
                                       : "fused diffusion+reaction rows (link coefficients)")
                           : fmt::format("{} diffusion operator, then reaction",
                                         backend_name(op_->backend()));
    if (phase_field_)
      d += stepper_ ? ", phase-field no-flux boundary ((Phi - theta a L(phi sigma)) system)"
                    : ", phase-field no-flux boundary (L(phi sigma) V / phi)";
    if (stepper_) d += ", implicit diffusion by Jacobi-preconditioned CG";
    return d;
  }

  std::string storage() const {
    const double box = double(s_.geo.grid.size());
    if (layout_.box) return fmt::format("the whole box ({} cells per field)", layout_.size());
    return fmt::format("compressed rows around the tissue, {} cells per field ({:.1f}% of the box)",
                       layout_.size(), 100.0 * double(layout_.size()) / box);
  }

 private:
  using Failure = cpu::Failure;
  static constexpr std::size_t kBlock = cpu::kBlock;

  // dst = R(h)(D(dt)(src)): one diffusion step of dt, then the reaction over h.
  void diffuse_react(Field<Real>& src, Field<Real>& dst, double h, double t, Failure& fail) {
    const double alpha = s_.time.dt / (s_.chi * s_.cm);
    if (fused_) {
      if (!split_.active()) {
        pass(src.data(), dst.data(), true, h, t, fail, 0, rows());
        return;
      }
      // The faces travel while the rows the halo does not reach are stepped.
      const std::size_t r0 = split_.row_begin(), r1 = split_.row_end(), g = split_.ghost_rows();
      split_.start_halo(src.data(), layout_);
      if (r1 - r0 > 2 * g) pass(src.data(), dst.data(), true, h, t, fail, r0 + g, r1 - g);
      split_.finish_halo();
      pass(src.data(), dst.data(), true, h, t, fail, r0, std::min(r1, r0 + g));
      if (r1 - r0 > g) pass(src.data(), dst.data(), true, h, t, fail, std::max(r0 + g, r1 - g), r1);
      return;
    }
    if (stepper_) {
      // Implicit, Φ-weighted with a phase field (diffusion_stepper.hpp): on this rank's rows,
      // the stepper exchanging the halos it needs.
      dst.vec() = src.vec();
      stepper_->step(dst);
      pass(dst.data(), dst.data(), false, h, t, fail, split_.row_begin(), split_.row_end());
      return;
    }
    // The fourth-order stencil and the phase field's division: on this rank's rows, after the
    // halo rows the stencil reaches (two for fourth order) are exchanged.
    const std::size_t r0 = split_.row_begin(), r1 = split_.row_end();
    split_.start_halo(src.data(), layout_);
    split_.finish_halo();
    if (!inv_phi_.empty()) {
      // Phase field: V* = V + a·(L_{φσ} V)/φ on tissue (1/φ = 0 off tissue: V* = V there).
      op_->apply_rows(src, dst, Real(alpha), Real(0), r0, r1);
      const long a = long(r0 == 0 ? 0 : layout_.first(r0)), b = long(layout_.first(r1));
      const Real* ip = inv_phi_.data();
      const Real* sv = src.data();
      Real* dv = dst.data();
#pragma omp parallel for num_threads(team_) if (b - a >= long(kernels::kMinParallelCells))
      for (long n = a; n < b; ++n) dv[n] = sv[n] + dv[n] * ip[n];
    } else {
      // V* = V + a·L V
      op_->apply_rows(src, dst, Real(alpha), Real(1), r0, r1);
    }
    pass(dst.data(), dst.data(), false, h, t, fail, r0, r1);
  }

  std::size_t rows() const { return std::size_t(s_.geo.grid.ny()) * std::size_t(s_.geo.grid.nz()); }

  // For every group of rows: (fused) V* = vin + a·L vin into a row buffer (or straight
  // into vout), else V* = vin; then each tissue cell of the group: V* += h·I_stim/(χCm),
  // the cell model over h in ode_substeps sub-steps, V checked finite, states and vout
  // committed.
  // Rows [ra, rb) only (a split run's slab, or part of it).
  void pass(const Real* vin, Real* vout, bool diffuse, double h, double t, Failure& fail, std::size_t ra,
            std::size_t rb) {
    const Grid& g = s_.geo.grid;
    const int nx = g.nx(), ny = g.ny();
    const long first = long(ra), rows = long(rb) - first;
    if (rows <= 0) return;
    const Real alpha = Real(s_.time.dt / (s_.chi * s_.cm));
    const bool par = long(g.size()) >= kernels::kMinParallelCells;
    // Short rows are grouped, m rows of up to one block of cells, so the per-block costs of
    // the cell step are paid per kBlock cells, not per 64- or 128-cell row of a 3D grid.
    const long m = std::max<long>(1, long(kBlock) / nx);
    const long groups = (rows + m - 1) / m;
    // A single whole-grid part stepped in place: diffuse straight into the next V field.
    const bool direct = diffuse && s_.parts.size() == 1 && reaction_.parts()[0].in_place;
#pragma omp parallel num_threads(team_) if (par)
    {
      const kernels::cpu::FlushDenormals ftz(true);
      // The group's diffused V, indexed like storage from the group's first stored cell; nx
      // cells of slack in front, where rows of a compressed layout start before it in x.
      std::vector<Real> row(diffuse && !direct ? std::size_t(m + 1) * nx : 0);
      auto sc = reaction_.scratch();  // only parts not stepped in place use it
      // Groups of 8: contiguous for the stencil's reuse of rows j±1, dynamic because rows
      // of an irregular geometry hold very different amounts of tissue.
#pragma omp for schedule(dynamic, 8)
      for (long grp = 0; grp < groups; ++grp) {
        const long r0 = first + grp * m, r1 = std::min(first + rows, r0 + m);
        const std::size_t base = layout_.first(std::size_t(r0));
        Real* const buf = direct ? vout + base : row.data() + nx;
        bool any = false;
        for (long r = r0; r < r1; ++r) {
          // Only the row's tissue range (the layout's; every tissue cell belongs to a part)
          // is diffused and stepped; a row without tissue is skipped (its V never changes,
          // in either buffer).
          const int lo = int(layout_.tlo[r]), hi = int(layout_.thi[r]);
          if (lo >= hi) continue;
          any = true;
          if (!diffuse) continue;
          const int j = int(r % ny), k = int(r / ny);
          Real* out = buf + (std::ptrdiff_t(layout_.base[r]) - std::ptrdiff_t(base));
          if (uniform_) {
            kernels::cpu::diffusion2_uniform_row(g, w_, j, k, vin, out, alpha, Real(1));
          } else if (inv_phi_.empty()) {
            kernels::cpu::diffusion2_links_row(g, layout_, links_, j, k, vin, out, alpha, Real(1),
                                               lo, hi);
          } else {
            // Phase field: V* = V + a·(L_{φσ} V)/φ (links built from φσ).
            kernels::cpu::diffusion2_links_row(g, layout_, links_, j, k, vin, out, alpha, Real(0),
                                               lo, hi);
            const Real* ip = inv_phi_.data() + layout_.base[r];
            const Real* vr = vin + layout_.base[r];
            for (int i = lo; i < hi; ++i) out[i] = vr[i] + out[i] * ip[i];
          }
        }
        if (!any) continue;
        const Real* vd = diffuse ? buf : vin + base;
        for (std::size_t q = 0; q < s_.parts.size(); ++q) {
          const Part& p = s_.parts[q];
          const std::size_t b = p.row_begin(std::size_t(r0), nx), e = p.row_begin(std::size_t(r1), nx);
          for (std::size_t i0 = b; i0 < e; i0 += kBlock)
            reaction_.react(q, i0, std::min(kBlock, e - i0), vd, base, vout, h, t, sc, fail);
        }
      }
    }
  }

  const SimSetup& s_;
  par::ThreadGovernor governor_;
  par::Placement placement_;  // moves the stepping thread off a crowded core when the team leaves cores free
  RowLayout layout_;  // where V (and 1/φ, the link coefficients) live
  cpu::Reaction<Real> reaction_;
  Split split_;  // this rank's rows (all of them on one rank)
  mutable cpu::Sinks<Real> sinks_;
  mutable bool v_gathered_ = true, y_gathered_ = true;  // every rank holds the whole V / states
  int team_ = 1;  // the current step's team
  std::array<Field<Real>, 2> v_;
  Field<Real> tmp_;
  Field<Real> inv_phi_;  // 1/φ on tissue, 0 elsewhere; empty without a phase field
  int cur_ = 0;
  bool fused_ = false, uniform_ = false, phase_field_ = false;
  std::array<double, 3> w_{0, 0, 0};
  kernels::LinkCoeffs<Real> links_;
  std::unique_ptr<DiffusionOperator> op_;
  std::unique_ptr<DiffusionStepper<Real>> stepper_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const SimSetup& s, int threads, bool adapt_threads, comm::Communicator* comm) {
  if (s.time.precision == Precision::f64)
    return std::make_unique<CpuEngine<double>>(s, threads, adapt_threads, comm);
  return std::make_unique<CpuEngine<float>>(s, threads, adapt_threads, comm);
}

}  // namespace hw::tissue
