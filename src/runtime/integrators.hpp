// Fixed-step integrators for one cell and for a batch of cells in structure-of-arrays.
//
// Header-only on purpose: the same templates are instantiated by the interpreter (the
// oracle), by the C++ the model compiler prints for built-in models at build time, by the
// C++ it prints for a user's model and compiles at run time (model/jit), and by NVRTC for
// the GPU (the CUDA printer's model struct; this file is embedded in the binary). So every
// backend runs literally the same integrator code.
//
// A cell model M is anything with (Real = float or double):
//   int  n_states() const;  int n_params() const;  int n_constants() const;
//   bool is_gate(int i) const;                       // dy_i/dt = a - b*y_i
//   void constants(const Real* p, Real* c) const;    // once per cell ("computed constants")
//   void rhs(Real t, const Real* y, const Real* p, const Real* c, Real* dydt) const;
//   void rhs_jac(Real t, const Real* y, const Real* p, const Real* c,
//                Real* dydt, Real* jdiag) const;     // also exact d(dy_i/dt)/dy_i
// and, optionally, linear blocks (model/passes/linear_blocks.hpp: Markov chains), which
// GRL1 and GRL2 advance implicitly:
//   static constexpr int kBlockEntries;              // Σ n_b² over blocks (0: none)
//   int n_blocks() const; int block_size(int b) const; int block_offset(int b) const;
//   int block_state(int b, int r) const;             // state index of row r of block b
//   int block_of(int i) const;                       // block of state i, or -1
//   void rhs_jac_blocks(Real t, const Real* y, const Real* p, const Real* c, Real* dydt,
//                       Real* jdiag, Real* A) const; // A: each block row-major at its offset
// With kBlockEntries > 0 the block queries are constexpr and M{} is a constant expression
// (printed models), so for_each_block unrolls over the blocks at compile time.
// And, optionally, state thresholds (model/passes/thresholds.hpp), which every integrator
// stops at inside a step:
//   static constexpr int kThresholds;                // how many (0: none; < 0: run time,
//   int n_thresholds() const;                        //   then n_thresholds() says)
//   void thresholds(Real t, const Real* y, const Real* p, const Real* c, Real* g) const;
//
// The stimulus is not special here: the driver writes it into a parameter each step.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC: no standard headers; the math functions are built in.
#define HW_INTEGRATOR_FN __device__ __forceinline__
#define HW_CONSTANT_FN __device__ constexpr
#define HW_STATE_LOOP _Pragma("unroll")
namespace hw::cell::math {
__device__ __forceinline__ float expm1(float x) { return ::expm1f(x); }
__device__ __forceinline__ double expm1(double x) { return ::expm1(x); }
__device__ __forceinline__ float fabs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double fabs(double x) { return ::fabs(x); }
}  // namespace hw::cell::math
#elif defined(__CUDACC__)
// nvcc, on a file written by `heartwave model compile --target cuda`: host and device.
#include <cmath>
#include <cstddef>
#include <cstdint>
#define HW_INTEGRATOR_FN __host__ __device__ __forceinline__
#define HW_CONSTANT_FN __host__ __device__ constexpr
#define HW_STATE_LOOP _Pragma("unroll")
namespace hw::cell::math {
using std::expm1;
using std::fabs;
}  // namespace hw::cell::math
#else
#include <cmath>
#include <cstddef>
#include <cstdint>
// Always inlined: a loop over cells vectorises only when the whole step is in its body,
// and GCC's size heuristics otherwise give up on the larger models and integrators.
#define HW_INTEGRATOR_FN [[gnu::always_inline]] inline
#define HW_CONSTANT_FN constexpr
// The per-state loops are unrolled completely when n is a compile-time constant (generated
// models, up to 64 states), so a vectorised loop over cells that inlines step_cell has no
// inner loop left (GCC 12 vectorises only innermost loops).
#define HW_STATE_LOOP _Pragma("GCC unroll 64")
namespace hw::cell::math {
using std::expm1;
using std::fabs;
}  // namespace hw::cell::math
#endif

