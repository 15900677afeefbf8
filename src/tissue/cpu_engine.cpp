// The cpu engine: one template that runs a step for Real = float or double. (The oracle it is
// tested against is tissue/reference_engine.cpp, which shares none of this.)
//
// Layout (docs/tissue.md): per model region ("part") a compact ascending list of its tissue
// cells' grid indices (none stored when the part is the whole grid), the states other than
// the voltage in structure-of-arrays over those cells, and V in mV only in two fields
// (current and next) that the diffusion stencil reads, stored by rows around the tissue
// (mesh/row_layout.hpp; the whole box on a box). A step
// reads V_cur and writes V_next; the cell states of a block are committed only after its
// V was found finite.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "runtime/cell_kernel.hpp"
#include "kernels/activation_k.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "kernels/cpu/fused_monodomain.hpp"
#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "parallel/governor.hpp"
#include "parallel/team.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "tissue/engine.hpp"
#include "mesh/row_layout.hpp"

namespace hw::tissue {

namespace {

// Cells per reaction block: the CellKernel steps a block at a time, either in place
// (whole-grid parts, Batch::v) or gathered into a scratch batch that stays in L1/L2 and is
// written back once checked.
constexpr std::size_t kBlock = 512;

struct Failure {
  std::atomic<bool> any{false};
  std::size_t cell = std::numeric_limits<std::size_t>::max();
  std::string variable;
};

template <class Real>
class CpuEngine final : public Engine {
 public:
  CpuEngine(const SimSetup& s, int threads, bool adapt)
      : s_(s), governor_(threads > 0 ? threads : par::usable_cores(), adapt) {
    const Grid& g = s.geo.grid;
    // Fields live in compressed rows around the tissue; the oracle keeps the plain box.
    layout_ = row_layout(g, s.geo.mask);
    const std::size_t S = layout_.size();
    v_[0] = Field<Real>(S, Real(0));
    v_[1] = Field<Real>(S, Real(0));
    if (s.time.splitting == Splitting::strang) tmp_ = Field<Real>(S, Real(0));
    parts_.resize(s.parts.size());
    for (std::size_t q = 0; q < s.parts.size(); ++q) {
      const Part& p = s.parts[q];
      auto& st = parts_[q];
      st.y.assign(std::size_t(p.ns - 1) * p.n, Real(0));
      if (p.per_cell)
        st.p.assign(p.pcell.begin(), p.pcell.end());
      else
        st.p.assign(p.params.begin(), p.params.end());
      st.in_place = p.identity && layout_.box && p.v2mV == 1 && !p.per_cell &&
                    p.kernel->external_voltage(p.kv);
      // Storage index of each cell, where it differs from the grid index.
      if (!p.identity && !layout_.box) {
        st.at.resize(p.n);
        for (std::size_t i = 0; i < p.n; ++i) st.at[i] = std::uint32_t(layout_.index(p.cells[i]));
      }
      if (!st.in_place) {
        scratch_states_ = std::max(scratch_states_, std::size_t(p.ns));
        scratch_params_ = std::max(scratch_params_, std::size_t(p.np));
      }
    }
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
        const CgOptions cg = cg_options(s.time.cg_tolerance, sizeof(Real) == 4);
        stepper_ = std::make_unique<DiffusionStepper<Real>>(*op_, s.chi, s.cm, s.time.dt,
                                                            s.time.diffusion, cg, s.phi);
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
    governor_.record(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  void step_team(long n) {
    const double dt = s_.time.dt, t = n * dt;
    active_.clear();
    for (std::size_t q = 0; q < s_.schedules.size(); ++q)
      if (s_.schedules[q].on(n)) active_.push_back(int(q));
    Field<Real>& cur = v_[cur_];
    Field<Real>& next = v_[1 - cur_];
    Failure fail;
    if (s_.time.splitting == Splitting::godunov) {
      // Lie splitting, diffusion first: V* = V + a·L V;  then R(dt) from V* (docs/tissue.md).
      diffuse_react(cur, next, dt, t, fail);
    } else {
      // Strang: R(dt/2), D(dt), R(dt/2).
      pass(cur.data(), tmp_.data(), false, 0.5 * dt, t, fail);
      if (!fail.any) diffuse_react(tmp_, next, 0.5 * dt, t + 0.5 * dt, fail);
    }
    if (fail.any) throw_numerical_error(s_.geo.grid, fail.cell, fail.variable, t, dt);
    if (!track_.empty()) track(cur.data(), next.data(), t);
    cur_ = 1 - cur_;
  }

  void voltage(Field<float>& out) const override {
    const Grid& g = s_.geo.grid;
    out.resize(g.size());
    const Field<Real>& v = v_[cur_];
    for (std::size_t n = 0; n < g.size(); ++n)
      out[n] = is_tissue(&s_.geo.mask, n) ? float(v[layout_.index(n)])
                                          : std::numeric_limits<float>::quiet_NaN();
  }

  double voltage_at(std::size_t n) const override {
    return is_tissue(&s_.geo.mask, n) ? double(v_[cur_][layout_.index(n)])
                                      : std::numeric_limits<double>::quiet_NaN();
  }

  void state(std::size_t q, int k, Field<float>& out) const override {
    const Part& p = s_.parts[q];
    const Real* yk = parts_[q].y.data() + slot(p, k) * p.n;
    for (std::size_t i = 0; i < p.n; ++i) out[p.grid_index(i)] = float(yk[i]);
  }

  double state_at(std::size_t q, int k, std::size_t i) const override {
    const Part& p = s_.parts[q];
    return double(parts_[q].y[slot(p, k) * p.n + i]);
  }

  CanonicalState save() const override {
    CanonicalState st;
    st.bytes = sizeof(Real);
    for (const auto& ps : parts_) st.parts.emplace_back(ps.y.begin(), ps.y.end());
    const Grid& g = s_.geo.grid;
    st.v.reserve(s_.tissue_cells);
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) st.v.push_back(double(v_[cur_][layout_.index(n)]));
    return st;
  }

  void load(const CanonicalState& st) override {
    for (std::size_t q = 0; q < parts_.size(); ++q)
      std::transform(st.parts[q].begin(), st.parts[q].end(), parts_[q].y.begin(),
                     [](double x) { return Real(x); });
    const Grid& g = s_.geo.grid;
    std::size_t i = 0;
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) v_[cur_][layout_.index(n)] = Real(st.v[i++]);
  }

