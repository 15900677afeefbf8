// cpu diffusion kernels: OpenMP over (j,k) rows, a branch-free x loop over interior cells
// (the compiler vectorises it), the two x-boundary cells done apart with explicit indices.
//
// Rows that fall outside the grid on a no-flux axis are replaced by the cell's own row for
// values and by a row of zeros for coefficients, so the interior loop needs no tests. The
// result must match the reference kernels to rounding (tests/unit/test_tissue_diffusion.cpp).
#include <cstdint>

#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "kernels/diffusion_links.hpp"

namespace hw::kernels {

LinkCoeffs build_link_coeffs(const tissue::Grid& g, const tissue::Conductivity& sigma,
                             const tissue::Mask* mask) {
  LinkCoeffs c;
  const bool edges = sigma.has_off_diagonal();
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) c.face[a].assign(g.size(), 0.0);
  if (edges)
    for (int f = 0; f < 3; ++f)
      if (g.active(kEdgeAxes[f][0]) && g.active(kEdgeAxes[f][1])) c.edge[f].assign(g.size(), 0.0);
  for_each_link(
      g, sigma, mask, edges, [&](std::size_t n, std::size_t, int a, double w) { c.face[a][n] = w; },
      [&](std::size_t p, std::size_t, std::size_t, std::size_t, int f, double e) {
        c.edge[f][p] = e;
      });
  c.zero_row.assign(static_cast<std::size_t>(g.nx()) + 1, 0.0);
  return c;
}

namespace cpu {

template <class Real>
void diffusion2_uniform_apply(const tissue::Grid& g, std::array<double, 3> w, const Real* v,
                              Real* out, Real alpha, Real beta) {
  const int nx = g.nx(), ny = g.ny(), nz = g.nz();
  const Real wx = Real(w[0]), wy = Real(w[1]), wz = Real(w[2]);
  const bool perx = g.bc[0] == tissue::Boundary::periodic;
#pragma omp parallel for collapse(2) schedule(static) if (long(g.size()) >= kMinParallelCells)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      const std::size_t base = g.index(0, j, k);
      const Real* v0 = v + base;
      // Outside a no-flux wall the neighbour is the cell itself: zero flux.
      const int jp = g.neighbour(1, j, 1), jm = g.neighbour(1, j, -1);
      const int kp = g.neighbour(2, k, 1), km = g.neighbour(2, k, -1);
      const Real* vyp = jp < 0 ? v0 : v + g.index(0, jp, k);
      const Real* vym = jm < 0 ? v0 : v + g.index(0, jm, k);
      const Real* vzp = kp < 0 ? v0 : v + g.index(0, j, kp);
      const Real* vzm = km < 0 ? v0 : v + g.index(0, j, km);
      Real* o = out + base;
      auto cell = [&](int i, int ip, int im) {
        const Real c = v0[i];
        // L v = Σ_a w_a (v₊ + v₋ − 2v)
        const Real lv = wx * (v0[ip] + v0[im] - Real(2) * c) +
                        wy * (vyp[i] + vym[i] - Real(2) * c) + wz * (vzp[i] + vzm[i] - Real(2) * c);
        o[i] = alpha * lv + beta * c;
      };
      if (nx == 1) {
        cell(0, 0, 0);
        continue;
      }
      cell(0, 1, perx ? nx - 1 : 0);
#pragma omp simd
      for (int i = 1; i < nx - 1; ++i) cell(i, i + 1, i - 1);
      cell(nx - 1, perx ? 0 : nx - 1, nx - 2);
    }
}

