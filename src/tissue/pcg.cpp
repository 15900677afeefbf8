#include "tissue/pcg.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

CgOptions cg_options(double rel_tol, bool f32, int max_iter) {
  CgOptions o;
  o.rel_tol = f32 ? std::max(rel_tol, 1e-6) : rel_tol;
  o.max_iter = max_iter;
  return o;
}

void require_converged(const CgResult& r, const CgOptions& opt) {
  if (r.converged) return;
  throw Error(fmt::format("diffusion: CG did not converge in {} iteration{} (relative residual {:.3g} > {:.3g})",
                          r.iterations, r.iterations == 1 ? "" : "s", r.rel_residual, opt.rel_tol));
}

}  // namespace hw::tissue