namespace hw::cell {

// The order is part of the GPU kernels' and checkpoints' vocabulary: append only.
enum class Integrator : unsigned char { fe, rk2, rk4, rl1, rl2, sbe, grl1, grl2 };
inline constexpr int kIntegratorCount = 8;
inline constexpr int kMaxStates = 256;  // front ends reject larger models
inline constexpr int kMaxParams = 1024;
inline constexpr int kMaxBlockEntries = 2048;  // run-time models (the interpreter)
inline constexpr int kMaxThresholds = 256;     // run-time models (the interpreter)

#if !defined(__CUDACC_RTC__)
// Short names used on the command line and in generated symbol names.
constexpr const char* integrator_name(Integrator i) {
  constexpr const char* names[] = {"fe", "rk2", "rk4", "rl1", "rl2", "sbe", "grl1", "grl2"};
  return names[static_cast<int>(i)];
}

// Formal order of accuracy (what the convergence tests measure).
constexpr int integrator_order(Integrator i) {
  constexpr int orders[] = {1, 2, 4, 1, 2, 1, 1, 2};
  return orders[static_cast<int>(i)];
}

// "fe, rk2, ..., grl2": for messages.
inline const char* integrator_list() { return "fe, rk2, rk4, rl1, rl2, sbe, grl1, grl2"; }

// The integrator called `name`; false when there is none.
inline bool integrator_from_name(const char* name, Integrator& out) {
  for (int i = 0; i < kIntegratorCount; ++i) {
    const char* a = integrator_name(Integrator(i));
    const char* b = name;
    while (*a && *a == *b) ++a, ++b;
    if (!*a && !*b) {
      out = Integrator(i);
      return true;
    }
  }
  return false;
}

// Right-hand side evaluations per step: the cost model `auto` starts from.
constexpr int integrator_evaluations(Integrator i) {
  constexpr int evaluations[] = {1, 2, 4, 1, 2, 1, 1, 2};
  return evaluations[static_cast<int>(i)];
}
#endif

namespace detail {

// (e^{J h} - 1)/J, the exact propagator factor of y' = f + J (y - y0); → h as J → 0.
template <class Real>
HW_INTEGRATOR_FN Real expm1_over(Real J, Real h) {
  const Real x = J * h;
  // Below |x| ~ 1e-5 (double) the series beats expm1's rounding for this quotient. Both
  // sides are computed and one is selected, so a loop over cells that calls this can be
  // if-converted and vectorised. `+ Real(0) * e` keeps GCC from sinking the expm1 call into
  // the large-|x| side (which would bring the branch back); it adds ±0 to the series, as e
  // is finite (|e| < 2e-5) whenever the series is selected. At J == 0 the unused quotient
  // is NaN.
  const Real e = math::expm1(x);
  const Real series = h * (Real(1) + x * (Real(0.5) + x * Real(1.0 / 6.0))) + Real(0) * e;
  const Real exact = e / J;
  return math::fabs(x) < Real(1e-5) ? series : exact;
}

// Size of step_cell's scratch arrays: the model's own count when it is a compile-time
// constant (generated models), so that inside a vectorised loop over cells the arrays are
// small enough to live in registers; the run-time maximum for the interpreter. (SFINAE,
// not a requires-expression: NVRTC compiles this as C++17.)
template <class M, class = void>
struct Sizes {
  static constexpr int states = kMaxStates;
};
template <class M>
struct Sizes<M, decltype(void(M::kStates))> {
  static constexpr int states = M::kStates > 0 ? M::kStates : 1;
};
// kBlockEntries: 0 or absent, no blocks; > 0, that many entries; < 0, known at run time
// only (the interpreter), at most kMaxBlockEntries.
template <class M, class = void>
struct HasBlocks {
  static constexpr bool value = false;
};
template <class M>
struct HasBlocks<M, decltype(void(M::kBlockEntries))> {
  static constexpr bool value = M::kBlockEntries != 0;
};
template <class M, class = void>
struct BlockEntries {
  static constexpr int value = 1;
};
template <class M>
struct BlockEntries<M, decltype(void(M::kBlockEntries))> {
  static constexpr int value = M::kBlockEntries > 0 ? M::kBlockEntries : M::kBlockEntries < 0 ? kMaxBlockEntries : 1;
};

template <class M, class = void>
struct StaticBlocks {
  static constexpr bool value = false;
};
template <class M>
struct StaticBlocks<M, decltype(void(M::kBlockEntries))> {
  static constexpr bool value = M::kBlockEntries > 0;
};

// kSparseBlocks: true where the model prints its blocks' factorisation, substitutions and
// products for their own sparsity (factor_blocks_sparse, solve_blocks_sparse,
// block_axpy_sparse: model/emit/block_solver.hpp); the dense loops below otherwise.
template <class M, class = void>
struct SparseBlocks {
  static constexpr bool value = false;
};
template <class M>
struct SparseBlocks<M, decltype(void(M::kSparseBlocks))> {
  static constexpr bool value = M::kSparseBlocks;
};

// kFusedSteps: true where the model prints its single-stage steps (fe_fused, rl1_fused,
// grl1_fused: model/emit/fused_step.hpp) state by state; step_once's loops below otherwise.
template <class M, class = void>
struct FusedSteps {
  static constexpr bool value = false;
};
template <class M>
struct FusedSteps<M, decltype(void(M::kFusedSteps))> {
  static constexpr bool value = M::kFusedSteps;
};

// kThresholds: 0 or absent, none; > 0, that many; < 0, n_thresholds() at run time.
template <class M, class = void>
struct Thresholds {
  static constexpr int value = 0;  // scratch size
};
template <class M>
struct Thresholds<M, decltype(void(M::kThresholds))> {
  static constexpr int value = M::kThresholds > 0 ? M::kThresholds : M::kThresholds < 0 ? kMaxThresholds : 0;
};
template <class M>
HW_INTEGRATOR_FN int threshold_count(const M& m) {
  if constexpr (M::kThresholds < 0)
    return m.n_thresholds();
  else
    return M::kThresholds;
}

// A block index known to the compiler.
template <int V>
struct BlockIndex {
  // Annotated for the device: NVRTC takes an unannotated function for a host one.
  HW_CONSTANT_FN operator int() const { return V; }
};

// Calls f(b) for every block of m. Where the model's block structure is constexpr (printed
// models) b is a BlockIndex<B>, one call per block, so the block's size and its
// block_state(b, r) switches fold to constants once the loops inside are unrolled; a loop
// over a run-time b leaves them as branches, and scratch indexed through them in local
// memory (Iyer 2004's grl2 kernel: 6.7 MB of PTX, 93,000 branches, 200 s to compile,
// against 0.6 MB and 15 s this way). The interpreter's blocks are known at run time only.
template <int B = 0, class M, class F>
HW_INTEGRATOR_FN void for_each_block(const M& m, const F& f) {
  if constexpr (StaticBlocks<M>::value) {
    if constexpr (B < M{}.n_blocks()) {
      f(BlockIndex<B>{});
      for_each_block<B + 1>(m, f);
    }
  } else {
    for (int b = 0; b < m.n_blocks(); ++b) f(b);
  }
}

// LU factors (no pivoting) of I − h·A for every block, at the blocks' offsets. I − h·A of a
// Markov chain's generator is column diagonally dominant, so elimination without pivoting
// is stable there.
template <class Real, class M>
HW_INTEGRATOR_FN void factor_blocks(const M& m, Real h, const Real* A, Real* lu) {
  if constexpr (SparseBlocks<M>::value) {
    m.factor_blocks_sparse(h, A, lu);
  } else {
    for_each_block(m, [&](auto b) {
      const int n = m.block_size(b), o = m.block_offset(b);
      HW_STATE_LOOP
      for (int r = 0; r < n; ++r) {
        HW_STATE_LOOP
        for (int c = 0; c < n; ++c) lu[o + r * n + c] = (r == c ? Real(1) : Real(0)) - h * A[o + r * n + c];
      }
      HW_STATE_LOOP
      for (int k = 0; k < n; ++k) {
        const Real inv = Real(1) / lu[o + k * n + k];
        HW_STATE_LOOP
        for (int i = k + 1; i < n; ++i) {
          const Real l = lu[o + i * n + k] * inv;
          lu[o + i * n + k] = l;
          HW_STATE_LOOP
          for (int j = k + 1; j < n; ++j) lu[o + i * n + j] -= l * lu[o + k * n + j];
        }
      }
    });
  }
}

// x ← (I − h·A)⁻¹ x on every block's states (x indexed by state), from factor_blocks.
template <class Real, class M>
HW_INTEGRATOR_FN void solve_blocks(const M& m, const Real* lu, Real* x) {
  if constexpr (SparseBlocks<M>::value) {
    m.solve_blocks_sparse(lu, x);
  } else {
    for_each_block(m, [&](auto b) {
      const int n = m.block_size(b), o = m.block_offset(b);
      HW_STATE_LOOP
      for (int i = 1; i < n; ++i) {
        HW_STATE_LOOP
        for (int k = 0; k < i; ++k) x[m.block_state(b, i)] -= lu[o + i * n + k] * x[m.block_state(b, k)];
      }
      HW_STATE_LOOP
      for (int i = n - 1; i >= 0; --i) {
        HW_STATE_LOOP
        for (int k = i + 1; k < n; ++k) x[m.block_state(b, i)] -= lu[o + i * n + k] * x[m.block_state(b, k)];
        x[m.block_state(b, i)] /= lu[o + i * n + i];
      }
    });
  }
}

// out ← x + s·A·d on every block's rows (x, d, out indexed by state).
template <class Real, class M>
HW_INTEGRATOR_FN void block_axpy(const M& m, const Real* A, Real s, const Real* d, const Real* x,
                                 Real* out) {
  if constexpr (SparseBlocks<M>::value) {
    m.block_axpy_sparse(A, s, d, x, out);
  } else {
    for_each_block(m, [&](auto b) {
      const int n = m.block_size(b), o = m.block_offset(b);
      HW_STATE_LOOP
      for (int r = 0; r < n; ++r) {
        Real acc = Real(0);
        HW_STATE_LOOP
        for (int c = 0; c < n; ++c) acc += A[o + r * n + c] * d[m.block_state(b, c)];
        out[m.block_state(b, r)] = x[m.block_state(b, r)] + s * acc;
      }
    });
  }
}

// GRL1 over h from y (f, J, A evaluated at y): every state not in a block by the exponential
// update with its exact diagonal, the blocks by one linearly implicit (backward) Euler step,
// exact for the frozen affine system. Writes the new state to out (out may be y).
template <class Real, class M>
HW_INTEGRATOR_FN void grl1_update(const M& m, Real h, const Real* y, const Real* f, const Real* J,
                                  const Real* A, Real* d, Real* lu, Real* out) {
  const int n = m.n_states();
  if constexpr (HasBlocks<M>::value) {
    HW_STATE_LOOP
    for (int i = 0; i < n; ++i) d[i] = h * f[i];
    factor_blocks(m, h, A, lu);
    solve_blocks(m, lu, d);
    HW_STATE_LOOP
    for (int i = 0; i < n; ++i) out[i] = y[i] + (m.block_of(i) >= 0 ? d[i] : f[i] * expm1_over(J[i], h));
  } else {
    HW_STATE_LOOP
    for (int i = 0; i < n; ++i) out[i] = y[i] + f[i] * expm1_over(J[i], h);
  }
}

// A diagonal that is not finite becomes 0, so that state takes the explicit update. The
// exact derivative can overflow where its function does not: Courtemanche 1998's release
// gate u has u_inf = 1/(1 + e^x) with x ~ 250 at rest, finite in float, but its derivative
// −e^x/(1 + e^x)² is inf/inf there, and GRL went NaN on the first float step. (Branch-free
// so the loop over cells still vectorises; NaN fails the comparison.)
template <class Real>
HW_INTEGRATOR_FN Real finite_or_zero(Real J) {
  return math::fabs(J) <= Real(1e30) ? J : Real(0);
}
template <class Real>
HW_INTEGRATOR_FN void finite_diagonal(int n, Real* J) {
  HW_STATE_LOOP
  for (int i = 0; i < n; ++i) J[i] = finite_or_zero(J[i]);
}

template <class Real, class M>
HW_INTEGRATOR_FN void rhs_jac_all(const M& m, Real t, const Real* y, const Real* p, const Real* c,
                                  Real* f, Real* J, Real* A) {
  if constexpr (HasBlocks<M>::value)
    m.rhs_jac_blocks(t, y, p, c, f, J, A);
  else
    m.rhs_jac(t, y, p, c, f, J);
  finite_diagonal(m.n_states(), J);
}

}  // namespace detail

namespace detail {

// One step of `method` over dt, whatever happens inside it.
template <class Real, class M>
HW_INTEGRATOR_FN void step_once(const M& m, Integrator method, Real t, Real dt, Real* y, const Real* p,
                                const Real* c) {
  const int n = m.n_states();
  constexpr int kScratch = detail::Sizes<M>::states;
  Real f[kScratch], J[kScratch], ys[kScratch];
  if constexpr (FusedSteps<M>::value) {
    // The printed model's own single-stage steps: the same updates, state by state.
    switch (method) {
      case Integrator::fe: m.fe_fused(t, dt, y, p, c); return;
      case Integrator::rl1: m.rl1_fused(t, dt, y, p, c); return;
      case Integrator::grl1: m.grl1_fused(t, dt, y, p, c); return;
      default: break;
    }
  }
  switch (method) {
    case Integrator::fe: {
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i];
      return;
    }
    case Integrator::rk2: {  // explicit midpoint
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) ys[i] = y[i] + Real(0.5) * dt * f[i];
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i];
      return;
    }
    case Integrator::rk4: {
      Real acc[kScratch];
      m.rhs(t, y, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] = f[i]; ys[i] = y[i] + Real(0.5) * dt * f[i]; }
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] += 2 * f[i]; ys[i] = y[i] + Real(0.5) * dt * f[i]; }
      m.rhs(t + Real(0.5) * dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) { acc[i] += 2 * f[i]; ys[i] = y[i] + dt * f[i]; }
      m.rhs(t + dt, ys, p, c, f);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt / Real(6) * (acc[i] + f[i]);
      return;
    }
    case Integrator::rl1: {  // Rush-Larsen: gates exact for frozen a, b; the rest FE
      m.rhs_jac(t, y, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i)
        y[i] += m.is_gate(i) ? f[i] * detail::expm1_over(J[i], dt) : dt * f[i];
      return;
    }
    case Integrator::rl2: {
      // Second-order Rush-Larsen (Perego & Veneziani 2009; Sundnes et al. 2009): a
      // half RL1 step to the midpoint, then a full step from y with the gates' a, b and the
      // other states' slopes taken at the midpoint (midpoint RK2 for non-gates).
      m.rhs_jac(t, y, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i)
        ys[i] = y[i] + (m.is_gate(i) ? f[i] * detail::expm1_over(J[i], Real(0.5) * dt)
                                     : Real(0.5) * dt * f[i]);
      m.rhs_jac(t + Real(0.5) * dt, ys, p, c, f, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) {
        if (m.is_gate(i)) {
          // y' = f* + J*(y - y*), exact from y over dt.
          const Real slope = f[i] + J[i] * (y[i] - ys[i]);
          y[i] += slope * detail::expm1_over(J[i], dt);
        } else {
          y[i] += dt * f[i];
        }
      }
      return;
    }
    case Integrator::sbe: {  // simplified backward Euler: one Newton step, diagonal J
      m.rhs_jac(t, y, p, c, f, J);
      detail::finite_diagonal(n, J);
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] += dt * f[i] / (Real(1) - dt * J[i]);
      return;
    }
    case Integrator::grl1: {
      // Generalised Rush-Larsen (Sundnes et al. 2009): the exponential update with the exact
      // diagonal on every state, not only gates; linear blocks implicitly.
      constexpr int kA = detail::BlockEntries<M>::value;
      Real A[kA], lu[kA];
      detail::rhs_jac_all(m, t, y, p, c, f, J, A);
      detail::grl1_update(m, dt, y, f, J, A, ys, lu, y);
      return;
    }
    case Integrator::grl2: {
      // GRL2: a GRL1 half step to the midpoint y*, then a full step from y of the system
      // linearised at y*: y' = f* + J*(y − y*), exact per state for the diagonal part and,
      // for linear blocks, by the L-stable two-stage SDIRK (γ = 1 − 1/√2, one LU for both
      // stages). Linearising at the midpoint keeps second order (the linear term integrates
      // to O(dt³) over a step centred on y*).
      constexpr int kA = detail::BlockEntries<M>::value;
      Real A[kA], lu[kA];
      const Real h2 = Real(0.5) * dt;
      detail::rhs_jac_all(m, t, y, p, c, f, J, A);
      {
        Real d[kScratch];
        detail::grl1_update(m, h2, y, f, J, A, d, lu, ys);
      }
      detail::rhs_jac_all(m, t + h2, ys, p, c, f, J, A);
      if constexpr (detail::HasBlocks<M>::value) {
        const Real gamma = Real(0.29289321881345248);  // 1 − 1/√2
        Real g[kScratch], dy[kScratch], k1[kScratch], k2[kScratch];
        HW_STATE_LOOP
        for (int i = 0; i < n; ++i) dy[i] = y[i] - ys[i];
        detail::block_axpy(m, A, Real(1), dy, f, g);  // g = f* + A*(y − y*) on block rows
        HW_STATE_LOOP
        for (int i = 0; i < n; ++i) k1[i] = g[i];
        detail::factor_blocks(m, gamma * dt, A, lu);
        detail::solve_blocks(m, lu, k1);
        detail::block_axpy(m, A, (Real(1) - gamma) * dt, k1, g, k2);
        detail::solve_blocks(m, lu, k2);
        HW_STATE_LOOP
        for (int i = 0; i < n; ++i)
          y[i] += m.block_of(i) >= 0 ? dt * ((Real(1) - gamma) * k1[i] + gamma * k2[i])
                                     : (f[i] + J[i] * (y[i] - ys[i])) * detail::expm1_over(J[i], dt);
      } else {
        HW_STATE_LOOP
        for (int i = 0; i < n; ++i) y[i] += (f[i] + J[i] * (y[i] - ys[i])) * detail::expm1_over(J[i], dt);
      }
      return;
    }
  }
}

