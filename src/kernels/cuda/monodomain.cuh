// The fused monodomain step on the GPU: one thread per tissue cell of a model region
// ("part") reads V and its neighbours, diffuses, adds the stimulus, runs the cell model with
// its states in registers and writes V and the states back: a cell's state crosses device
// memory once per step (seed 000 Opt 2a, seed 001's fused kernel).
//
// This header is not compiled into heartwave: it is text that the CUDA engine hands to
// NVRTC together with the model's printed CUDA (model/emit/cuda_printer) and a few lines
// that instantiate part_step for it (tissue/cuda/engine.cpp). The stencil bodies are the
// cpu engine's own (kernels/stencil_k.hpp), so both compute the same sums in the same order.
//
// Storage (docs/tissue.md): V in a RowLayout (cell (i, r) at base[r] + i, or the plain box
// when base is null); the part's states but V in structure-of-arrays over its cells, state
// k (k ≠ kv) at y[slot(k)·n + c]; parameters uniform (p[k]) or per cell (p[k·n + c]).
#pragma once

#include "kernels/cuda/part_args.hpp"
#include "kernels/activation_k.hpp"
#include "kernels/stimulus_k.hpp"
#include "kernels/stencil_k.hpp"

namespace hw::cuda {

// Index m on an axis of n cells: across a periodic wall the far side, across a no-flux wall
// -1 (the caller then reads the cell itself).
template <bool Periodic>
__device__ __forceinline__ int wrap(int m, int n) {
  if (m >= 0 && m < n) return m;
  if constexpr (Periodic) return m < 0 ? m + n : m - n;
  return -1;
}

// On the box, the storage offsets from a cell to its two neighbours along one axis (i of n
// cells, stride s): the same neighbours as wrap(), and the cell itself (offset 0) past a
// no-flux wall. Offsets rather than indices because the neighbours' addresses then come
// from one pointer: the index arithmetic, not the model, was most of the instructions of a
// small model's step. Only a periodic wall's offset spans the grid, so only it is 64-bit.
template <bool Periodic>
__device__ __forceinline__ auto next_offset(unsigned i, unsigned n, int s) {
  if constexpr (Periodic)
    return i + 1 < n ? (long long)s : (long long)s - (long long)n * s;
  else
    return i + 1 < n ? s : 0;
}
template <bool Periodic>
__device__ __forceinline__ auto prev_offset(unsigned i, unsigned n, int s) {
  if constexpr (Periodic)
    return i > 0 ? -(long long)s : (long long)n * s - s;
  else
    return i > 0 ? -s : 0;
}

// The neighbours' values along one axis of the box (the cell c0 itself past a no-flux wall).
// With the grid compiled in, s is a constant: an interior neighbour is one load at a fixed
// offset from the cell's own address, with no address arithmetic of its own.
template <bool Periodic, class Real>
__device__ __forceinline__ Real next_value(const Real* c, unsigned i, unsigned n, int s, Real c0) {
  if constexpr (Periodic)
    return c[next_offset<true>(i, n, s)];
  else
    return i < n - 1 ? c[s] : c0;  // n ≥ 1; not i + 1 < n, which the compiler must allow to wrap
}
template <bool Periodic, class Real>
__device__ __forceinline__ Real prev_value(const Real* c, unsigned i, unsigned n, int s, Real c0) {
  if constexpr (Periodic)
    return c[prev_offset<true>(i, n, s)];
  else
    return i > 0 ? c[-s] : c0;
}

// The activation maps' update for cell g (grid index), V from a to b over the step; only
// what changed is written back.
template <class Real>
__device__ __forceinline__ void track(const PartArgs<Real>& a, unsigned g, float va, float vb, double t_prev_ms) {
  float act = a.act[g];
  if (!a.with_apd) {
    if (act == act) return;
    float none = 0;
    io::activation_update(va, vb, a.thr, t_prev_ms, a.dt_ms, false, act, none, none, none);
    if (act == act) a.act[g] = act;
    return;
  }
  float apd = a.apd[g];
  if (act == act && apd == apd) return;  // both maps done for this cell
  float vr = a.v_rest[g], vp = a.v_peak[g];
  const float act0 = act, vr0 = vr, vp0 = vp;
  io::activation_update(va, vb, a.thr, t_prev_ms, a.dt_ms, true, act, apd, vr, vp);
  if (act != act0 && act == act) a.act[g] = act;
  if (apd == apd) a.apd[g] = apd;
  if (vr != vr0) a.v_rest[g] = vr;
  if (vp != vp0) a.v_peak[g] = vp;
}

// The cell thread c stands for, and its coordinates: a whole-grid launch over (x, y, z)
// blocks needs no division; a launch over a cell list reads the grid index. False for the
// threads past the end. Indices fit 32 bits (the engine refuses grids of 2^32 cells).
template <class Real, class V>
__device__ __forceinline__ bool locate(const PartArgs<Real>& a, unsigned& c, unsigned& i, unsigned& j,
                                       unsigned& k) {
  constexpr unsigned nx = V::nx, ny = V::ny;
  if constexpr (!V::cells) {
    i = blockIdx.x * blockDim.x + threadIdx.x;
    j = a.j0 + blockIdx.y * blockDim.y + threadIdx.y;
    k = a.k0 + blockIdx.z;
    if (i >= nx || j >= a.j1) return false;
    c = i + nx * (j + ny * k);
  } else {
    c = a.c0 + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= unsigned(a.n) || c >= a.c1) return false;
    const unsigned g = a.cells[c];
    const unsigned r = g / nx;
    i = g - r * nx;
    j = r % ny;
    k = r / ny;
  }
  return true;
}

