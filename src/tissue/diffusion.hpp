// The diffusion operator L v ≈ ∇·(σ∇v) behind one interface, for every backend.
//
// Why an abstract class with one factory: the host steppers and the CG (pcg.hpp, cg.hpp)
// are written against DiffusionOperator; the backend (the reference oracle's plain loops,
// or the cpu's) is a choice at construction (STYLE.md: no backend #ifdef in algorithm
// code). The CUDA engine applies the same stencil in its own kernels
// (kernels/cuda/monodomain.cuh) and builds its CG preconditioner from the cpu operator's
// diagonal.
//
// Guarantees of every second-order operator (tested): L is symmetric (⟨u, Lv⟩ = ⟨Lu, v⟩ in
// the plain dot product, cells all of one volume), L·1 = 0 and 1ᵀL = 0 (exact conservation
// of Σ v·|cell| with no-flux walls), zero flux through no-flux walls and tissue/non-tissue
// faces; non-tissue cells have (L v)_n = 0.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mesh/conductivity.hpp"
#include "mesh/grid.hpp"
#include "mesh/row_layout.hpp"

namespace hw::tissue {

enum class Backend { reference, cpu, cuda };
enum class StencilOrder { second, fourth };
// Time scheme of the diffusion half-step (the maths: diffusion_stepper.hpp). Here, not with
// the stepper, so that a case and the reference engine name it without the fast solver.
enum class DiffusionScheme { forward_euler, backward_euler, crank_nicolson };

const char* backend_name(Backend b);

struct DiffusionSetup {
  Grid grid;
  Conductivity sigma = Conductivity::isotropic(0.0);  // mS/mm
  Mask mask;                                          // empty = every cell is tissue
  // fourth: constant isotropic σ on a box only (no mask); hw::Error otherwise.
  StencilOrder order = StencilOrder::second;
  // Where the fields apply() takes live: the box layout when left empty. The cpu backend
  // also takes row_layout(grid, mask) (storage that follows the tissue); the reference
  // backend, the oracle, works on the box only.
  RowLayout layout;
};

// The σ of a fourth-order stencil, which has no variable-coefficient form: hw::Error unless
// σ is constant and isotropic on a box without a mask.
double fourth_order_sigma(const Grid& g, const Conductivity& sigma, const Mask& mask);

class DiffusionOperator {
 public:
  virtual ~DiffusionOperator() = default;

  // out = α·(L v) + β·v, v and out in layout() storage (layout().size() values; cells not
  // stored are not tissue and have no value). out must not alias v. Fusing α, β lets one
  // pass do a forward-Euler step (α = dt/(χCm), β = 1) or apply I − θ·dt/(χCm)·L for the
  // implicit solve.
  void apply(const Field<double>& v, Field<double>& out, double alpha = 1.0,
             double beta = 0.0) const;
  void apply(const Field<float>& v, Field<float>& out, float alpha = 1.0f,
             float beta = 0.0f) const;
  // The same on the (j, k) rows r0 ≤ r < r1 of out only (a split run's slab; v must hold
  // the rows the stencil reaches around them). out keeps its size. A backend without a
  // ranged kernel (the reference) applies the whole field.
  void apply_rows(const Field<double>& v, Field<double>& out, double alpha, double beta, std::size_t r0,
                  std::size_t r1) const;
  void apply_rows(const Field<float>& v, Field<float>& out, float alpha, float beta, std::size_t r0,
                  std::size_t r1) const;

  const Grid& grid() const { return setup_.grid; }
  const Mask* mask() const { return setup_.mask.empty() ? nullptr : &setup_.mask; }
  const RowLayout& layout() const { return setup_.layout; }
  Backend backend() const { return backend_; }
  // L_nn (≤ 0) in layout() storage, for Jacobi preconditioning.
  const Field<double>& diagonal() const { return diag_; }
  // Gershgorin bound max_n (|L_nn| + Σ_m |L_nm|) ≥ λ_max(−L), 1/ms·mS/mm·mm⁻² units of L.
  // Exact for constant isotropic σ on a box with an even number of cells per active axis
  // or large grids (the checkerboard mode reaches it).
  double spectral_bound() const { return bound_; }

 protected:
  DiffusionOperator(DiffusionSetup s, Backend b);
  virtual void do_apply(const double* v, double* out, double alpha, double beta) const = 0;
  virtual void do_apply(const float* v, float* out, float alpha, float beta) const = 0;
  virtual void do_apply_rows(const double* v, double* out, double alpha, double beta, std::size_t, std::size_t) const {
    do_apply(v, out, alpha, beta);
  }
  virtual void do_apply_rows(const float* v, float* out, float alpha, float beta, std::size_t, std::size_t) const {
    do_apply(v, out, alpha, beta);
  }

  DiffusionSetup setup_;
  Backend backend_;
  Field<double> diag_;
  double bound_ = 0.0;
};

// Validates the setup (grid, sizes, σ ≥ 0, fourth-order restrictions) and builds the
// operator for backend b. Throws hw::Error on bad setup or an unbuilt backend.
std::unique_ptr<DiffusionOperator> make_diffusion_operator(DiffusionSetup setup, Backend b);

// The phase field's factors (docs/tissue.md) in a row layout's storage, written once for
// every engine: phase_inverse gives 1/φ on tissue cells (0 elsewhere) for the explicit step
// V += α·(L_{φσ} V)/φ; phase_weights gives w = φ on tissue cells (1 elsewhere) for the
// implicit system (Φ − θ·a·L) V⁺ = rhs. phi is grid-sized (φ > 0 on tissue).
std::vector<double> phase_inverse(const Field<double>& phi, const Mask& mask, const RowLayout& layout);
std::vector<double> phase_weights(const Field<double>& phi, const Mask& mask, const RowLayout& layout);

}  // namespace hw::tissue
