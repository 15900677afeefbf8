// Implicit diffusion on the GPU: (Φ − θ·a·L) V⁺ = rhs by Jacobi-preconditioned CG, the
// algorithm of tissue/pcg.hpp over the CUDA kernels of kernels/cuda/diffusion_cg.cuh.
//
// The loop runs on the device: the kernels keep α, β, the sums and the stopping test in
// device memory (hw::cuda::CgScalars), and the host reads them once per chunk of queued
// iterations instead of twice per iteration (docs/benchmarks.md, "Implicit diffusion on
// the GPU"). The rhs (backward Euler Φ V, Crank-Nicolson (Φ + a/2·L) V) and the first
// residual are made in one pass (hw_cg_begin).
//
// The first guess (a warm start): the solve is for the increment d = V⁺ − V, started from
// the last two solves' increments extrapolated in time, not from zero. A front moves a small
// part of a cell per step, so the increment changes little from one step to the next: on the
// N-version slab at 0.05 mm (Crank-Nicolson) the iterations a step fell from 4.6 to 2.6 in
// float and from 7.0 to 4.8 in double. The stopping test, ‖b − A V⁺‖ ≤ tol·‖b‖, is the same
// whatever the guess. A run that loads a state starts again from a zero guess, so a
// restarted run repeats itself bit for bit and agrees with the run it was saved from within
// the CG tolerance.
//
// The sums are added in block order (hw_cg_sum, kernels/cuda/block_sum.cuh), so a run
// repeats itself bit for bit, and every rank of a split run, solving the whole field, gets
// the same bits.
//
// Two ways to run a solve, with the same kernels and bits: queued by the host in chunks of
// iterations, then a read of the scalars (solve() without a graph: each step waits for the
// host); or added to the engine's CUDA graph of a batch of steps, its iterations the body
// of a loop on the device that the kernels end themselves (KernelGraph::begin_loop). The
// graph needs no host between iterations or steps: on the N-version slab at 0.05 mm (H100) a
// Crank-Nicolson step in float took 0.559 ms with the host queuing the iterations and 0.518
// ms in graphs, and less than that apart again with the host's cores all busy
// (docs/benchmarks.md, "Implicit steps in CUDA graphs"). A
// solve that does not converge, either way, leaves its numbers in the record and stops the
// steps after it, and the engine reports it after the batch (report_failure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/device.hpp"
#include "kernels/cuda/cg_args.hpp"
#include "tissue/cuda/fields.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/pcg.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cuda {

// The CG kernels of the module (hw_cg_*).
struct CgKernels {
  void *begin = nullptr, *apply = nullptr, *update = nullptr, *direction = nullptr, *finish = nullptr, *sum = nullptr;
};

template <class Real>
class DeviceImplicit {
 public:

  DeviceImplicit(gpu::Device& dev, const SimSetup& s, DeviceFields<Real>& f) : dev_(dev), f_(f) {
    const RowLayout& layout = f.layout();
    const std::size_t S = layout.size();
    theta_ = s.time.diffusion == DiffusionScheme::backward_euler ? 1.0 : 0.5;
    a_ = s.time.dt / (s.chi * s.cm);
    dt_ = s.time.dt;
    opt_ = cg_options(s.time.cg_tolerance, sizeof(Real) == 4, s.time.cg_max_iterations);
    // diag(Φ − θ·a·L) = w − θ·a·L_nn from the cpu operator's diagonal (w = φ on tissue, 1
    // elsewhere), as the cpu stepper builds its preconditioner.
    const auto op = make_diffusion_operator(diffusion_setup(s, layout), Backend::cpu);
    const std::vector<double> w = s.phi.empty() ? std::vector<double>(S, 1.0) : phase_weights(s.phi, s.geo.mask, layout);
    std::vector<Real> inv(S), wr(S);
    for (std::size_t i = 0; i < S; ++i) {
      inv[i] = Real(1.0 / (w[i] - theta_ * a_ * op->diagonal()[i]));
      wr[i] = Real(w[i]);
    }
    inv_diag_ = f.put(inv, "the CG preconditioner");
    if (!s.phi.empty()) w_ = f.put(wr, "the phase field's weights");
    // Zero, and zero they stay on stored cells that are not tissue: the stencil kernels
    // write tissue cells only, and the element-wise ones keep zeros zero.
    const std::vector<Real> zero(S, Real(0));
    for (auto* b : {&r_, &z_, &p_, &q_}) *b = f.put(zero, "the CG vectors");
    for (auto& b : increments_) b = f.put(zero, "the CG's increments");
    scalars_ = gpu::DeviceBuffer(dev, sizeof(hw::cuda::CgScalars), "the CG scalars");
    // Room for three sums' partials from every block of the largest launch.
    tissue_blocks_ = f.tissue_launch_blocks(f.columns());
    capacity_ = std::max(tissue_blocks_, elementwise_blocks());
    partials_ = gpu::DeviceBuffer(dev, 3 * capacity_ * sizeof(double), "the CG's partial sums");
    hw::cuda::CgRecord rec{};
    rec.failed_step = ~0ull;
    record_ = gpu::DeviceBuffer(dev, sizeof rec, "the CG's record");
    record_.upload(&rec, sizeof rec);
  }

  void set_kernels(const CgKernels& k) { k_ = k; }

  // V⁺ = V + d into out from V in v (two different fields), the step's time at `when` on the
  // device. Without a graph: queued, with a wait for each chunk of iterations; into a graph:
  // added to it, its iterations a loop on the device (KernelGraph::begin_loop). A solve that
  // does not converge sets the failure flag (kCgFailed) and writes no V⁺; the engine then
  // calls report_failure. After a failed step (the flag set) the solve does nothing.
  void solve(const gpu::DeviceBuffer& v, const gpu::DeviceBuffer& out, gpu::DevicePtr fail,
             const hw::cuda::PassTime<Real>* when, gpu::KernelGraph* into = nullptr) {
    hw::cuda::CgArgs<Real> g = args(v, out, fail, when);
    if (into)
      add_to(*into, g, fail);
    else
      run(g, fail);
    history_ = std::min(history_ + 1, 2);
    head_ = (head_ + 1) % 3;  // this solve's increment is now the last one
  }

  // Whether the next solves can go into a graph: the driver has loops in graphs, and the
  // first guess's coefficients no longer change from solve to solve (they are in the graph).
  bool graph_ready() const { return gpu::KernelGraph::loops_supported() && (history_ == 2 || !guess_); }
  // The ring's place, which a graph of solves is built for (its increments' buffers are in it).
  int ring_head() const { return head_; }
  // A graph of `solves` solves (built from this ring_head()) ran again: the ring moves as if
  // they had been queued.
  void replayed(long solves) {
    head_ = int((head_ + solves) % 3);
    history_ = int(std::min<long>(history_ + solves, 2));
  }

  // A solve did not converge (the failure flag holds kCgFailed): hw::Error with its step's
  // time, iterations and residual.
  [[noreturn]] void report_failure() {
    hw::cuda::CgRecord rec{};
    record_.download(&rec, sizeof rec);
    const long step = long(rec.failed_step);
    CgResult r;
    r.iterations = rec.failed_iterations;
    r.rel_residual = rec.failed_rel_residual;
    rec.failed_step = ~0ull;
    record_.upload(&rec, sizeof rec);
    throw_not_converged(r, step);
  }

  // Forgets the increments of the solves before (a state was loaded): the next solve starts
  // from a zero guess.
  void forget_history() { history_ = 0; }

  // Mean CG iterations per solve so far (0 before the first), from the record the solves
  // keep on the device.
  double mean_iterations() const {
    hw::cuda::CgRecord rec{};
    record_.download(&rec, sizeof rec);
    return rec.solves > 0 ? double(rec.iterations) / double(rec.solves) : 0.0;
  }

