// Several time steps per pass over memory (seed 001's "temporal blocking" route past one
// pass's roof): a block advances its tile of the box K steps while V and the states cross
// device memory once, for a small model on the whole box with uniform σ, Godunov splitting
// and explicit diffusion (tissue/cuda/variants.hpp offers it; the tuner keeps it only where
// it wins).
//
// The tile. A block of bx × by threads, one per (x, y) column, covers bx × by columns of
// which the inner (bx − 2K) × (by − 2K) are its output: the K columns around them are halo,
// stepped again by the neighbouring blocks (recomputed rather than exchanged), each step
// leaving one ring fewer of them right. Along z the block marches through its layers
// [z0, z1) and K more each side (fewer at a wall), and the K steps are a pipeline over the
// march: when the block has read layer q, step 1 advances layer q − 1, step 2 layer q − 2,
// …, step K layer q − K, whose result is written. A step's z neighbours are the thread's
// own registers (the layer below, at and above at the level before); its x and y
// neighbours the level before's layer in shared memory, written the iteration before, so
// one barrier an iteration suffices (the tiles of even and odd iterations alternate). A
// sheet (nz = 1) is marched along y instead, its tile a row of bx columns of x (by = 1),
// whose halo is K cells at each end.
//
// What it shares with a thread per cell (monodomain.cuh, part_step): the stencil's sums
// (kernels::uniform_laplacian in the same argument order), the diffusion update, the model's
// printed step and the maps' update: the same values, bit for bit
// (CudaTissue.KernelVariantsGiveTheSameBits). What differs: where the neighbours come from,
// and the output. The states are read from a.y and written to a.y_out (the block's halo
// columns read their neighbours' states at the pass's start, which those blocks would
// otherwise have overwritten), and V from vin to vout: K is odd, so V ends in the field a
// single-step pass would leave it in. The engine runs these passes in pairs, y → y_out →
// y, so the states are back in their buffer after each pair.
//
// NaN policy: a cell of the output whose V is not finite at any of the K steps is not
// written and reports itself with the pass's first step (and kSeveralSteps), whose state
// (vin, a.y) the pass has not touched; kStatesAside when that state's cell states are in the
// second buffer (the second pass of a pair). The engine goes back to that state and steps
// one step at a time to the failure, so the run stops where, and as, single steps stop it.
#pragma once

#include "kernels/cuda/monodomain.cuh"

