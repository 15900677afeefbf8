// cpu diffusion kernels: OpenMP over (j,k) rows; each row is the row kernel of
// fused_monodomain.cpp (a branch-free x loop over interior cells that the compiler
// vectorises, the two x-boundary cells done apart with explicit indices).
//
// Rows that fall outside the grid on a no-flux axis are replaced by the cell's own row for
// values and by a row of zeros for coefficients, so the interior loop needs no tests. The
// result must match the reference kernels to rounding (tests/unit/test_tissue_diffusion.cpp).
#include <cstdint>

#include "kernels/cpu/fused_monodomain.hpp"
#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "kernels/diffusion_links.hpp"
#include "parallel/team.hpp"

namespace hw::kernels {

template <class Coef>
LinkCoeffs<Coef> build_link_coeffs(const tissue::Grid& g, const tissue::Conductivity& sigma,
                                   const tissue::Mask* mask, const tissue::RowLayout& layout) {
  LinkCoeffs<Coef> c;
  const bool edges = sigma.has_off_diagonal();
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) c.face[a].assign(layout.size(), 0.0);
  if (edges)
    for (int f = 0; f < 3; ++f)
      if (g.active(kEdgeAxes[f][0]) && g.active(kEdgeAxes[f][1]))
        c.edge[f].assign(layout.size(), 0.0);
  // A non-zero link joins tissue cells only, and the layout stores every tissue cell.
  for_each_link(
      g, sigma, mask, edges,
      [&](std::size_t n, std::size_t, int a, double w) {
        if (w != 0.0) c.face[a][layout.index(n)] = Coef(w);
      },
      [&](std::size_t p, std::size_t, std::size_t, std::size_t, int f, double e) {
        if (e != 0.0) c.edge[f][layout.index(p)] = Coef(e);
      });
  c.zero_row.assign(static_cast<std::size_t>(g.nx()) + 1, Coef(0));
  return c;
}

template LinkCoeffs<float> build_link_coeffs<float>(const tissue::Grid&,
                                                    const tissue::Conductivity&,
                                                    const tissue::Mask*, const tissue::RowLayout&);
template LinkCoeffs<double> build_link_coeffs<double>(const tissue::Grid&,
                                                      const tissue::Conductivity&,
                                                      const tissue::Mask*,
                                                      const tissue::RowLayout&);

namespace cpu {

// The whole-field kernels are the row kernels of fused_monodomain.hpp over every (j,k) row:
// one body for the stencil, so the fused and unfused paths cannot drift apart.
template <class Real>
void diffusion2_uniform_apply(const tissue::Grid& g, std::array<double, 3> w, const Real* v,
                              Real* out, Real alpha, Real beta, std::size_t r0, std::size_t r1) {
  const long ny = g.ny(), a = long(r0), b = long(std::min(r1, std::size_t(g.ny()) * std::size_t(g.nz())));
#pragma omp parallel for schedule(static) num_threads(par::team()) if (long(g.size()) >= kMinParallelCells)
  for (long r = a; r < b; ++r) {
    const int j = int(r % ny), k = int(r / ny);
    diffusion2_uniform_row(g, w, j, k, v, out + g.index(0, j, k), alpha, beta);
  }
}

template <class Real, class Coef>
void diffusion2_links_apply(const tissue::Grid& g, const tissue::RowLayout& layout,
                            const LinkCoeffs<Coef>& cf, const Real* v, Real* out, Real alpha,
                            Real beta, std::size_t r0, std::size_t r1) {
  const int ny = g.ny();
  const long a = long(r0), rows = long(std::min(r1, layout.rows()));
  // Off the tissue L v = 0: out = β·v on the padding and on each row's stored cells
  // outside its tissue range, the stencil on the tissue range.
  if (r0 == 0)
    for (std::size_t s = 0; s < layout.pad; ++s) out[s] = beta * v[s];
#pragma omp parallel for schedule(static) num_threads(par::team()) if (long(layout.size()) >= kMinParallelCells)
  for (long r = a; r < rows; ++r) {
    const std::size_t b = layout.base[r];
    const int lo = int(layout.lo[r]), hi = int(layout.hi[r]);
    int tlo = int(layout.tlo[r]), thi = int(layout.thi[r]);
    if (tlo >= thi) tlo = thi = hi;
    for (int i = lo; i < tlo; ++i) out[b + i] = beta * v[b + i];
    for (int i = thi; i < hi; ++i) out[b + i] = beta * v[b + i];
    diffusion2_links_row(g, layout, cf, int(r % ny), int(r / ny), v, out + b, alpha, beta, tlo,
                         thi);
  }
}

template <class Real>
void diffusion4_apply(const tissue::Grid& g, double sigma, const Real* v, Real* out, Real alpha,
                      Real beta, std::size_t r0, std::size_t r1) {
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
  const int nx = g.nx(), ny = g.ny();
  const long ra = long(r0), rb = long(std::min(r1, std::size_t(g.ny()) * std::size_t(g.nz())));
#pragma omp parallel for schedule(static) num_threads(par::team()) if (long(g.size()) >= kMinParallelCells)
  for (long r = ra; r < rb; ++r) {
      const int j = int(r % ny), k = int(r / ny);
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
                                              const float*, float*, float, float, std::size_t, std::size_t);
template void diffusion2_uniform_apply<double>(const tissue::Grid&, std::array<double, 3>,
                                               const double*, double*, double, double, std::size_t, std::size_t);
template void diffusion2_links_apply<float, double>(const tissue::Grid&, const tissue::RowLayout&,
                                                    const LinkCoeffs<double>&, const float*,
                                                    float*, float, float, std::size_t, std::size_t);
template void diffusion2_links_apply<double, double>(const tissue::Grid&,
                                                     const tissue::RowLayout&,
                                                     const LinkCoeffs<double>&, const double*,
                                                     double*, double, double, std::size_t, std::size_t);
template void diffusion4_apply<float>(const tissue::Grid&, double, const float*, float*, float,
                                      float, std::size_t, std::size_t);
template void diffusion4_apply<double>(const tissue::Grid&, double, const double*, double*,
                                       double, double, std::size_t, std::size_t);

}  // namespace cpu
}  // namespace hw::kernels