// Storage index of cell x = 0 of row (jj, kk).
template <class Real, class V>
__device__ __forceinline__ unsigned row_base(const PartArgs<Real>& a, int jj, int kk) {
  const unsigned rr = unsigned(jj) + V::ny * unsigned(kk);
  if constexpr (V::box)
    return rr * V::nx;
  else
    return a.base[rr];
}

// (L v)(i, j, k), v in layout storage, the cell's row starting at v + s0: the cpu engine's
// stencil bodies (kernels/stencil_k.hpp) with the neighbours found here.
template <class Real, class V>
__device__ __forceinline__ Real laplacian(const PartArgs<Real>& a, const Real* v, unsigned i,
                                          unsigned j, unsigned k, unsigned s0) {
  if constexpr (V::fourth) {
    // Fourth order (the box, σ constant and isotropic; w[a] = σ/(12 h_a²)): the cpu
    // operator's sums in its order (kernels/cpu/diffusion.cpp), the neighbours two cells
    // away mirrored across a no-flux wall or wrapped across a periodic one. An axis of one
    // cell adds its own V's (zero) term, as the cpu rows do.
    constexpr int nx = V::nx, ny = V::ny, nz = V::nz;
    const int ii = int(i), jj = int(j), kk = int(k);
    const Real* row = v + s0;
    const Real c = row[i];
    Real lv = Real(0);
    if (nx > 1)
      lv += kernels::d2_fourth(row[kernels::mirror_or_wrap(ii - 2, nx, V::periodic_x)],
                               row[kernels::mirror_or_wrap(ii - 1, nx, V::periodic_x)], c,
                               row[kernels::mirror_or_wrap(ii + 1, nx, V::periodic_x)],
                               row[kernels::mirror_or_wrap(ii + 2, nx, V::periodic_x)], a.w[0]);
    auto along_y = [&](int d) {
      return ny > 1 ? v[row_base<Real, V>(a, kernels::mirror_or_wrap(jj + d, ny, V::periodic_y), kk) + i] : c;
    };
    auto along_z = [&](int d) {
      return nz > 1 ? v[row_base<Real, V>(a, jj, kernels::mirror_or_wrap(kk + d, nz, V::periodic_z)) + i] : c;
    };
    lv += kernels::d2_fourth(along_y(-2), along_y(-1), c, along_y(1), along_y(2), a.w[1]);
    lv += kernels::d2_fourth(along_z(-2), along_z(-1), c, along_z(1), along_z(2), a.w[2]);
    return lv;
  }
  if constexpr (V::box && !V::links) {
    constexpr unsigned nx = V::nx, ny = V::ny, nz = V::nz;
    constexpr int sy = int(nx), sz = int(nx * ny);
    const Real* c = v + (s0 + i);  // as part_step indexes V, so that its load serves both
    const Real c0 = c[0];
    return kernels::uniform_laplacian(
        a.w[0], a.w[1], a.w[2], c0, next_value<V::periodic_x>(c, i, nx, 1, c0),
        prev_value<V::periodic_x>(c, i, nx, 1, c0), next_value<V::periodic_y>(c, j, ny, sy, c0),
        prev_value<V::periodic_y>(c, j, ny, sy, c0), next_value<V::periodic_z>(c, k, nz, sz, c0),
        prev_value<V::periodic_z>(c, k, nz, sz, c0));
  }
  const Real* v0 = v + s0;
  const int ii = int(i), jj0 = int(j), kk0 = int(k);
  const int ip0 = wrap<V::periodic_x>(ii + 1, V::nx), im0 = wrap<V::periodic_x>(ii - 1, V::nx);
  const int jp = wrap<V::periodic_y>(jj0 + 1, V::ny), jm = wrap<V::periodic_y>(jj0 - 1, V::ny);
  const int kp = wrap<V::periodic_z>(kk0 + 1, V::nz), km = wrap<V::periodic_z>(kk0 - 1, V::nz);
  auto vrow = [&](int jj, int kk) -> const Real* {
    return (jj < 0 || kk < 0) ? v0 : v + row_base<Real, V>(a, jj, kk);
  };
  if constexpr (!V::links) {
    return kernels::uniform_laplacian(a.w[0], a.w[1], a.w[2], v0[i], v0[ip0 < 0 ? i : ip0],
                                      v0[im0 < 0 ? i : im0], vrow(jp, kk0)[i], vrow(jm, kk0)[i],
                                      vrow(jj0, kp)[i], vrow(jj0, km)[i]);
  } else {
    auto crow = [&](const Real* f, int jj, int kk) -> const Real* {
      return (!f || jj < 0 || kk < 0) ? a.zero_row : f + row_base<Real, V>(a, jj, kk);
    };
    const auto rows = kernels::link_rows<Real, Real>(vrow, crow, a.face, a.edge, jj0, kk0, jp, jm, kp, km);
    // As the cpu rows: a missing x neighbour is the cell itself, its links switched off on
    // the −x side (mm = 0); on the +x side the face weight is zero there.
    const int ip = ip0 < 0 ? ii : ip0;
    const int im = im0 < 0 ? ii : im0;
    return kernels::links_laplacian(rows, ii, ip, im, im0 < 0 ? Real(0) : Real(1));
  }
}

