// Point-wise maths of the diffusion stencils, shared by every backend (AMReX *_K.H style).
//
// Why a header of tiny functions: the reference loops, the cpu kernels and (later) the CUDA
// kernels must agree on every weight to the last bit; keeping the formulas in one place
// that any compiler, nvcc included, can inline is what makes that true.
//
// The second-order operator is a weighted graph Laplacian, (L v)_n = Σ_links w (v_m − v_n):
//   * face links join face neighbours n, n+e_a; w = harmonic mean of σ_aa over the two
//     cells / h_a² (zero if either σ is zero, so a σ = 0 cell insulates);
//   * edge links come in pairs from each cell edge parallel to the third axis, shared by the
//     four cells P = n, Q = n+e_a, R = n+e_b, S = n+e_a+e_b: weight +e on P–S, −e on Q–R,
//     e = mean(σ_ab over P,Q,R,S) / (2 h_a h_b). This is the discrete form of the energy
//     Σ_edges σ_ab g_a g_b (g = gradient on the edge from its four cells), which is what
//     makes the whole operator symmetric and exactly conservative.
// See docs/tissue-numerics.md for the derivation and the boundary treatment.
#pragma once

#if defined(__CUDACC__)
#define HW_HD __host__ __device__
#else
#define HW_HD
#endif

namespace hw::kernels {

// Below this many cells a loop runs on one thread: on small grids (tests, 1D cables) thread
// start-up and barriers cost more than the work, badly so on an oversubscribed machine.
inline constexpr long kMinParallelCells = 32768;

// Face link weight between two cells with conductivities sa, sb along the axis, spacing h.
HW_HD inline double face_weight(double sa, double sb, double h) {
  const double s = sa + sb;
  return s > 0.0 ? 2.0 * sa * sb / (s * h * h) : 0.0;
}

// Edge coefficient e of the four cells around an edge (their σ_ab), spacings ha, hb.
HW_HD inline double edge_weight(double s_p, double s_q, double s_r, double s_s, double ha,
                                double hb) {
  return 0.25 * (s_p + s_q + s_r + s_s) / (2.0 * ha * hb);
}

// Fourth-order central second difference along one axis (seed 001 §2.3, Eq. 5.2 with the
// exact weight 1/12): (−v₋₂ + 16v₋₁ − 30v₀ + 16v₊₁ − v₊₂)/(12h²), times σ by the caller.
template <class Real>
HW_HD inline Real d2_fourth(Real vm2, Real vm1, Real v0, Real vp1, Real vp2, Real inv12h2) {
  return inv12h2 * (Real(16) * (vm1 + vp1) - (vm2 + vp2) - Real(30) * v0);
}

// Mirror index across a no-flux wall on the outer cell faces (cell-centred): −1 ↦ 0, −2 ↦ 1,
// n ↦ n−1, n+1 ↦ n−2. Periodic axes wrap instead.
HW_HD inline int mirror_or_wrap(int m, int n, bool periodic) {
  if (m >= 0 && m < n) return m;
  if (periodic) return ((m % n) + n) % n;
  return m < 0 ? -m - 1 : 2 * n - m - 1;
}

}  // namespace hw::kernels
