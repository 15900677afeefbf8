// Conductivity tensors per voxel, from a scalar, a scalar field, or a fibre (+ sheet) field.
//
// Why its own type: the operators (src/kernels) only need the six components of a symmetric
// tensor per voxel; where they come from (case file, rule-based fibres, a file) is not their
// business. A uniform tensor stores six numbers, not six fields, so a constant-σ box costs
// no memory and lets the cpu backend take its fast path.
//
// Units: σ in mS/mm (= S/m). With χ in mm⁻¹, Cm in µF/mm², V in mV and t in ms, every term of
// χ(Cm ∂V/∂t + I_ion) = ∇·(σ∇V) + I_stim is in µA/mm³.
//
// Fibre tensor: f the fibre direction, s the sheet-normal (cross-sheet) direction, both
// normalised here; σ = σ_t I + (σ_l − σ_t) f fᵀ + (σ_n − σ_t) s sᵀ. Without a sheet field
// σ_n = σ_t (transversely isotropic).
#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "mesh/grid.hpp"

namespace hw::tissue {

// Component order of a symmetric 3×3 tensor.
enum TensorComp : int { xx = 0, yy = 1, zz = 2, xy = 3, xz = 4, yz = 5 };

// Component index of (a, b), a, b ∈ {0,1,2}.
constexpr int tensor_comp(int a, int b) {
  if (a == b) return a;
  const int lo = a < b ? a : b, hi = a < b ? b : a;
  return lo == 0 ? (hi == 1 ? xy : xz) : yz;
}

struct FibreField {
  std::array<Field<double>, 3> f;                 // fibre direction (need not be unit)
  std::optional<std::array<Field<double>, 3>> s;  // sheet normal, optional

  // One direction everywhere.
  static FibreField uniform(const Grid& g, std::array<double, 3> f);
  // Fibres in the x-y plane at an angle (degrees from +x) varying linearly with z from
  // angle_bottom (cell centre k = 0) to angle_top (k = nz − 1): the transmural rotation of a
  // slab whose wall runs along z.
  static FibreField rotating_through_z(const Grid& g, double angle_bottom_deg,
                                       double angle_top_deg);
};

struct FibreConductivities {
  double sigma_l = 0.0;                  // along the fibre, mS/mm
  double sigma_t = 0.0;                  // across the fibre (in-sheet), mS/mm
  std::optional<double> sigma_n;         // along the sheet normal; = sigma_t if absent
};

class Conductivity {
 public:
  Conductivity() = default;
  // σ I everywhere.
  static Conductivity isotropic(double sigma);
  // σ(x) I; sigma must have one value per cell.
  static Conductivity isotropic(const Grid& g, Field<double> sigma);
  // One tensor everywhere, components in TensorComp order.
  static Conductivity uniform_tensor(std::array<double, 6> t);
  // Tensor per voxel from fibres; throws hw::Error on a zero fibre vector in a tissue voxel
  // (mask may be null = all tissue).
  static Conductivity from_fibres(const Grid& g, const FibreField& fibres,
                                  const FibreConductivities& c, const Mask* mask = nullptr);

  // factor(x)·σ(x) per voxel (the phase-field conductivity φσ; mesh/phase_field.hpp).
  // factor must have one value per cell and be ≥ 0.
  Conductivity scaled(const Grid& g, const Field<double>& factor) const;

  bool uniform() const { return !per_voxel_; }
  // True if any off-diagonal component is non-zero somewhere (needs the 9/19-point stencil).
  bool has_off_diagonal() const { return off_diagonal_; }
  // The one rule for the stencil's fast path: σ the same diagonal tensor everywhere, on a
  // box that is all tissue (an empty mask) and without a phase field, so three weights
  // σ_a/h_a² replace the link arrays. Every engine and operator asks this.
  bool uniform_diagonal(bool all_tissue, bool phase_field) const {
    return uniform() && !has_off_diagonal() && all_tissue && !phase_field;
  }
  double get(int comp, std::size_t n) const {
    return per_voxel_ ? comps_[comp][n] : uniform_[comp];
  }
  const std::array<double, 6>& uniform_value() const { return uniform_; }
  // Checks sizes against the grid and that the diagonal is ≥ 0; throws hw::Error.
  void validate(const Grid& g) const;

 private:
  bool per_voxel_ = false;
  bool off_diagonal_ = false;
  std::array<double, 6> uniform_{0, 0, 0, 0, 0, 0};
  std::array<Field<double>, 6> comps_;
};

}  // namespace hw::tissue