// Cell c's parameters (uniform, or per cell) and the model's constants from them.
template <class Real, class M, class V>
__device__ __forceinline__ void model_parameters(const PartArgs<Real>& a, unsigned c, Real* p, Real* cst) {
  const unsigned n = unsigned(a.n);
#pragma unroll
  for (int q = 0; q < M::np; ++q) {
    if constexpr (V::per_cell)
      p[q] = a.p[q * n + c];
    else
      p[q] = a.p[q];
  }
  M::constants(p, cst);
}

// V (mV) in the model's unit: compiled in, a factor of one costs no multiplication (FTZ keeps
// the compiler from folding x·1).
template <class Real, class M>
__device__ __forceinline__ Real to_model_units(Real v) {
  if constexpr (M::to_model != Real(1))
    return v * M::to_model;
  else
    return v;
}
template <class Real, class M>
__device__ __forceinline__ Real to_mv_units(Real v) {
  if constexpr (M::to_mv != Real(1))
    return v * M::to_mv;
  else
    return v;
}

// The model over the pass from t: V::substeps compiled in (one: no loop), or 0: a loop over
// a.substeps, a count known only at run time on purpose. The step is then a block of its own
// that the compiler does not interleave with the loads and the stencil before it.
// Interleaved, a small model hides the loads' latency (Karma ran 13 % faster); a large one
// takes more registers (O'Hara-Rudy 255 instead of 171) and runs slower. The tuner times both.
template <class Real, class M, class V>
__device__ __forceinline__ void model_step(const PartArgs<Real>& a, Real t, Real* y, const Real* p, const Real* cst) {
  if constexpr (V::substeps == 1) {
    M::step(t, a.hs, y, p, cst);
  } else if constexpr (V::substeps > 1) {
#pragma unroll 1
    for (int sub = 0; sub < V::substeps; ++sub) M::step(t + Real(sub) * a.hs, a.hs, y, p, cst);
  } else {
#pragma unroll 1
    for (int sub = 0; sub < a.substeps; ++sub) M::step(t + Real(sub) * a.hs, a.hs, y, p, cst);
  }
}