 private:
  // The arguments of a solve from V in v into out.
  hw::cuda::CgArgs<Real> args(const gpu::DeviceBuffer& v, const gpu::DeviceBuffer& out, gpu::DevicePtr fail,
                              const hw::cuda::PassTime<Real>* when) {
    const auto ptr = [](const gpu::DeviceBuffer& b) { return reinterpret_cast<Real*>(b.ptr()); };
    hw::cuda::CgArgs<Real> g{};
    g.coef = Real(-theta_ * a_);
    g.rhs_coef = Real((1 - theta_) * a_);
    g.a = Real(a_);
    g.n = f_.layout().size();
    g.w = w_.empty() ? nullptr : ptr(w_);
    g.inv_diag = ptr(inv_diag_);
    g.v = ptr(v);
    g.xv = ptr(out);
    // increments_[head_] is solved for; the two before it in the ring are the last solves'.
    g.d = ptr(increments_[head_]);
    g.prev = ptr(increments_[(head_ + 2) % 3]);
    g.prev2 = ptr(increments_[(head_ + 1) % 3]);
    const auto [c1, c2] = guess_coefficients();
    g.c1 = Real(c1);
    g.c2 = Real(c2);
    g.r = ptr(r_);
    g.z = ptr(z_);
    g.p = ptr(p_);
    g.q = ptr(q_);
    g.sc = reinterpret_cast<hw::cuda::CgScalars*>(scalars_.ptr());
    g.partials = reinterpret_cast<double*>(partials_.ptr());
    g.capacity = capacity_;
    g.tol2 = opt_.rel_tol * opt_.rel_tol;
    g.max_iter = opt_.max_iter;
    g.fail = reinterpret_cast<unsigned long long*>(fail);
    g.when = when;
    g.record = reinterpret_cast<hw::cuda::CgRecord*>(record_.ptr());
    return g;
  }

  // pcg() of tissue/pcg.hpp with its loop on the device: the host queues the set-up and
  // then iterations in chunks, reading the scalars back once per chunk. The first chunk is
  // as long as the last solve took (steps in a row need about as many), later ones a
  // quarter of that; iterations queued past convergence return at once.
  void run(hw::cuda::CgArgs<Real>& g, gpu::DevicePtr fail) {
    stencil(k_.begin, g, fail);
    sum(0, tissue_blocks_, g);
    hw::cuda::CgScalars sc{};
    int queued = 0;
    // One more than the last solve took: a solve that needs as many stops in the first chunk.
    const int first = std::max(4, last_iterations_ + 1);
    while (true) {
      const int chunk = std::min(opt_.max_iter - queued, queued == 0 ? first : std::max(2, first / 4));
      for (int i = 0; i < chunk; ++i, ++queued) iteration(g, fail);
      scalars_.download(&sc, sizeof sc);
      if (sc.done || queued >= opt_.max_iter) break;
    }
    elementwise(k_.finish, g);
    last_iterations_ = sc.iterations;
  }

  // One iteration: apply, its sum, update, its sum, direction.
  void iteration(hw::cuda::CgArgs<Real>& g, gpu::DevicePtr fail, gpu::KernelGraph* into = nullptr) {
    stencil(k_.apply, g, fail, into);
    sum(1, tissue_blocks_, g, into);
    elementwise(k_.update, g, into);
    sum(2, elementwise_blocks(), g, into);
    elementwise(k_.direction, g, into);
  }

  // The solve as nodes of a graph: the set-up, a loop over the iterations that the kernels
  // end, the last launch.
  void add_to(gpu::KernelGraph& into, hw::cuda::CgArgs<Real>& g, gpu::DevicePtr fail) {
    g.loop = into.loop_handle(dev_);
    stencil(k_.begin, g, fail, &into);
    sum(0, tissue_blocks_, g, &into);  // sets the loop's condition: 0 when no iteration is needed
    into.begin_loop(dev_, g.loop);
    iteration(g, fail, &into);
    into.end_loop();
    elementwise(k_.finish, g, &into);
  }