  // The activation/APD90 maps follow V here, by the update the GPU kernel runs
  // (kernels/activation_k.hpp), over the tissue cells in parallel: the run loop then needs no
  // copy of the whole grid's V per step.
  bool attach_activation(const ActivationMaps& m) override {
    const Grid& g = s_.geo.grid;
    if (m.act.size() != g.size() ||
        (m.with_apd && (m.apd.size() != g.size() || m.v_rest.size() != g.size() || m.v_peak.size() != g.size())))
      throw Error("activation maps: arrays of the wrong size for this grid");
    maps_ = m;
    track_.clear();
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) track_.push_back(std::uint32_t(layout_.index(n)));
    const std::size_t T = track_.size();
    act_.assign(T, 0);
    apd_.assign(m.with_apd ? T : 0, 0);
    v_rest_.assign(apd_.size(), 0);
    v_peak_.assign(apd_.size(), 0);
    for_tissue([&](std::size_t k, std::size_t n) {
      act_[k] = m.act[n];
      if (m.with_apd) {
        apd_[k] = m.apd[n];
        v_rest_[k] = m.v_rest[n];
        v_peak_[k] = m.v_peak[n];
      }
    });
    return true;
  }

  void read_activation(ActivationMaps& m) const override {
    m = maps_;
    for_tissue([&](std::size_t k, std::size_t n) {
      m.act[n] = act_[k];
      if (m.with_apd) {
        m.apd[n] = apd_[k];
        m.v_rest[n] = v_rest_[k];
        m.v_peak[n] = v_peak_[k];
      }
    });
  }