// The NaN policy's report of cell g (grid index), whose V is not finite: its first state but
// V that is not finite (V itself if none), and the step word (PartArgs::fail_step).
template <class Real, class M>
__device__ __forceinline__ void report_failure(const PartArgs<Real>& a, unsigned g, const Real* y,
                                               unsigned long long step) {
  int bad = M::kv;
#pragma unroll
  for (int q = M::ns - 1; q >= 0; --q)
    if (q != M::kv && !kernels::finite_value(y[q], a.max_finite)) bad = q;
  atomicMin(a.fail, ((unsigned long long)g << 9) | (unsigned long long)(bad + 1));
  atomicMin(a.fail_step, step);
}

// The rest of cell c's step once V is diffused (v, mV): the stimulus, the model with its
// states in registers, the NaN policy, the write-back of V (storage index sv, grid index g)
// and the states, and the maps. M: the instantiation's model (static ns, np, nc, kv;
// constants(); step()). V: what the case needs, known when the kernel is compiled, so a box
// with uniform σ carries no code for row tables, link coefficients, phase fields or cell
// lists (static bool box, links, fourth, phase, cells, per_cell, stimuli, periodic_x,
// periodic_y, periodic_z; static unsigned nx, ny, nz; static int substeps, 0 for a loop
// over a.substeps). Returns the V written (the tower layout passes it on to its neighbours).
template <class Real, class M, class V>
__device__ __forceinline__ Real react(const PartArgs<Real>& a, const PassTime<Real>& when, unsigned c, unsigned g,
                                      unsigned sv, Real v) {
  const unsigned n = unsigned(a.n);
  Real y[M::ns], p[M::np > 0 ? M::np : 1], cst[M::nc > 0 ? M::nc : 1];
  model_parameters<Real, M, V>(a, c, p, cst);
  y[M::kv] = to_model_units<Real, M>(v);
  // Compiled out for a run without stimuli: the test and the load it guards cost Karma 18 %
  // of its steps on the H200 (docs/benchmarks.md), though the branch is never taken.
  if (V::stimuli && a.stim_on) y[M::kv] = kernels::add_stimulus(y[M::kv], a.stim, c);
#pragma unroll
  for (int q = 0; q < M::ns; ++q)
    if (q != M::kv) y[q] = a.y[unsigned(q < M::kv ? q : q - 1) * n + c];
  model_step<Real, M, V>(a, when.t, y, p, cst);
  // NaN policy: a cell whose V is not finite keeps its states and reports itself.
  if (!kernels::finite_value(y[M::kv], a.max_finite)) {
    report_failure<Real, M>(a, g, y, when.step);
    return y[M::kv];  // not written: the run stops at this step
  }
  // The states' addresses again, from a copy of c the compiler cannot see through: else it
  // keeps the loads' addresses live across the model's step for these stores, a register
  // per state (TT06: 80 registers instead of 64), where recomputing them costs an IMAD each.
  unsigned c_out;
  asm("mov.u32 %0, %1;" : "=r"(c_out) : "r"(c));
#pragma unroll
  for (int q = 0; q < M::ns; ++q)
    if (q != M::kv) a.y[unsigned(q < M::kv ? q : q - 1) * n + c_out] = y[q];
  const Real vnew = to_mv_units<Real, M>(y[M::kv]);
  a.vout[sv] = vnew;
  if (a.act) track(a, g, float(a.vstart[sv]), float(vnew), when.t_prev_ms);
  return vnew;
}

// One thread per cell of the part.
template <class Real, class M, class V>
__device__ __forceinline__ void part_step(const PartArgs<Real>& a) {
  unsigned c, i, j, k;
  if (!locate<Real, V>(a, c, i, j, k)) return;
  if (*a.fail != ~0ull) return;  // a failed step stops the steps queued after it
  const PassTime<Real>& when = a.clock[a.slot];
  const unsigned g = i + V::nx * (j + V::ny * k);
  const unsigned s0 = row_base<Real, V>(a, int(j), int(k));
  Real v = a.vin[s0 + i];
  if (a.diffuse) {
    const Real lv = laplacian<Real, V>(a, a.vin, i, j, k, s0);
    if constexpr (V::phase)
      v = kernels::diffused_phase(lv, v, a.alpha, a.inv_phi[s0 + i]);
    else
      v = kernels::diffused(lv, v, a.alpha, Real(1));
  }
  react<Real, M, V>(a, when, c, g, s0 + i, v);
}

// Blocks of at most this many threads run the sliding window (its tile is sized for them).
constexpr unsigned kWindowThreads = 256;

