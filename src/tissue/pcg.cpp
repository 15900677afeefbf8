#include "tissue/pcg.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

CgOptions cg_options(double rel_tol, bool f32) {
  CgOptions o;
  o.rel_tol = f32 ? std::max(rel_tol, 1e-6) : rel_tol;
  return o;
}

void require_converged(const CgResult& r, const CgOptions& opt) {
  if (r.converged) return;
  throw Error(fmt::format("diffusion: CG did not converge in {} iterations (relative residual {:.3g} > {:.3g})",
                          r.iterations, r.rel_residual, opt.rel_tol));
}

}  // namespace hw::tissue