template <class Real>
void diffusion2_links_apply(const tissue::Grid& g, const LinkCoeffs& cf, const Real* v, Real* out,
                            Real alpha, Real beta) {
  const int nx = g.nx(), ny = g.ny(), nz = g.nz();
  const bool perx = g.bc[0] == tissue::Boundary::periodic;
  const double* zero = cf.zero_row.data();
#pragma omp parallel for collapse(2) schedule(static) if (long(g.size()) >= kMinParallelCells)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      const std::size_t base = g.index(0, j, k);
      const Real* v0 = v + base;
      const int jp = g.neighbour(1, j, 1), jm = g.neighbour(1, j, -1);
      const int kp = g.neighbour(2, k, 1), km = g.neighbour(2, k, -1);
      auto vrow = [&](int jj, int kk) -> const Real* {
        return (jj < 0 || kk < 0) ? v0 : v + g.index(0, jj, kk);
      };
      auto crow = [&](const std::vector<double>& f, int jj, int kk) -> const double* {
        return (f.empty() || jj < 0 || kk < 0) ? zero : f.data() + g.index(0, jj, kk);
      };
      const Real *vyp = vrow(jp, k), *vym = vrow(jm, k), *vzp = vrow(j, kp), *vzm = vrow(j, km);
      const Real *vpp = vrow(jp, kp), *vmm = vrow(jm, km), *vmp = vrow(jm, kp),
                 *vpm = vrow(jp, km);
      const double* cx = crow(cf.face[0], j, k);
      const double *cyp = crow(cf.face[1], j, k), *cym = crow(cf.face[1], jm, k);
      const double *czp = crow(cf.face[2], j, k), *czm = crow(cf.face[2], j, km);
      const double *exy = crow(cf.edge[0], j, k), *exy_m = crow(cf.edge[0], jm, k);
      const double *exz = crow(cf.edge[1], j, k), *exz_m = crow(cf.edge[1], j, km);
      const double *eyz = crow(cf.edge[2], j, k), *eyz_mm = crow(cf.edge[2], jm, km),
                   *eyz_m0 = crow(cf.edge[2], jm, k), *eyz_0m = crow(cf.edge[2], j, km);
      Real* o = out + base;
      // mm = 0 switches off the links to a missing −x neighbour (im then points at i).
      auto cell = [&](int i, int ip, int im, Real mm) {
        const Real c = v0[i];
        Real lv = Real(cx[i]) * (v0[ip] - c) + mm * Real(cx[im]) * (v0[im] - c);
        lv += Real(cyp[i]) * (vyp[i] - c) + Real(cym[i]) * (vym[i] - c);
        lv += Real(czp[i]) * (vzp[i] - c) + Real(czm[i]) * (vzm[i] - c);
        // xy edges: +e on the P–S diagonal, −e on the Q–R anti-diagonal.
        lv += Real(exy[i]) * (vyp[ip] - c) + mm * Real(exy_m[im]) * (vym[im] - c) -
              mm * Real(exy[im]) * (vyp[im] - c) - Real(exy_m[i]) * (vym[ip] - c);
        lv += Real(exz[i]) * (vzp[ip] - c) + mm * Real(exz_m[im]) * (vzm[im] - c) -
              mm * Real(exz[im]) * (vzp[im] - c) - Real(exz_m[i]) * (vzm[ip] - c);
        lv += Real(eyz[i]) * (vpp[i] - c) + Real(eyz_mm[i]) * (vmm[i] - c) -
              Real(eyz_m0[i]) * (vmp[i] - c) - Real(eyz_0m[i]) * (vpm[i] - c);
        o[i] = alpha * lv + beta * c;
      };
      if (nx == 1) {
        cell(0, 0, 0, Real(0));
        continue;
      }
      // At i = nx−1 on a no-flux axis the +x weights are 0 (builder); ip = i keeps reads in range.
      cell(0, 1, perx ? nx - 1 : 0, perx ? Real(1) : Real(0));
#pragma omp simd
      for (int i = 1; i < nx - 1; ++i) cell(i, i + 1, i - 1, Real(1));
      cell(nx - 1, perx ? 0 : nx - 1, nx - 2, Real(1));
    }
}

template <class Real>
void diffusion4_apply(const tissue::Grid& g, double sigma, const Real* v, Real* out, Real alpha,
                      Real beta) {
  // Index tables per axis: neighbour at offsets −2, −1, +1, +2 after mirroring / wrapping.
  std::array<std::vector<int>, 3> tab;
  for (int a = 0; a < 3; ++a) {
    tab[a].resize(4 * static_cast<std::size_t>(g.n[a]));
    const bool per = g.bc[a] == tissue::Boundary::periodic;
    for (int i = 0; i < g.n[a]; ++i) {
      const int d[4] = {-2, -1, 1, 2};
      for (int q = 0; q < 4; ++q) tab[a][4 * i + q] = mirror_or_wrap(i + d[q], g.n[a], per);
    }
  }
  Real c12[3];
  for (int a = 0; a < 3; ++a) c12[a] = g.active(a) ? Real(sigma / (12.0 * g.h[a] * g.h[a])) : Real(0);
  const int nx = g.nx(), ny = g.ny(), nz = g.nz();
#pragma omp parallel for collapse(2) schedule(static) if (long(g.size()) >= kMinParallelCells)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j) {
      const std::size_t base = g.index(0, j, k);
      const Real* v0 = v + base;
      const int* ty = &tab[1][4 * static_cast<std::size_t>(j)];
      const int* tz = &tab[2][4 * static_cast<std::size_t>(k)];
      const Real* ry[4];
      const Real* rz[4];
      for (int q = 0; q < 4; ++q) {
        ry[q] = g.active(1) ? v + g.index(0, ty[q], k) : v0;
        rz[q] = g.active(2) ? v + g.index(0, j, tz[q]) : v0;
      }
      const int* tx = tab[0].data();
      for (int i = 0; i < nx; ++i) {
        const Real c = v0[i];
        Real lv = Real(0);
        if (g.active(0))
          lv += d2_fourth(v0[tx[4 * i]], v0[tx[4 * i + 1]], c, v0[tx[4 * i + 2]],
                          v0[tx[4 * i + 3]], c12[0]);
        lv += d2_fourth(ry[0][i], ry[1][i], c, ry[2][i], ry[3][i], c12[1]);
        lv += d2_fourth(rz[0][i], rz[1][i], c, rz[2][i], rz[3][i], c12[2]);
        out[base + i] = alpha * lv + beta * c;
      }
    }
}

template void diffusion2_uniform_apply<float>(const tissue::Grid&, std::array<double, 3>,
                                              const float*, float*, float, float);
template void diffusion2_uniform_apply<double>(const tissue::Grid&, std::array<double, 3>,
                                               const double*, double*, double, double);
template void diffusion2_links_apply<float>(const tissue::Grid&, const LinkCoeffs&, const float*,
                                            float*, float, float);
template void diffusion2_links_apply<double>(const tissue::Grid&, const LinkCoeffs&,
                                             const double*, double*, double, double);
template void diffusion4_apply<float>(const tissue::Grid&, double, const float*, float*, float,
                                      float);
template void diffusion4_apply<double>(const tissue::Grid&, double, const double*, double*,
                                       double, double);

}  // namespace cpu
}  // namespace hw::kernels