// The 2.5D sliding window (Micikevicius 2009; seed 001's "JDC"), for a part that is the
// whole box with uniform σ: a block of bx × by threads holds an XY tile of V with its one-
// cell halo in shared memory and steps through depth = ⌈nz / gridDim.z⌉ layers, each thread
// carrying its column's V below, at and above the layer in registers. A layer's seven
// values come from the tile and those registers instead of seven loads through the cache,
// and the address of each is computed once per column, not once per cell. The sums are
// part_step's, in its order: both give the same bits.
//
// Tower (seed 004's towerDS, seed 001 §1.4): the window's x halos are a column of by cells
// each side, one cache sector per row, loaded by the tile's edge threads alone. The tower
// layout keeps them in slots of their own, a layer's 2·by values side by side per tile
// ("tower": the tile's column of layers), written by the neighbouring towers in the step
// before as they write V: a layer's x halos are then one coalesced load by the block's
// first threads. Two changes from the seed: V itself stays in the box order that every
// other kernel, the snapshots and the checkpoints read (the seed stores each tower's cells
// contiguously, which its y and z neighbours do not need: a tile's row is one run in either
// order); and an edge thread stores its new V straight into the neighbour's slot, with no
// second tile and barrier to gather them first. The slots are double-buffered as V is:
// halo_in holds the x halos of vin, halo_out receives vout's. Where halo_in is not vin's
// (halo_valid = 0: the first step, after another kernel or block shape, a restart) the
// halos are read from V as the window does.
template <class Real, class M, class V, bool Tower = false>
__device__ __forceinline__ void part_step_window(const PartArgs<Real>& a) {
  static_assert(V::box && !V::links && !V::cells && !V::fourth,
                "the sliding window runs on the whole box with uniform sigma, second order");
  // Two tiles, layers alternating: a layer's tile is written while the one before is read,
  // so one barrier a layer suffices. (bx + 2)(by + 2) values each: at most 3·258.
  constexpr unsigned kTile = 3 * (kWindowThreads + 2);
  __shared__ Real tiles[2 * kTile];
  __shared__ int stop;
  // A failed step stops the steps queued after it; read once for the block, which must
  // reach every barrier below together.
  if (threadIdx.x == 0 && threadIdx.y == 0) stop = *a.fail != ~0ull;
  __syncthreads();
  if (stop) return;
  constexpr unsigned nx = V::nx, ny = V::ny, nz = V::nz;
  const unsigned tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y, w = bx + 2;
  const unsigned i = blockIdx.x * bx + tx, j = blockIdx.y * by + ty;
  const bool in = i < nx && j < ny;
  const unsigned depth = (nz + gridDim.z - 1) / gridDim.z;
  const unsigned k0 = blockIdx.z * depth, k1 = min(k0 + depth, nz);
  const PassTime<Real>& when = a.clock[a.slot];
  const int sy = int(nx), sz = int(nx * ny);
  const unsigned at = (ty + 1) * w + tx + 1;  // this thread's cell in a tile
  // The halo: the tile's edge threads load the cells past it (past a no-flux wall, the
  // cell itself; across a periodic one, the far side).
  const bool x_lo = tx == 0, x_hi = tx == bx - 1 || i == nx - 1;
  const bool y_lo = ty == 0, y_hi = ty == by - 1 || j == ny - 1;
  const auto xp = next_offset<V::periodic_x>(i, nx, 1), xm = prev_offset<V::periodic_x>(i, nx, 1);
  const auto yp = next_offset<V::periodic_y>(j, ny, sy), ym = prev_offset<V::periodic_y>(j, ny, sy);
  // Tower: thread l < 2·by of the block carries x-halo slot l of each layer, row l % by of
  // the left column (l < by) or the right one, into the tile (column 0, or the one past the
  // tile's last cell in the grid).
  const unsigned slots = 2 * by, tower = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned l = ty * bx + tx, hrow = l % by, wx = min(bx, nx - blockIdx.x * bx);
  const bool carrier = Tower && l < slots && blockIdx.y * by + hrow < ny;
  const unsigned hat = (hrow + 1) * w + (l < by ? 0 : wx + 1);
  // The carrier's cell in V, for a fresh start: the column past the tile, or at a wall the
  // tile's own edge (no flux) or the far side (periodic).
  const unsigned i0 = blockIdx.x * bx;
  const unsigned hi = l < by ? (i0 > 0 ? i0 - 1 : V::periodic_x ? nx - 1 : 0)
                             : (i0 + wx < nx ? i0 + wx : V::periodic_x ? 0 : nx - 1);
  const unsigned hg = hi + nx * (blockIdx.y * by + hrow);
  // The next layer's halo and the column's V above it are loaded while this layer computes:
  // loaded just before the barrier, each would wait out a memory latency with nothing to
  // overlap it (the first version did, and ran at 0.47 of the copy roof on Karma).
  struct Halo {
    Real xm, xp, ym, yp, slot;
  };
  const auto load_halo = [&](unsigned g, unsigned k, Halo& h) {
    if constexpr (Tower)
      if (carrier) h.slot = a.halo_valid ? a.halo_in[(tower * nz + k) * slots + l] : a.vin[hg + unsigned(sz) * k];
    if (!in) return;
    const Real* c = a.vin + g;
    if constexpr (!Tower) {
      if (x_lo) h.xm = c[xm];
      if (x_hi) h.xp = c[xp];
    }
    if (y_lo) h.ym = c[ym];
    if (y_hi) h.yp = c[yp];
  };
  const auto fill = [&](Real* tile, bool here_in, Real v, const Halo& h) {
    Real* centre = tile + at;
    if (here_in) {
      *centre = v;
      if constexpr (!Tower) {
        if (x_lo) centre[-1] = h.xm;
        if (x_hi) centre[1] = h.xp;
      }
      if (y_lo) centre[-int(w)] = h.ym;
      if (y_hi) centre[w] = h.yp;
    }
    if constexpr (Tower)
      if (carrier) tile[hat] = h.slot;
  };
  // Tower: where an edge thread's new V goes, the slot of its row in the neighbouring
  // tower's column facing it (across a periodic wall the far tower's, at a no-flux wall its
  // own tower's: the cell itself stands in for the missing neighbour).
  const unsigned to_left = i > 0 ? (tower - 1) * nz * slots + by + ty
                                 : V::periodic_x ? (tower + gridDim.x - 1) * nz * slots + by + ty
                                                 : tower * nz * slots + ty;
  const unsigned to_right = i + 1 < nx ? (tower + 1) * nz * slots + ty
                                       : V::periodic_x ? (tower + 1 - gridDim.x) * nz * slots + ty
                                                       : tower * nz * slots + by + ty;
  unsigned g = i + nx * (j + ny * k0);
  Real below = 0, here = 0, above = 0;
  if (in && k0 < k1) {
    here = a.vin[g];
    below = a.vin[g + prev_offset<V::periodic_z>(k0, nz, sz)];
    above = a.vin[g + next_offset<V::periodic_z>(k0, nz, sz)];
  }
  if (a.diffuse && k0 < k1) {
    Halo h{};
    if (in || carrier) load_halo(g, k0, h);
    fill(tiles, in, here, h);
  }
  if (a.diffuse) __syncthreads();
  for (unsigned k = k0; k < k1; ++k, g += unsigned(sz)) {
    const Real* centre = tiles + ((k - k0) & 1u) * kTile + at;
    Real next_above = 0;
    Halo next_halo{};
    if (k + 1 < k1) {
      if (in) next_above = a.vin[g + unsigned(sz) + next_offset<V::periodic_z>(k + 1, nz, sz)];
      if (a.diffuse && (in || carrier)) load_halo(g + unsigned(sz), k + 1, next_halo);
    }
    if (in) {
      Real v = here;
      if (a.diffuse) {
        const Real lv = kernels::uniform_laplacian(a.w[0], a.w[1], a.w[2], here, centre[1], centre[-1], centre[w],
                                                   centre[-int(w)], above, below);
        if constexpr (V::phase)
          v = kernels::diffused_phase(lv, v, a.alpha, a.inv_phi[g]);
        else
          v = kernels::diffused(lv, v, a.alpha, Real(1));
      }
      const Real vnew = react<Real, M, V>(a, when, g, g, g, v);
      if constexpr (Tower) {
        if (x_lo) a.halo_out[to_left + k * slots] = vnew;
        if (x_hi) a.halo_out[to_right + k * slots] = vnew;
      }
    }
    if (a.diffuse) {
      // The next layer into the other tile, which every thread finished reading before the
      // last barrier.
      if (k + 1 < k1) fill(tiles + ((k + 1 - k0) & 1u) * kTile, in, above, next_halo);
      __syncthreads();
    }
    below = here;
    here = above;
    above = next_above;
  }
}

}  // namespace hw::cuda