  EngineInfo describe() const override {
    EngineInfo info;
    info.backend = fmt::format("cpu ({}, {} thread{}{})", sizeof(Real) == 8 ? "double" : "float",
                               governor_.max(), governor_.max() > 1 ? "s" : "",
                               governor_.adapts() ? ", fewer while the machine is busy" : "");
    info.threads = governor_.mean_threads();
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
  struct PartState {
    std::vector<Real> y;  // (ns − 1)·n: every state but V, state-major
    std::vector<Real> p;  // np (uniform) or np·n (per cell)
    std::vector<std::uint32_t> at;  // storage index of each cell (compressed layout only)
    // The kernel steps y and the next V field in place (Batch::v): the part is the whole
    // grid, V is in mV, parameters are shared and the kernel supports it.
    bool in_place = false;
  };
  struct Scratch {
    std::vector<Real> y, p;
  };

  static std::size_t slot(const Part& p, int k) { return std::size_t(k < p.kv ? k : k - 1); }

  // dst = R(h)(D(dt)(src)): one diffusion step of dt, then the reaction over h.
  void diffuse_react(Field<Real>& src, Field<Real>& dst, double h, double t, Failure& fail) {
    const double alpha = s_.time.dt / (s_.chi * s_.cm);
    if (fused_) {
      pass(src.data(), dst.data(), true, h, t, fail);
      return;
    }
    if (stepper_) {
      // Implicit, Φ-weighted with a phase field (diffusion_stepper.hpp).
      dst.vec() = src.vec();
      stepper_->step(dst);
    } else if (!inv_phi_.empty()) {
      // Phase field: V* = V + a·(L_{φσ} V)/φ on tissue (1/φ = 0 off tissue: V* = V there).
      op_->apply(src, dst, Real(alpha), Real(0));
      const long N = long(src.size());
      const Real* ip = inv_phi_.data();
      const Real* sv = src.data();
      Real* dv = dst.data();
#pragma omp parallel for num_threads(team_) if (N >= long(kernels::kMinParallelCells))
      for (long n = 0; n < N; ++n) dv[n] = sv[n] + dv[n] * ip[n];
    } else {
      // V* = V + a·L V
      op_->apply(src, dst, Real(alpha), Real(1));
    }
    pass(dst.data(), dst.data(), false, h, t, fail);
  }

  // f(k, n) for the k-th tissue cell, grid index n.
  template <class F>
  void for_tissue(F&& f) const {
    const Grid& g = s_.geo.grid;
    for (std::size_t n = 0, k = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) f(k++, n);
  }

  // The maps' update for the step from t (V in a) to t + dt (V in b).
  void track(const Real* a, const Real* b, double t) {
    const long T = long(track_.size());
    const float thr = maps_.threshold;
    const double dt = s_.time.dt;
    const std::uint32_t* at = track_.data();
    float* act = act_.data();
    if (!maps_.with_apd) {
#pragma omp parallel for schedule(static) num_threads(team_) if (T >= long(kernels::kMinParallelCells))
      for (long k = 0; k < T; ++k) {
        if (act[k] == act[k]) continue;
        float none = 0;
        io::activation_update(float(a[at[k]]), float(b[at[k]]), thr, t, dt, false, act[k], none, none, none);
      }
      return;
    }
    float *apd = apd_.data(), *vr = v_rest_.data(), *vp = v_peak_.data();
#pragma omp parallel for schedule(static) num_threads(team_) if (T >= long(kernels::kMinParallelCells))
    for (long k = 0; k < T; ++k) {
      if (act[k] == act[k] && apd[k] == apd[k]) continue;
      io::activation_update(float(a[at[k]]), float(b[at[k]]), thr, t, dt, true, act[k], apd[k], vr[k], vp[k]);
    }
  }

  // For every group of rows: (fused) V* = vin + a·L vin into a row buffer (or straight
  // into vout), else V* = vin; then each tissue cell of the group: V* += h·I_stim/(χCm),
  // the cell model over h in ode_substeps sub-steps, V checked finite, states and vout
  // committed.
  void pass(const Real* vin, Real* vout, bool diffuse, double h, double t, Failure& fail) {
    const Grid& g = s_.geo.grid;
    const int nx = g.nx(), ny = g.ny();
    const long rows = long(ny) * g.nz();
    const Real alpha = Real(s_.time.dt / (s_.chi * s_.cm));
    const bool par = long(g.size()) >= kernels::kMinParallelCells;
    // Short rows are grouped, m rows of up to one block of cells, so the per-block costs of
    // the cell step are paid per kBlock cells, not per 64- or 128-cell row of a 3D grid.
    const long m = std::max<long>(1, long(kBlock) / nx);
    const long groups = (rows + m - 1) / m;
    // A single whole-grid part stepped in place: diffuse straight into the next V field.
    const bool direct = diffuse && s_.parts.size() == 1 && parts_[0].in_place;
#pragma omp parallel num_threads(team_) if (par)
    {
      const kernels::cpu::FlushDenormals ftz(true);
      // The group's diffused V, indexed like storage from the group's first stored cell; nx
      // cells of slack in front, where rows of a compressed layout start before it in x.
      std::vector<Real> row(diffuse && !direct ? std::size_t(m + 1) * nx : 0);
      Scratch sc;  // only parts not stepped in place use it
      sc.y.resize(scratch_states_ * kBlock);
      sc.p.resize(scratch_params_ * kBlock);
      // Groups of 8: contiguous for the stencil's reuse of rows j±1, dynamic because rows
      // of an irregular geometry hold very different amounts of tissue.
#pragma omp for schedule(dynamic, 8)
      for (long grp = 0; grp < groups; ++grp) {
        const long r0 = grp * m, r1 = std::min(rows, r0 + m);
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
            react(q, i0, std::min(kBlock, e - i0), vd, base, vout, h, t, sc, fail);
        }
      }
    }
  }