// A step over dt that stops at each state threshold it crosses and goes on from there, so
// that a rate switched on in a narrow window of a state is seen for the time the state
// spends in it (model/passes/thresholds.hpp says why). Each pass tries the rest of the
// step and compares the threshold distances g before and after. Where some g changed
// sign, it goes back and tries again up to just before the first crossing, placed by linear
// interpolation of g over the try (regula falsi: a state that approaches its threshold
// along a curve needs a few tries), until a try crosses nothing. So no stage of the scheme
// reads the far side of a threshold (RK4's last stage sits at the end of its step). From
// just before a crossing it steps across in a sliver of 2·10⁻⁴ dt, which is all the time a
// crossing spends on the wrong side. A step that crosses nothing costs two threshold
// evaluations more than step_once; after kMaxTries tries the last one is kept, whatever it
// crossed.
template <class Real, class M>
HW_INTEGRATOR_FN void step_to_thresholds(const M& m, Integrator method, Real t, Real dt, Real* y,
                                         const Real* p, const Real* c) {
  constexpr int kMaxTries = 32;
  constexpr Real kSliver = Real(1e-4);  // of dt
  constexpr int kG = Thresholds<M>::value;
  constexpr int kScratch = Sizes<M>::states;
  const int n = m.n_states(), ng = threshold_count(m);
  Real g0[kG], g1[kG], y0[kScratch];
  Real done = Real(0);  // the fraction of dt already taken
  int tries = 0;
  while (done < Real(1)) {
    const Real t0 = t + done * dt;
    m.thresholds(t0, y, p, c, g0);
    HW_STATE_LOOP
    for (int i = 0; i < n; ++i) y0[i] = y[i];
    Real part = Real(1) - done;  // the fraction of dt this pass tries
    for (;;) {
      step_once(m, method, t0, part * dt, y, p, c);
      ++tries;
      m.thresholds(t0 + part * dt, y, p, c, g1);
      Real first = Real(1);  // fraction of the try at its first crossing (NaN never compares less)
      for (int k = 0; k < ng; ++k) {
        if ((g0[k] > Real(0)) == (g1[k] > Real(0))) continue;
        const Real at = g0[k] / (g0[k] - g1[k]);
        if (at < first) first = at;
      }
      if (!(first < Real(1)) || part <= 2 * kSliver || tries >= kMaxTries) break;
      HW_STATE_LOOP
      for (int i = 0; i < n; ++i) y[i] = y0[i];
      const Real before = first * part - kSliver;
      part = before > kSliver ? before : 2 * kSliver;
    }
    done += part;
    if (tries >= kMaxTries) {
      // Out of tries short of the end: the rest in one step, as step_once would.
      if (done < Real(1)) step_once(m, method, t + done * dt, (Real(1) - done) * dt, y, p, c);
      return;
    }
  }
}

}  // namespace detail

