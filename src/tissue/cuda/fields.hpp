// The CUDA engine's arrays in device memory, built once from the set-up: V (twice: the
// steps swap them), the Strang field, the row table, 1/φ, the stencil's coefficients, and
// per part its states, parameters and cell list (the stimuli: tissue/cuda/stimuli.hpp).
//
// The layout is the cpu engine's (compressed rows, SoA states per part): a state saved by
// one engine loads into the other (tissue/engine.hpp, CanonicalState).
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/device.hpp"
#include "kernels/cuda/part_args.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/cuda/kernel_source.hpp"
#include "tissue/cuda/variants.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue::cuda {

// A part's arrays. y_aside: the states' second buffer, for a part offered several steps per
// pass (their passes write the states there and back, in pairs).
struct DevicePart {
  gpu::DeviceBuffer y, y_aside, p, cells;
};

template <class Real>
class DeviceFields {
 public:
  // asked: the kernel variant forced by name ("" for none), whose arrays are counted.
  DeviceFields(gpu::Device& dev, const SimSetup& s, const std::string& asked)
      : dev_(dev), s_(s), layout_(row_layout(s.geo.grid, s.geo.mask)) {
    links_ = !uniform_sigma_case(s);
    check_memory(asked);
    build_fields();
    build_parts(asked);
  }

  const RowLayout& layout() const { return layout_; }
  bool links() const { return links_; }
  bool all_tissue_box() const { return layout_.box && s_.geo.mask.empty(); }
  std::size_t bytes() const { return bytes_; }
  const gpu::DeviceBuffer& v(int k) const { return v_[std::size_t(k)]; }
  gpu::DeviceBuffer& v(int k) { return v_[std::size_t(k)]; }
  const gpu::DeviceBuffer& strang() const { return tmp_; }
  const gpu::DeviceBuffer& inv_phi() const { return inv_phi_; }
  std::vector<DevicePart>& parts() { return parts_; }
  const std::vector<DevicePart>& parts() const { return parts_; }

  // The state slot of state k of part p (V is not stored with the states).
  static std::size_t slot(const Part& p, int k) { return std::size_t(k < p.kv ? k : k - 1); }

  // A device buffer counted in the engine's memory.
  template <class T>
  gpu::DeviceBuffer put(const std::vector<T>& v, const char* what) {
    bytes_ += v.size() * sizeof(T);
    return gpu::DeviceBuffer::from(dev_, v, what);
  }

  // The grid, the row layout and the stencil's coefficients, for every kernel (`fail`: the
  // failure flag's two words).
  hw::cuda::PartArgs<Real> geometry_args(gpu::DevicePtr fail) const {
    hw::cuda::PartArgs<Real> a{};
    a.base = reinterpret_cast<const unsigned*>(base_.ptr());
    a.links = links_;
    for (int k = 0; k < 3; ++k) {
      a.face[k] = reinterpret_cast<const Real*>(face_[k].ptr());
      a.edge[k] = reinterpret_cast<const Real*>(edge_[k].ptr());
      a.w[k] = Real(w_[k]);
    }
    a.zero_row = reinterpret_cast<const Real*>(zero_row_.ptr());
    a.inv_phi = reinterpret_cast<const Real*>(inv_phi_.ptr());
    a.alpha = Real(s_.time.dt / (s_.chi * s_.cm));
    a.fail = reinterpret_cast<unsigned long long*>(fail);
    a.fail_step = a.fail + 1;
    a.j1 = unsigned(s_.geo.grid.ny());
    a.c1 = ~0u;
    return a;
  }

  // Launches fn(a, extra) on `on` with a thread per tissue cell (the kernels instantiated
  // with hw_tissue_V): over the box where it is all tissue, else over the tissue cell list
  // (built on first use). Blocks of whole warps: the kernels sum over warps. `into`: added to
  // that graph instead.
  // columns: the CG's stencil kernels on a box where columns() holds walk columns of
  // layers (kernels/cuda/diffusion_cg.cuh, Columns): gridDim.z is then ⌈nz / 8⌉.
  template <class Extra>
  void launch_over_tissue(const gpu::Stream& on, void* fn, hw::cuda::PartArgs<Real>& a, Extra* extra,
                          gpu::KernelGraph* into = nullptr, bool columns = false) {
    void* args[] = {&a, extra};
    if (!all_tissue_box()) {
      tissue_list();
      a.cells = reinterpret_cast<const unsigned*>(tissue_cells_.ptr());
      a.n = tissue_ncells_;
    }
    const auto [grid, block] = tissue_launch_shape(columns);
    if (into)
      into->add(fn, grid, block, args);
    else
      gpu::launch(on, fn, grid, block, args);
  }