  // react() for an in_place part: V* goes straight into the next V field (a copy only when
  // it is not there already), the stimulus is added there, and the kernel steps that V and
  // the part's own state arrays where they lie. A block with a non-finite V is not swapped
  // in (V_next never becomes current on failure), but its other states have advanced.
  void react_in_place(std::size_t q, std::size_t i0, std::size_t cnt, const Real* vd,
                      std::size_t base, Real* vout, double h, double t, Failure& fail) {
    const Part& p = s_.parts[q];
    PartState& st = parts_[q];
    Real* v = vout + i0;  // whole-grid part: compact index = grid index
    const Real* vs = vd + (i0 - base);
    if (vs != v) std::copy(vs, vs + cnt, v);
    add_stimuli(p, i0, cnt, h, v);
    cell::Batch<Real> batch{cnt, p.n, st.y.data() + i0, st.p.data(), false, v, p.kv};
    const int sub = s_.time.ode_substeps;
    p.kernel->step(s_.integrator, Real(t / p.t2ms), Real(h / sub / p.t2ms), sub, batch);
    std::size_t bad = 0;
    for (std::size_t c = 0; c < cnt; ++c) bad += !(std::abs(v[c]) <= std::numeric_limits<Real>::max());
    if (!bad) return;
    for (std::size_t c = 0; c < cnt; ++c) {
      if (std::isfinite(v[c])) continue;
      record_failure(fail, i0 + c,
                     failing_variable(p, [&](int k) { return st.y[slot(p, k) * p.n + i0 + c]; }));
      return;
    }
  }

  // V[c] += h·I_stim/(χ Cm) (model units) for the block's cells i0 + c under an active stimulus.
  void add_stimuli(const Part& p, std::size_t i0, std::size_t cnt, double h, Real* v) const {
    for (int s : active_) {
      const auto& list = p.stim[s];
      if (list.empty()) continue;
      const Real add = Real(h * p.stim_rate[s]);
      for (auto it = std::lower_bound(list.begin(), list.end(), std::uint32_t(i0));
           it != list.end() && *it < i0 + cnt; ++it)
        v[*it - i0] += add;
    }
  }

  static void record_failure(Failure& fail, std::size_t cell, const std::string& var) {
#pragma omp critical(hw_tissue_failure)
    {
      if (cell < fail.cell) {
        fail.cell = cell;
        fail.variable = var;
      }
      fail.any = true;
    }
  }

