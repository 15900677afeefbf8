// Implicit diffusion on the GPU: (Φ − θ·a·L) V⁺ = rhs by Jacobi-preconditioned CG, the
// algorithm of tissue/pcg.hpp over the CUDA kernels of kernels/cuda/diffusion_cg.cuh.
//
// Each operation is one kernel that also returns the reductions the algorithm needs next
// (a few doubles read back by the host); the rhs (backward Euler Φ V, Crank-Nicolson
// (Φ + a/2·L) V) is built in the first.
#pragma once

#include <array>
#include <vector>

#include "device/device.hpp"
#include "kernels/cuda/cg_args.hpp"
#include "tissue/cuda/fields.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/pcg.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cuda {

// The CG kernels of the module (hw_cg_*).
struct CgKernels {
  void *apply = nullptr, *residual = nullptr, *start = nullptr, *update = nullptr, *direction = nullptr,
       *weighted_copy = nullptr;
};

template <class Real>
class DeviceImplicit {
 public:

  DeviceImplicit(gpu::Device& dev, const SimSetup& s, DeviceFields<Real>& f) : dev_(dev), s_(s), f_(f) {
    const RowLayout& layout = f.layout();
    const std::size_t S = layout.size();
    theta_ = s.time.diffusion == DiffusionScheme::backward_euler ? 1.0 : 0.5;
    a_ = s.time.dt / (s.chi * s.cm);
    opt_ = cg_options(s.time.cg_tolerance, sizeof(Real) == 4);
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
    const std::vector<Real> zero(S, Real(0));
    for (auto* b : {&r_, &z_, &p_, &q_, &b_}) *b = f.put(zero, "the CG vectors");
    sums_ = gpu::DeviceBuffer(dev, 2 * sizeof(double), "the CG sums");
  }

  void set_kernels(const CgKernels& k) { k_ = k; }

  // V⁺ in place of v (which holds V on entry); hw::Error when CG does not converge.
  void solve(const gpu::DeviceBuffer& v, gpu::DevicePtr fail) {
    Ops ops(*this, v, fail);
    require_converged(pcg(ops, opt_), opt_);
  }

 private:
  // pcg()'s operations (tissue/pcg.hpp) as kernels on the compute stream.
  class Ops {
   public:
    Ops(DeviceImplicit& d, const gpu::DeviceBuffer& v, gpu::DevicePtr fail) : d_(d), v_(v), fail_(fail) {
      const auto ptr = [](const gpu::DeviceBuffer& b) { return reinterpret_cast<Real*>(b.ptr()); };
      g_.n = d.f_.layout().size();
      g_.w = d.w_.empty() ? nullptr : ptr(d.w_);
      g_.inv_diag = ptr(d.inv_diag_);
      g_.xv = ptr(v);
      g_.r = ptr(d.r_);
      g_.z = ptr(d.z_);
      g_.p = ptr(d.p_);
      g_.q = ptr(d.q_);
      g_.b = ptr(d.b_);
      b_ = ptr(d.b_);
      q_ = ptr(d.q_);
    }
    double rhs_norm2() {
      // rhs: backward Euler Φ V; Crank-Nicolson (Φ + a/2·L) V.
      g_.x = g_.xv;
      g_.y = b_;
      if (d_.theta_ == 1.0) return reduce(d_.k_.weighted_copy, false)[0];
      g_.coef = Real(0.5 * d_.a_);
      return reduce(d_.k_.apply, true)[1];
    }
    void zero_solution() { v_.fill_zero(); }
    double residual() {  // r = b − A x
      g_.coef = Real(-d_.theta_ * d_.a_);
      g_.x = g_.xv;
      g_.y = q_;
      reduce(d_.k_.apply, true);
      return reduce(d_.k_.residual, false)[0];
    }
    double start() { return reduce(d_.k_.start, false)[0]; }
    double apply_direction() {
      g_.x = g_.p;
      g_.y = q_;
      return reduce(d_.k_.apply, true)[0];
    }
    std::array<double, 2> update(double alpha) {
      g_.alpha = Real(alpha);
      return reduce(d_.k_.update, false);
    }
    void direction(double beta) {
      g_.beta = Real(beta);
      void* args[] = {&g_};
      gpu::launch(d_.dev_.compute(), d_.k_.direction, {unsigned((g_.n + 255) / 256), 1, 1}, {256, 1, 1}, args);
    }

   private:
    // Runs one CG kernel with the sums zeroed first, and returns the sums.
    std::array<double, 2> reduce(void* fn, bool stencil) {
      d_.sums_.fill_zero();
      g_.sums = reinterpret_cast<double*>(d_.sums_.ptr());
      if (stencil) {
        hw::cuda::PartArgs<Real> a = d_.f_.geometry_args(fail_);
        d_.f_.launch_over_tissue(d_.dev_.compute(), fn, a, &g_);
      } else {
        void* args[] = {&g_};
        gpu::launch(d_.dev_.compute(), fn, {unsigned((g_.n + 255) / 256), 1, 1}, {256, 1, 1}, args);
      }
      std::array<double, 2> out{};
      d_.sums_.download(out.data(), sizeof out);
      return out;
    }

    DeviceImplicit& d_;
    const gpu::DeviceBuffer& v_;
    gpu::DevicePtr fail_;
    hw::cuda::CgArgs<Real> g_{};
    Real* b_ = nullptr;  // the rhs and A·p, written by the kernels that take them as y
    Real* q_ = nullptr;
  };

  gpu::Device& dev_;
  const SimSetup& s_;
  DeviceFields<Real>& f_;
  CgKernels k_;
  double theta_ = 1, a_ = 0;
  CgOptions opt_;
  gpu::DeviceBuffer inv_diag_, w_, r_, z_, p_, q_, b_, sums_;
};

}  // namespace hw::tissue::cuda
