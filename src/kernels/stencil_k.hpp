// Point-wise bodies of the second-order monodomain stencils, for the cpu row kernels and the
// CUDA kernels alike (AMReX *_K.H style: the caller finds the neighbours, this does the sum).
//
// Why one body: the cpu engine and the GPU must agree on the order of every addition, so a
// GPU run can be compared with the cpu run bit for bit where the arithmetic allows and to
// rounding elsewhere. NVRTC compiles this header as it is (no standard headers here), and
// the cpu loops vectorise over it once inlined.
#pragma once

#include "kernels/diffusion_k.hpp"

namespace hw::kernels {

// Σ_a w_a (v₊ + v₋ − 2v) for σ uniform and diagonal (w_a = σ_aa/h_a², 0 on inactive axes).
// A neighbour outside a no-flux wall is passed as c itself.
template <class Real>
HW_HD inline Real uniform_laplacian(Real wx, Real wy, Real wz, Real c, Real xp, Real xm, Real yp,
                                    Real ym, Real zp, Real zm) {
  return wx * (xp + xm - Real(2) * c) + wy * (yp + ym - Real(2) * c) + wz * (zp + zm - Real(2) * c);
}

// The rows around one (j,k) row, in a RowLayout's storage, each pointing at its cell x = 0:
// V of this row and of the 8 rows around it (a row outside a no-flux wall is this row), and
// the link coefficients (kernels/diffusion_kernels.hpp, LinkCoeffs) this row's cells read
// (a missing row or an empty family is a row of zeros).
template <class Real, class Coef>
struct LinkRows {
  const Real *v0, *vyp, *vym, *vzp, *vzm, *vpp, *vmm, *vmp, *vpm;
  const Coef *cx, *cyp, *cym, *czp, *czm;
  const Coef *exy, *exy_m, *exz, *exz_m, *eyz, *eyz_mm, *eyz_m0, *eyz_0m;
};

// The rows of LinkRows around row (j, k), whose neighbouring rows are jp, jm (y) and kp, km
// (z), −1 outside a no-flux wall. vrow(jj, kk): V's row (this row when jj or kk is −1);
// crow(family, jj, kk): a coefficient row of face[a] or edge[f] (a zero row when missing).
// The cpu rows and the GPU cells both find their neighbourhood here.
template <class Real, class Coef, class VRow, class CRow, class Family>
HW_HD inline LinkRows<Real, Coef> link_rows(VRow vrow, CRow crow, const Family* face, const Family* edge,
                                            int j, int k, int jp, int jm, int kp, int km) {
  return {vrow(j, k),           vrow(jp, k),          vrow(jm, k),          vrow(j, kp),
          vrow(j, km),          vrow(jp, kp),         vrow(jm, km),         vrow(jm, kp),
          vrow(jp, km),         crow(face[0], j, k),  crow(face[1], j, k),  crow(face[1], jm, k),
          crow(face[2], j, k),  crow(face[2], j, km), crow(edge[0], j, k),  crow(edge[0], jm, k),
          crow(edge[1], j, k),  crow(edge[1], j, km), crow(edge[2], j, k),  crow(edge[2], jm, km),
          crow(edge[2], jm, k), crow(edge[2], j, km)};
}

// (L v) at x = i of the row: Σ_faces w (v_m − v) + Σ_edges ±e (v_diag − v). ip, im are the
// x neighbours; mm = 0 switches off the links to a missing −x neighbour (im then is i).
template <class Real, class Coef>
HW_HD inline Real links_laplacian(const LinkRows<Real, Coef>& r, int i, int ip, int im, Real mm) {
  const Real c = r.v0[i];
  Real lv = Real(r.cx[i]) * (r.v0[ip] - c) + mm * Real(r.cx[im]) * (r.v0[im] - c);
  lv += Real(r.cyp[i]) * (r.vyp[i] - c) + Real(r.cym[i]) * (r.vym[i] - c);
  lv += Real(r.czp[i]) * (r.vzp[i] - c) + Real(r.czm[i]) * (r.vzm[i] - c);
  lv += Real(r.exy[i]) * (r.vyp[ip] - c) + mm * Real(r.exy_m[im]) * (r.vym[im] - c) -
        mm * Real(r.exy[im]) * (r.vyp[im] - c) - Real(r.exy_m[i]) * (r.vym[ip] - c);
  lv += Real(r.exz[i]) * (r.vzp[ip] - c) + mm * Real(r.exz_m[im]) * (r.vzm[im] - c) -
        mm * Real(r.exz[im]) * (r.vzp[im] - c) - Real(r.exz_m[i]) * (r.vzm[ip] - c);
  lv += Real(r.eyz[i]) * (r.vpp[i] - c) + Real(r.eyz_mm[i]) * (r.vmm[i] - c) -
        Real(r.eyz_m0[i]) * (r.vmp[i] - c) - Real(r.eyz_0m[i]) * (r.vpm[i] - c);
  return lv;
}

// The explicit diffusion update of one cell: V* = α·L + β·v, and with a phase field
// (inv_phi ≠ 0 given) V* = v + (α·L)·(1/φ).
template <class Real>
HW_HD inline Real diffused(Real lv, Real v, Real alpha, Real beta) {
  return alpha * lv + beta * v;
}
template <class Real>
HW_HD inline Real diffused_phase(Real lv, Real v, Real alpha, Real inv_phi) {
  return v + (alpha * lv) * inv_phi;
}

// |x| ≤ max finite: false for NaN and ±∞ (the NaN policy's test, branch-free).
template <class Real>
HW_HD inline bool finite_value(Real x, Real max_finite) {
  return x <= max_finite && x >= -max_finite;  // two comparisons: on the GPU, |x| took four
}

}  // namespace hw::kernels