  void react(std::size_t q, std::size_t i0, std::size_t cnt, const Real* vd, std::size_t base,
             Real* vout, double h, double t, Scratch& sc, Failure& fail) {
    const Part& p = s_.parts[q];
    PartState& st = parts_[q];
    if (st.in_place) return react_in_place(q, i0, cnt, vd, base, vout, h, t, fail);
    const std::size_t n = p.n, B = kBlock;
    Real* y = sc.y.data();
    Real* yv = y + std::size_t(p.kv) * B;
    const Real to_model = Real(1.0 / p.v2mV), to_mv = Real(p.v2mV);
    const std::uint32_t* at = st.at.empty() ? p.cells.data() : st.at.data();  // storage index
    // Gather: V from the diffused row (mV → model units), the other states from the part.
    // A part that is the whole grid has contiguous cells: plain loops that vectorise.
    if (p.identity) {
      const Real* vrow = vd + (i0 - base);
      for (std::size_t c = 0; c < cnt; ++c) yv[c] = vrow[c] * to_model;
    } else {
      for (std::size_t c = 0; c < cnt; ++c) yv[c] = vd[at[i0 + c] - base] * to_model;
    }
    for (int k = 0; k < p.ns; ++k) {
      if (k == p.kv) continue;
      const Real* src = st.y.data() + slot(p, k) * n + i0;
      std::copy(src, src + cnt, y + std::size_t(k) * B);
    }
    add_stimuli(p, i0, cnt, h, yv);
    const Real* par = st.p.data();
    if (p.per_cell) {
      for (int k = 0; k < p.np; ++k)
        std::copy(st.p.data() + std::size_t(k) * n + i0, st.p.data() + std::size_t(k) * n + i0 + cnt,
                  sc.p.data() + std::size_t(k) * B);
      par = sc.p.data();
    }
    cell::Batch<Real> batch{cnt, B, y, par, p.per_cell};
    const int sub = s_.time.ode_substeps;
    p.kernel->step(s_.integrator, Real(t / p.t2ms), Real(h / sub / p.t2ms), sub, batch);
    // Check before committing: a block with a non-finite V keeps its previous states.
    // |V| <= max is false for NaN and ±inf; a count, not a branch, so the loop vectorises.
    std::size_t bad = 0;
    for (std::size_t c = 0; c < cnt; ++c)
      bad += !(std::abs(yv[c]) <= std::numeric_limits<Real>::max());
    if (bad) {
      for (std::size_t c = 0; c < cnt; ++c) {
        if (std::isfinite(yv[c])) continue;
        record_failure(fail, p.grid_index(i0 + c), failing_variable(p, [&](int k) { return y[std::size_t(k) * B + c]; }));
        break;
      }
      return;
    }
    for (int k = 0; k < p.ns; ++k) {
      if (k == p.kv) continue;
      const Real* src = y + std::size_t(k) * B;
      std::copy(src, src + cnt, st.y.data() + slot(p, k) * n + i0);
    }
    if (p.identity) {
      Real* out = vout + i0;
      for (std::size_t c = 0; c < cnt; ++c) out[c] = yv[c] * to_mv;
    } else {
      for (std::size_t c = 0; c < cnt; ++c) vout[at[i0 + c]] = yv[c] * to_mv;
    }
  }

  const SimSetup& s_;
  par::ThreadGovernor governor_;
  int team_ = 1;  // the current step's team
  std::array<Field<Real>, 2> v_;
  Field<Real> tmp_;
  Field<Real> inv_phi_;  // 1/φ on tissue, 0 elsewhere; empty without a phase field
  int cur_ = 0;
  std::vector<PartState> parts_;
  std::vector<int> active_;
  bool fused_ = false, uniform_ = false, phase_field_ = false;
  RowLayout layout_;  // where V (and 1/φ, the link coefficients) live
  // Activation/APD90 maps once attached: the maps as handed over (grid-sized), and the
  // working copies over the tissue cells, track_[k] being the k-th one's storage index.
  ActivationMaps maps_;
  std::vector<std::uint32_t> track_;
  std::vector<float> act_, apd_, v_rest_, v_peak_;
  std::size_t scratch_states_ = 0, scratch_params_ = 0;  // per cell of a scratch block
  std::array<double, 3> w_{0, 0, 0};
  kernels::LinkCoeffs<Real> links_;
  std::unique_ptr<DiffusionOperator> op_;
  std::unique_ptr<DiffusionStepper<Real>> stepper_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const SimSetup& s, int threads, bool adapt_threads) {
  if (s.time.precision == Precision::f64)
    return std::make_unique<CpuEngine<double>>(s, threads, adapt_threads);
  return std::make_unique<CpuEngine<float>>(s, threads, adapt_threads);
}

}  // namespace hw::tissue