  // require_converged's words, with the step and its time.
  [[noreturn]] void throw_not_converged(const CgResult& r, long step) const {
    try {
      require_converged(r, opt_);
    } catch (const Error& e) {
      throw Error(fmt::format("{} at t = {:g} ms (step {}); try a smaller dt, a looser time.cg_tolerance or a larger "
                              "time.cg_max_iterations", e.what(), double(step) * dt_, step));
    }
    throw Error(fmt::format("diffusion: CG did not converge at t = {:g} ms (step {})", double(step) * dt_, step));
  }

  // d₀ = c1·prev + c2·prev2: 2·last − the one before, the increments extrapolated in time
  // (after one solve since a load, the last one; none before). HEARTWAVE_CG_GUESS=none starts
  // every solve from zero, as before the guess (the measurements in docs/benchmarks.md, and
  // CudaTissue's comparison); the last increment alone lost to the extrapolation there.
  std::pair<double, double> guess_coefficients() const {
    if (!guess_ || history_ == 0) return {0.0, 0.0};
    if (history_ == 1) return {1.0, 0.0};
    return {2.0, -1.0};
  }

  static bool guess_from_environment() {
    const char* e = std::getenv("HEARTWAVE_CG_GUESS");
    const std::string m = e ? e : "";
    if (m == "none") return false;
    if (m.empty() || m == "extrapolate") return true;
    throw Error(fmt::format("HEARTWAVE_CG_GUESS={}: not a first guess of the CG; say extrapolate (the default) or none", m));
  }

  void stencil(void* fn, hw::cuda::CgArgs<Real>& g, gpu::DevicePtr fail, gpu::KernelGraph* into = nullptr) {
    hw::cuda::PartArgs<Real> a = f_.geometry_args(fail);
    f_.launch_over_tissue(dev_.compute(), fn, a, &g, into, f_.columns());
  }
  // A grid of at most 8 blocks of 256 per SM (a full SM), striding over the storage: one
  // partial sum per block and sum, for hw_cg_sum to add.
  void elementwise(void* fn, hw::cuda::CgArgs<Real>& g, gpu::KernelGraph* into = nullptr) {
    void* args[] = {&g};
    launch(fn, {unsigned(elementwise_blocks()), 1, 1}, {256, 1, 1}, args, into);
  }
  // The sums of the launch before, over its `blocks` blocks, in block order (hw_cg_sum):
  // one block of 1024 threads.
  void sum(int which, unsigned long long blocks, hw::cuda::CgArgs<Real>& g, gpu::KernelGraph* into = nullptr) {
    g.sum = which;
    g.blocks = blocks;
    void* args[] = {&g};
    launch(k_.sum, {1, 1, 1}, {1024, 1, 1}, args, into);
  }
  void launch(void* fn, gpu::Dim3 grid, gpu::Dim3 block, void** args, gpu::KernelGraph* into) {
    if (into)
      into->add(fn, grid, block, args);
    else
      gpu::launch(dev_.compute(), fn, grid, block, args);
  }
  unsigned long long elementwise_blocks() const {
    const unsigned long long most = 8ull * unsigned(std::max(1, dev_.info().multiprocessors));
    return std::min<unsigned long long>((f_.layout().size() + 255) / 256, most);
  }

  gpu::Device& dev_;
  DeviceFields<Real>& f_;
  CgKernels k_;
  double theta_ = 1, a_ = 0, dt_ = 0;
  CgOptions opt_;
  gpu::DeviceBuffer inv_diag_, w_, r_, z_, p_, q_, scalars_, record_;
  gpu::DeviceBuffer partials_;
  unsigned long long tissue_blocks_ = 0, capacity_ = 0;  // a stencil launch's blocks; partials' room
  gpu::DeviceBuffer increments_[3];  // a ring: this solve's, the last one's, the one before
  bool guess_ = guess_from_environment();
  int head_ = 0, history_ = 0;       // this solve's slot; how many increments are known (≤ 2)
  int last_iterations_ = 0;
};

}  // namespace hw::tissue::cuda