  // The blocks of a launch over the tissue (launch_over_tissue): the CG sizes its partial
  // sums by it.
  unsigned long long tissue_launch_blocks(bool columns = false) {
    const auto [grid, block] = tissue_launch_shape(columns);
    return (unsigned long long)grid[0] * grid[1] * grid[2];
  }

  // Whether the CG's stencil kernels walk columns here: the box all tissue, σ uniform,
  // second order (the kernels' Columns<V>::on, from the same facts).
  bool columns() const { return all_tissue_box() && !links_ && s_.order != StencilOrder::fourth; }

 private:
  // Blocks of 256 threads: on a whole box, rows of 32, 64, 128 or 256 cells, whichever pads
  // nx least (the N-version slab's 400: 32, 4 % padding, where 256 left 22 % of the threads
  // idle in the CG's stencil); on a masked grid, over the list of tissue cells.
  std::pair<gpu::Dim3, gpu::Dim3> tissue_launch_shape(bool columns = false) {
    constexpr unsigned tb = 256;
    if (columns && !this->columns()) throw Error("a column launch on a grid without columns (internal error)");
    if (all_tissue_box()) {
      const Grid& gr = s_.geo.grid;
      unsigned bx = 32;
      const auto padded = [&](unsigned w) { return (unsigned(gr.nx()) + w - 1) / w * w; };
      for (unsigned w = 64; w <= tb; w *= 2)
        if (padded(w) < padded(bx)) bx = w;
      const unsigned by = tb / bx;
      // Columns of 8 layers: enough blocks to fill the GPU on the N-version slab (400 × 140
      // × 60: 1,872 blocks), and a column's first three loads a small part of its work.
      const unsigned layers = columns ? (unsigned(gr.nz()) + 7) / 8 : unsigned(gr.nz());
      return {{(unsigned(gr.nx()) + bx - 1) / bx, (unsigned(gr.ny()) + by - 1) / by, layers}, {bx, by, 1}};
    }
    tissue_list();
    return {{unsigned((tissue_ncells_ + tb - 1) / tb), 1, 1}, {tb, 1, 1}};
  }

  void tissue_list() {
    if (!tissue_cells_.empty()) return;
    std::vector<std::uint32_t> cells;
    for (std::size_t n = 0; n < s_.geo.grid.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) cells.push_back(std::uint32_t(n));
    tissue_cells_ = put(cells, "the tissue cell list");
    tissue_ncells_ = cells.size();
  }

  // Refuses, before allocating anything, a case whose arrays do not fit in free memory.
  void check_memory(const std::string& asked) const {
    const std::size_t S = layout_.size();
    std::size_t need = 2 * S * sizeof(Real);
    if (s_.time.splitting == Splitting::strang) need += S * sizeof(Real);
    if (!s_.phi.empty()) need += S * sizeof(Real);
    if (links_) need += 3 * S * sizeof(Real) + (s_.sigma.has_off_diagonal() ? 3 * S * sizeof(Real) : 0);
    if (!layout_.box) need += layout_.rows() * 4;
    const std::array<unsigned, 3> n{unsigned(s_.geo.grid.nx()), unsigned(s_.geo.grid.ny()), unsigned(s_.geo.grid.nz())};
    for (const Part& p : s_.parts)
      for (const KernelVariant* v : offered_variants(part_context(s_, layout_, p, 0), asked))
        if (v->tower) need += 2 * most_tower_slots(n) * sizeof(Real);
    for (const Part& p : s_.parts) {
      need += std::size_t(p.ns - 1) * p.n * sizeof(Real);
      if (offers_several_steps(part_context(s_, layout_, p, 0), asked)) need += std::size_t(p.ns - 1) * p.n * sizeof(Real);
      need += (p.per_cell ? std::size_t(p.np) * p.n : std::size_t(p.np)) * sizeof(Real);
      if (!p.identity) need += p.n * 4;
      // The stimulus field and the stimuli's cell lists (at most every cell once each).
      if (!s_.stimuli.empty()) need += p.n * sizeof(Real);
      for (const ResolvedStimulus& r : s_.stimuli.list()) need += r.cells[std::size_t(&p - s_.parts.data())].size() * 4;
    }
    const auto [free, total] = dev_.memory_info();
    if (need > free)
      throw Error(fmt::format("GPU out of memory: the case needs {:.1f} MiB on GPU {}, {:.1f} MiB of "
                              "{:.1f} MiB are free; run in float (time.precision = \"float\"), on a "
                              "smaller case, or with --backend cpu",
                              need / 1048576.0, dev_.ordinal(), free / 1048576.0, total / 1048576.0));
  }

