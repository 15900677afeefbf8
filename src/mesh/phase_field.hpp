// The phase-field method for no-flux boundaries of irregular shapes (Fenton, Cherry,
// Karma & Rappel, Chaos 15, 013502, 2005; seed 001 §3): a smooth φ, 1 in tissue and 0
// outside, and the conductivity φσ that turns the staircase mask boundary into a smooth
// one.
//
// Why: on a voxel mask the no-flux wall follows voxel faces, so a wave meeting an oblique
// wall sees a staircase; with φ the equation becomes
//     φ χCm ∂V/∂t = ∇·(φσ∇V) − φχ I_ion,   i.e.   χCm ∂V/∂t = ∇·(φσ∇V)/φ − χ I_ion,
// whose flux through any level set of φ vanishes as the interface width ξ → 0.
//
// How the stepper uses it (docs/geometry.md):
//   1. d = phase_field_diffusion(grid, φ, σ, threshold): d.sigma = φσ per voxel,
//      d.mask = {φ > threshold}, d.phi = φ on the tissue (double).
//   2. L = make_diffusion_operator({grid, d.sigma, d.mask}, backend): L v ≈ ∇·(φσ∇v),
//      still symmetric with L·1 = 0 (the operator's guarantees hold for any σ field).
//   3. Explicit:  V += dt/(χCm) · (L V)_n / φ_n on tissue cells.
//      Implicit:  (Φ − θ·dt/(χCm)·L) V^{n+1} = Φ V^n + (1−θ)·dt/(χCm)·L V^n with Φ = diag(φ):
//      symmetric positive definite, so CG applies unchanged (Jacobi diagonal φ_n − θα L_nn).
//      Dividing by φ after the solve would break the symmetry; multiplying the whole equation
//      by Φ keeps it. Conservation: Σ φ_n V_n |cell| is what pure diffusion conserves.
//   4. dt limit: phase_field_rate_bound() bounds the spectrum of Φ⁻¹L (the face weights use
//      the harmonic mean of φσ, which is ≤ 2 min(φσ), so the bound is at most ~2× the bulk
//      one even where φ is tiny).
#pragma once

#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// The 1D stationary profile of ∂φ/∂t = ξ²∇²φ + φ(1−φ)(φ−½): φ(d) = ½(1 + tanh(d/(2√2 ξ))),
// d the signed distance to the boundary (positive in tissue), ξ and d in mm.
double phase_profile(double signed_distance, double xi);

// φ from a mask: the stationary profile above evaluated on the exact signed distance to the
// mask boundary (which lies on the faces between tissue and non-tissue cells), then
// `relax_steps` explicit steps of the Allen–Cahn relaxation itself (stable dt chosen here).
// Starting from the profile needs no long relaxation; long relaxation would move the
// boundary by curvature (v = ξ²κ), so the default is a few smoothing steps. ξ in mm; a
// width of 1–2 voxels is typical. Grid walls are not boundaries (tissue touching a no-flux
// wall keeps φ = 1 there). An empty mask gives φ = 1 everywhere.
Field<float> phase_field_from_mask(const Grid& g, const Mask& mask, double xi, int relax_steps = 4);

struct PhaseFieldDiffusion {
  Conductivity sigma;  // φσ per voxel (0 outside the mask)
  Mask mask;           // φ > threshold
  Field<double> phi;   // φ on mask cells, 0 elsewhere
};

// φσ, the mask φ > threshold and φ as double, for the operator above. base may be uniform
// or per voxel. Throws hw::Error when sizes differ or threshold leaves no tissue.
PhaseFieldDiffusion phase_field_diffusion(const Grid& g, const Field<float>& phase,
                                          const Conductivity& base, double threshold);

// Gershgorin-type upper bound of the spectral radius of Φ⁻¹L (1/ms·χCm units of L, as
// DiffusionOperator::spectral_bound): per tissue cell, (Σ face weights + Σ |edge
// weights|)·2/φ_n with every weight bounded from the conductivities of the cells it joins.
// Explicit stepping is stable for dt·bound/(χCm) ≤ 2.
double phase_field_rate_bound(const Grid& g, const PhaseFieldDiffusion& d);

}  // namespace hw::tissue