namespace hw::cuda {

// Threads per block of the several-steps kernel, at most: its tiles are sized for them.
constexpr unsigned kStepsThreads = 1024;

// The cell of an axis for column m of a tile: across a periodic wall the far side; past a
// no-flux wall, -1 (no cell: the column is idle).
template <bool Periodic>
__device__ __forceinline__ int column_cell(int m, int n) {
  if constexpr (Periodic) return ((m % n) + n) % n;
  return m >= 0 && m < n ? m : -1;
}

template <class Real, class M, class V, int K>
__device__ __forceinline__ void part_steps(const PartArgs<Real>& a) {
  static_assert(V::box && !V::links && !V::cells && !V::fourth && !V::phase,
                "several steps per pass run on the whole box with uniform sigma, second order");
  static_assert(K % 2 == 1, "K odd: a pass's input and output are V's two fields");
  constexpr int S = M::ns - 1;  // the states but V
  constexpr int nx = int(V::nx), ny = int(V::ny), nz = int(V::nz);
  // A sheet (one layer in z) is marched along y, its tile a row of x columns (by = 1): the
  // halo is then K cells at each end of a row, not a ring around a square.
  constexpr bool march_y = nz == 1 && ny > 1;
  constexpr int layers = march_y ? ny : nz;
  constexpr bool periodic_m = march_y ? V::periodic_y : V::periodic_z;
  constexpr unsigned layer_stride = march_y ? unsigned(nx) : unsigned(nx * ny);
  // Level s's layer of V (s = 0: as read), even and odd iterations: 48 KiB in double at K = 3.
  __shared__ Real tiles[K][2][kStepsThreads];
  // A failed step stops the steps queued after it; block-uniform, since every thread must
  // reach every barrier below.
  if (__syncthreads_or(threadIdx.x == 0 && threadIdx.y == 0 && *a.fail != ~0ull)) return;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y), bx = int(blockDim.x), by = int(blockDim.y);
  const int tid = ty * bx + tx;
  const int gi = int(blockIdx.x) * (bx - 2 * K) + tx - K;
  const int gj = march_y ? 0 : int(blockIdx.y) * (by - 2 * K) + ty - K;
  const int ci = column_cell<V::periodic_x>(gi, nx), cj = march_y ? 0 : column_cell<V::periodic_y>(gj, ny);
  const bool active = ci >= 0 && cj >= 0;
  const bool output =
      active && tx >= K && tx < bx - K && gi < nx && (march_y || (ty >= K && ty < by - K && gj < ny));
  // Where in the tile each neighbour is, as an offset from the column's own place: past a
  // no-flux wall the cell stands in for it (as next_value/prev_value do), so the offset is 0
  // and the read finds the cell's own V of the level before; at the tile's edge the column is
  // halo whose result is not kept. Offsets, not tests: the levels then read at fixed
  // distances from two addresses an iteration.
  const int at_xm = tx > 0 && (V::periodic_x || gi > 0) ? -1 : 0;
  const int at_xp = tx < bx - 1 && (V::periodic_x || gi < nx - 1) ? 1 : 0;
  const int at_ym = !march_y && ty > 0 && (V::periodic_y || gj > 0) ? -bx : 0;
  const int at_yp = !march_y && ty < by - 1 && (V::periodic_y || gj < ny - 1) ? bx : 0;
  const int depth = (layers + int(gridDim.z) - 1) / int(gridDim.z);
  const int z0 = int(blockIdx.z) * depth, z1 = min(z0 + depth, layers);
  const int start = periodic_m ? z0 - K : max(z0 - K, 0), end = periodic_m ? z1 + K : min(z1 + K, layers);
  const unsigned column = active ? unsigned(ci + nx * cj) : 0u;
  // The cell of this column in layer z: z runs from start − … to end + K (the layers past
  // the march's ends are stepped and never kept); they are wrapped, or clamped at a wall, only
  // so that their per-cell parameters are read in bounds.
  const auto cell_at = [&](int z) {
    if constexpr (periodic_m) {
      if constexpr (layers >= 2 * K)
        z = z < 0 ? z + layers : z >= layers ? z - layers : z;
      else
        z = column_cell<true>(z, layers);
    } else {
      z = min(z, layers - 1);
    }
    return column + layer_stride * unsigned(z);
  };
  const unsigned n = unsigned(a.n);
  // The K steps' times, read once (step s's clock is 2s slots on: one part, Godunov).
  Real t_of[K];
#pragma unroll
  for (int s = 0; s < K; ++s) t_of[s] = a.clock[a.slot + 2u * unsigned(s)].t;
  const unsigned long long fail_step = a.clock[a.slot].step | kSeveralSteps | (a.states_aside ? kStatesAside : 0ull);

