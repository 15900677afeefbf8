// Reference diffusion kernels: the oracle for every other backend.
//
// Deliberately naive: the second-order operator visits every link once and scatters
// w·(v_m − v_n) to both ends (so symmetry and conservation are evident), computing each
// weight from the conductivity and mask on the fly; the fourth-order operator builds each
// cell's ghost values by mirroring/wrapping indices one at a time.
#include <vector>

#include "kernels/diffusion_k.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "kernels/diffusion_links.hpp"

namespace hw::kernels::reference {

void diffusion2_apply(const tissue::Grid& g, const tissue::Conductivity& sigma,
                      const tissue::Mask* mask, const double* v, double* out, double alpha,
                      double beta) {
  std::vector<double> lv(g.size(), 0.0);
  for_each_link(
      g, sigma, mask, sigma.has_off_diagonal(),
      [&](std::size_t n, std::size_t m, int, double w) {
        lv[n] += w * (v[m] - v[n]);
        lv[m] += w * (v[n] - v[m]);
      },
      [&](std::size_t p, std::size_t q, std::size_t r, std::size_t s, int, double e) {
        lv[p] += e * (v[s] - v[p]);
        lv[s] += e * (v[p] - v[s]);
        lv[q] -= e * (v[r] - v[q]);
        lv[r] -= e * (v[q] - v[r]);
      });
  for (std::size_t n = 0; n < g.size(); ++n) out[n] = alpha * lv[n] + beta * v[n];
}

void diffusion4_apply(const tissue::Grid& g, double sigma, const double* v, double* out,
                      double alpha, double beta) {
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const int c[3] = {i, j, k};
        const std::size_t n = g.index(i, j, k);
        double lv = 0.0;
        for (int a = 0; a < 3; ++a) {
          if (!g.active(a)) continue;
          const bool per = g.bc[a] == tissue::Boundary::periodic;
          double nb[5];
          for (int d = -2; d <= 2; ++d) {
            int cc[3] = {i, j, k};
            cc[a] = mirror_or_wrap(c[a] + d, g.n[a], per);
            nb[d + 2] = v[g.index(cc[0], cc[1], cc[2])];
          }
          lv += d2_fourth(nb[0], nb[1], nb[2], nb[3], nb[4], 1.0 / (12.0 * g.h[a] * g.h[a]));
        }
        out[n] = alpha * sigma * lv + beta * v[n];
      }
}

}  // namespace hw::kernels::reference
