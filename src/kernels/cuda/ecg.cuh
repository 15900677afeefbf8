// The pseudo-ECG on the GPU (outputs/maps.hpp defines it): Σ over tissue cells of (∇·σ∇V)_c /
// |x_c − x_e| for each electrode e, from V where the steps left it, so a sample moves a few
// doubles to the host instead of the whole field. The operator is the step kernel's own
// (monodomain.cuh: the same stencil, links and phase-field weighting as the cpu operator the
// host path uses). Text for NVRTC.
#pragma once

#include "kernels/cuda/block_sum.cuh"
#include "kernels/cuda/ecg_args.hpp"
#include "kernels/cuda/monodomain.cuh"

namespace hw::cuda {

// One thread per tissue cell (a box launch or the tissue cell list, as the CG's operator);
// the stored cells off the tissue hold V = 0 and are not visited.
template <class Real, class V>
__device__ __forceinline__ void ecg_sums(const PartArgs<Real>& a, const EcgArgs& e) {
  unsigned c, i, j, k;
  double lv = 0, x = 0, y = 0, z = 0;
  if (locate<Real, V>(a, c, i, j, k)) {
    const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
    lv = double(laplacian<Real, V>(a, a.vin, i, j, k, s0));
    x = (double(i) + 0.5) * e.h[0];
    y = (double(j) + 0.5) * e.h[1];
    z = (double(k) + 0.5) * e.h[2];
  }
  for (int q = 0; q < e.count; ++q) {
    const double dx = x - e.at[q][0], dy = y - e.at[q][1], dz = z - e.at[q][2];
    const double r = fmax(sqrt(dx * dx + dy * dy + dz * dz), e.rmin);
    block_sum(lv / r, e.sums + q);
  }
}

}  // namespace hw::cuda