  // Level s (0: as read) keeps, for the layer q it last produced, V at q − 2, q − 1, q, and
  // its states at q − 1 (y_st), which level s + 1 steps next. Its states at q wait in
  // `pending` while level s + 1 reads y_st: a layer's states for each level, and one more.
  Real lo[K], mid[K], hi[K], y_st[K][S > 0 ? S : 1], pending[S > 0 ? S : 1];
#pragma unroll
  for (int s = 0; s < K; ++s) {
    lo[s] = mid[s] = hi[s] = Real(0);
#pragma unroll
    for (int q = 0; q < S; ++q) y_st[s][q] = Real(0);
  }
  // The layer read next, loaded an iteration ahead so that its latency hides behind the steps.
  Real v_next = Real(0), y_next[S > 0 ? S : 1];
#pragma unroll
  for (int q = 0; q < S; ++q) y_next[q] = Real(0);
  const auto load = [&](int z) {
    if (!active || z >= end) return;
    const unsigned c = cell_at(z);
    v_next = a.vin[c];
#pragma unroll
    for (int q = 0; q < S; ++q) y_next[q] = a.y[unsigned(q) * n + c];
  };
  load(start);
  const int iterations = z1 - start + K;
  for (int it = 0; it < iterations; ++it) {
    const int q0 = start + it;
    // Level s's tile of this iteration is at now + 2s·kStepsThreads, of the one before at
    // before + 2s·kStepsThreads: two addresses an iteration, the levels' offsets constants.
    Real* const now = &tiles[0][it & 1][tid];
    const Real* const before = &tiles[0][(it & 1) ^ 1][tid];
    const Real *const before_xm = before + at_xm, *const before_xp = before + at_xp;
    const Real *const before_ym = before + at_ym, *const before_yp = before + at_yp;
    // Level 0: the layer read.
    lo[0] = mid[0];
    mid[0] = hi[0];
    hi[0] = v_next;
#pragma unroll
    for (int q = 0; q < S; ++q) pending[q] = y_next[q];
    *now = hi[0];
    load(q0 + 1);
#pragma unroll
    for (int s = 1; s <= K; ++s) {
      const int z = q0 - s;  // the layer level s steps now
      if (z < start) {  // the pipeline is still filling (block-uniform)
#pragma unroll
        for (int q = 0; q < S; ++q) y_st[s - 1][q] = pending[q];
        continue;
      }
      const Real here = mid[s - 1];
      const Real below = !periodic_m && z == 0 ? here : lo[s - 1];
      const Real above = !periodic_m && z == layers - 1 ? here : hi[s - 1];
      const int level = 2 * (s - 1) * int(kStepsThreads);  // level s − 1's tile
      const Real xm = before_xm[level], xp = before_xp[level];
      // The sums in part_step's order; on a sheet the layers' neighbours are y's, and z's
      // the cell itself (an axis of one cell, as next_value gives).
      Real lv;
      if constexpr (march_y) {
        lv = kernels::uniform_laplacian(a.w[0], a.w[1], a.w[2], here, xp, xm, above, below, here, here);
      } else {
        const Real ym = before_ym[level], yp = before_yp[level];
        lv = kernels::uniform_laplacian(a.w[0], a.w[1], a.w[2], here, xp, xm, yp, ym, above, below);
      }
      const Real v = kernels::diffused(lv, here, a.alpha, Real(1));
      // The model's step, as react() takes it (no stimulus: these passes run only where none is on).
      const Real t = t_of[s - 1];
      const unsigned c = cell_at(z);
      Real y[M::ns], p[M::np > 0 ? M::np : 1], cst[M::nc > 0 ? M::nc : 1];
      model_parameters<Real, M, V>(a, c, p, cst);
      y[M::kv] = to_model_units<Real, M>(v);
#pragma unroll
      for (int q = 0; q < M::ns; ++q)
        if (q != M::kv) y[q] = y_st[s - 1][q < M::kv ? q : q - 1];
      // Level s − 1's states at the layer it produced now, for level s next time.
#pragma unroll
      for (int q = 0; q < S; ++q) y_st[s - 1][q] = pending[q];
      model_step<Real, M, V>(a, t, y, p, cst);
      const Real vnew = to_mv_units<Real, M>(y[M::kv]);
      const bool mine = output && z >= z0 && z < z1;
      bool ok = true;
      if (mine && !kernels::finite_value(y[M::kv], a.max_finite)) {
        report_failure<Real, M>(a, c, y, fail_step);
        ok = false;
      }
      if (mine && ok && a.act) track(a, c, float(here), float(vnew), a.clock[a.slot + 2u * unsigned(s - 1)].t_prev_ms);
      if (s < K) {
        lo[s] = mid[s];
        mid[s] = hi[s];
        hi[s] = vnew;
#pragma unroll
        for (int q = 0; q < M::ns; ++q)
          if (q != M::kv) pending[q < M::kv ? q : q - 1] = y[q];
        now[2 * s * int(kStepsThreads)] = vnew;
      } else if (mine && ok) {
        a.vout[c] = vnew;
#pragma unroll
        for (int q = 0; q < M::ns; ++q)
          if (q != M::kv) a.y_out[unsigned(q < M::kv ? q : q - 1) * n + c] = y[q];
      }
    }
    __syncthreads();
  }
}

}  // namespace hw::cuda