  // V, the Strang field, the row table, 1/φ and the stencil's coefficients. V starts at
  // zero: the engine loads the initial state (initial_state, tissue/engine.hpp).
  void build_fields() {
    const Grid& g = s_.geo.grid;
    const std::size_t S = layout_.size();
    const std::vector<Real> zero(S, Real(0));
    v_[0] = put(zero, "the voltage field");
    v_[1] = put(zero, "the voltage field");
    if (s_.time.splitting == Splitting::strang) tmp_ = put(zero, "the Strang field");
    if (!layout_.box) {
      std::vector<std::uint32_t> base(layout_.rows());
      for (std::size_t r = 0; r < base.size(); ++r) base[r] = std::uint32_t(layout_.base[r]);
      base_ = put(base, "the row table");
    }
    if (!s_.phi.empty()) {
      const std::vector<double> inv = phase_inverse(s_.phi, s_.geo.mask, layout_);
      inv_phi_ = put(std::vector<Real>(inv.begin(), inv.end()), "1/phi");
    }
    if (links_) {
      const auto lc = kernels::build_link_coeffs<Real>(g, s_.sigma, s_.geo.mask.empty() ? nullptr : &s_.geo.mask,
                                                       layout_);
      for (int a = 0; a < 3; ++a) {
        if (!lc.face[a].empty()) face_[a] = put(lc.face[a], "the link coefficients");
        if (!lc.edge[a].empty()) edge_[a] = put(lc.edge[a], "the link coefficients");
      }
      zero_row_ = put(lc.zero_row, "a zero row");
    } else {
      // Second order: σ_a/h_a²; fourth (σ isotropic): σ/(12 h_a²), d2_fourth's weight.
      const auto& u = s_.sigma.uniform_value();
      const double div = s_.order == StencilOrder::fourth ? 12.0 : 1.0;
      for (int a = 0; a < 3; ++a) w_[a] = g.active(a) ? u[a] / (div * g.h[a] * g.h[a]) : 0.0;
    }
  }

  // Per part: states (loaded later), parameters and cell list.
  void build_parts(const std::string& asked) {
    parts_.resize(s_.parts.size());
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      DevicePart& d = parts_[q];
      d.y = put(std::vector<Real>(std::size_t(p.ns - 1) * p.n, Real(0)), "the cell states");
      if (offers_several_steps(part_context(s_, layout_, p, 0), asked))
        d.y_aside = put(std::vector<Real>(std::size_t(p.ns - 1) * p.n, Real(0)), "the cell states' second buffer");
      const auto& pv = p.per_cell ? p.pcell : p.params;
      d.p = put(std::vector<Real>(pv.begin(), pv.end()), "the cell parameters");
      if (!p.identity) d.cells = put(p.cells, "the cell lists");
    }
  }

  gpu::Device& dev_;
  const SimSetup& s_;
  RowLayout layout_;
  bool links_ = false;
  std::size_t bytes_ = 0;
  std::array<gpu::DeviceBuffer, 2> v_;
  gpu::DeviceBuffer tmp_, base_, inv_phi_, zero_row_;
  std::array<gpu::DeviceBuffer, 3> face_, edge_;
  std::array<double, 3> w_{0, 0, 0};
  std::vector<DevicePart> parts_;
  gpu::DeviceBuffer tissue_cells_;
  std::size_t tissue_ncells_ = 0;
};

}  // namespace hw::tissue::cuda