// Advances one cell by dt. y has n_states entries; c holds the cell's computed constants.
template <class Real, class M>
HW_INTEGRATOR_FN void step_cell(const M& m, Integrator method, Real t, Real dt, Real* y, const Real* p,
                                const Real* c) {
  if constexpr (detail::Thresholds<M>::value > 0) {
    if (detail::threshold_count(m) > 0) {
      detail::step_to_thresholds(m, method, t, dt, y, p, c);
      return;
    }
  }
  detail::step_once(m, method, t, dt, y, p, c);
}

#if !defined(__CUDACC_RTC__)
// A batch of cells in structure-of-arrays layout: state k of cell i is y[k*stride + i];
// with per_cell_params, parameter k of cell i is p[k*stride + i], else p[k] for all.
template <class Real>
struct Batch {
  std::size_t n = 0;
  std::size_t stride = 0;
  Real* y = nullptr;
  const Real* p = nullptr;
  bool per_cell_params = false;
  // Optional, for kernels whose external_voltage(k) is true, with shared parameters only:
  // the voltage (state v_state) of cell i is v[i], read and written in place, and y holds
  // the other states with that slot left out (state k at slot k < v_state ? k : k − 1).
  // The tissue engine steps its compact state arrays and the next V field this way,
  // without copying them into a scratch batch.
  Real* v = nullptr;
  int v_state = -1;
};

// Advances every cell of the batch by `steps` steps of dt from t.
template <class Real, class M>
inline void step_batch(const M& m, Integrator method, Real t, Real dt, int steps,
                       const Batch<Real>& b) {
  const int ns = m.n_states(), np = m.n_params(), nc = m.n_constants();
  Real c_uniform[kMaxParams];
  if (!b.per_cell_params) m.constants(b.p, c_uniform);
  for (std::size_t i = 0; i < b.n; ++i) {
    Real y[kMaxStates], p[kMaxParams], c_cell[kMaxParams];
    const Real* pc = b.p;
    const Real* cc = c_uniform;
    if (b.per_cell_params) {
      for (int k = 0; k < np; ++k) p[k] = b.p[k * b.stride + i];
      m.constants(p, c_cell);
      pc = p;
      cc = c_cell;
    }
    (void)nc;
    for (int k = 0; k < ns; ++k) y[k] = b.y[k * b.stride + i];
    for (int s = 0; s < steps; ++s) step_cell(m, method, t + s * dt, dt, y, pc, cc);
    for (int k = 0; k < ns; ++k) b.y[k * b.stride + i] = y[k];
  }
}

#endif  // !__CUDACC_RTC__

}  // namespace hw::cell
