// The CUDA engine: the cpu engine's storage (compressed rows, SoA states per part) in device
// memory, and one fused kernel per model region compiled at run time.
//
// Why NVRTC per case: the cell model is inlined into the tissue kernel with its integrator
// chosen at compile time, so a cell's states live in registers for the whole step and its
// state crosses device memory once per step (seeds 000 and 001). The kernel text
// (kernels/cuda/monodomain.cuh) is the same for every model; the printed model
// (model/emit/cuda_printer) and a few lines per part are appended, compiled for the device's
// architecture and cached (device/compile.hpp).
//
// A step launches one kernel per part (Strang: two passes). A non-finite V sets a device
// flag; the host reads it after each step, or after a batch of steps (advance()), where
// kernels queued after the failure do nothing, so the last good state is kept either way.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "device/block_tuner.hpp"
#include "device/compile.hpp"
#include "device/driver.hpp"
#include "device/embedded.hpp"
#include "kernels/cuda/cg_args.hpp"
#include "kernels/cuda/ecg_args.hpp"
#include "kernels/cuda/part_args.hpp"
#include "kernels/diffusion_kernels.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/passes/specialise.hpp"
#include "tissue/engine.hpp"
#include "tissue/diffusion.hpp"
#include "tissue/diffusion_stepper.hpp"
#include "mesh/row_layout.hpp"

namespace hw::tissue {

namespace {

constexpr unsigned kThreads = 256;  // per block; the kernel's __launch_bounds__
// A kernel of more than 64 registers per thread gets three more variants for the tuner to
// time: its registers capped by the launch bounds at the occupancy step below (128: 2
// blocks of 256 per SM; 64: 4), and both again with the model's step fenced off from the
// loads and the stencil (a sub-step loop of run-time count: monodomain.cuh, react).
// O'Hara-Rudy at 172 registers keeps 8 warps per SM, at 128 with 80 B spilled 16, and runs
// 19 % faster (ord-pig128, H100); unfenced it takes 181 registers, fenced 128. How many
// registers ptxas takes for a mid-sized model moves with small changes around it: TT06's
// step took 64, then 99 once the grid was compiled in (15 % slower); fenced, it takes 64
// again. A cap is no rule either (TT06 given a cap of 128 took 112 registers instead of 64
// and ran 11 % slower), so only kernels above a step get the variants, and only where one
// wins is it kept. A small kernel is left as it is: unfenced, Karma ran 13 % faster.
constexpr unsigned kCappedThreads = 256;
struct Variant {
  const char* suffix;  // of the kernel's name
  const char* name;    // for describe() and HEARTWAVE_CUDA_KERNEL
  bool fenced, capped;
};
constexpr Variant kVariants[] = {{"", "as compiled", false, false},
                                 {"_capped", "capped", false, true},
                                 {"_fenced", "fenced", true, false},
                                 {"_fenced_capped", "fenced, capped", true, true}};

// The register cap of the variants for a kernel of `registers` per thread; 0: none.
int register_cap(int registers) { return registers > 128 ? 128 : registers > 64 ? 64 : 0; }

// The kVariants a part gets (indices), the kernel as compiled first. With several sub-steps
// the kernel as compiled already steps the model inside a loop, a block of its own: fenced
// would add nothing.
std::vector<int> offered_variants(int cap, int substeps) {
  std::vector<int> ids;
  for (int v = 0; v < int(std::size(kVariants)); ++v)
    if (v == 0 || (cap > 0 && (!kVariants[v].fenced || substeps == 1))) ids.push_back(v);
  return ids;
}
// The sliding window (kernels/cuda/monodomain.cuh, part_step_window), each thread stepping
// a column of kWindowDepths layers, and the window on the tower layout (seed 004's towerDS,
// the same launches) run a part that is the whole box with uniform σ. On the H100 neither
// won on any case or block shape timed (docs/benchmarks.md, "The box kernels"; karma3d-256:
// 0.833 of the copy roof with a thread per cell, 0.683 with the window, 0.578 with the
// tower), so they are compiled and timed only when asked for (HEARTWAVE_CUDA_KERNEL=window
// or tower), as the GPU check does at every record to see whether that changes. The
// tower's x halos come from slots that each diffusing pass fills for the next: with
// Strang's reaction-only pass or implicit diffusion between them they would be stale every
// step, so it runs Godunov splitting with explicit diffusion only.
constexpr unsigned kWindowThreads = 256;
constexpr const char* kWindowSuffix = "_window";
constexpr const char* kTowerSuffix = "_tower";
constexpr unsigned kWindowDepths[] = {8, 32};
constexpr unsigned long long kNoFailure = ~0ull;
// Steps per CUDA graph: long enough that the host's launch is nothing beside the steps,
// short enough that graphs stay small (two graphs per length: one per parity).
constexpr long kGraphSteps = 64;
// Steps queued before one check of the failure flag, at most.
constexpr long kMaxBatch = 1024;

// Threads per block for a kernel of `registers` per thread: the size among 256, 128, 64 that
// keeps the most threads resident on an SM (65536 registers, allocated per warp in units of
// 256, at most 2048 threads and 32 blocks), the larger on a tie. A model with many states
// needs many registers, and then smaller blocks fill the SM better (TT06 at 97 registers:
// 5 blocks of 128 = 640 threads against 2 of 256 = 512).
unsigned block_size(int registers) {
  const unsigned per_warp = (unsigned(std::max(registers, 1)) * 32 + 255) / 256 * 256;
  unsigned best = kThreads, best_resident = 0;
  for (unsigned tb : {256u, 128u, 64u}) {
    const unsigned warps = tb / 32;
    const unsigned blocks = std::min({65536u / (per_warp * warps), 2048u / tb, 32u});
    if (blocks * tb > best_resident) {
      best_resident = blocks * tb;
      best = tb;
    }
  }
  return best;
}

// σ uniform and diagonal on a box without a phase field: three weights, no link arrays.
bool uniform_sigma_case(const SimSetup& s) {
  return s.sigma.uniform() && !s.sigma.has_off_diagonal() && s.geo.mask.empty() && s.phi.empty();
}

// The kernel HEARTWAVE_CUDA_KERNEL asks for ("" when unset).
std::string asked_kernel() {
  const char* e = std::getenv("HEARTWAVE_CUDA_KERNEL");
  return e ? e : "";
}

// Whether part p can run as a sliding window: it is the whole box, σ uniform, the stencil
// of second order; and on the tower layout: stepped by Godunov with explicit diffusion.
bool window_fits(const SimSetup& s, const RowLayout& layout, bool links, const Part& p) {
  return layout.box && !links && p.identity && s.order == StencilOrder::second;
}
bool window_case(const SimSetup& s, const RowLayout& layout, bool links, const Part& p) {
  return window_fits(s, layout, links, p) && asked_kernel() == "window";
}
bool tower_case(const SimSetup& s, const RowLayout& layout, bool links, const Part& p) {
  return window_fits(s, layout, links, p) && s.time.splitting == Splitting::godunov &&
         s.time.diffusion == DiffusionScheme::forward_euler && asked_kernel() == "tower";
}

// The tower layout's x-halo slots for blocks of bx × by on grid g: 2·by per tile and layer.
std::size_t tower_slots(const Grid& g, unsigned bx, unsigned by) {
  const std::size_t tiles = (std::size_t(g.nx()) + bx - 1) / bx * ((std::size_t(g.ny()) + by - 1) / by);
  return tiles * std::size_t(g.nz()) * 2 * by;
}
// The most slots any of the tuner's tower launches needs (its narrowest blocks).
std::size_t most_tower_slots(const Grid& g) {
  std::size_t n = 0;
  for (const gpu::Dim3& b : gpu::box_block_shapes(unsigned(g.nx()), unsigned(g.ny()), kWindowThreads))
    n = std::max(n, tower_slots(g, b[0], b[1]));
  return n;
}

// The host copies of field snapshots (gpu::HostCopy: a device buffer, pinned host memory, a
// stream), kept for the next snapshot: pinned memory takes milliseconds to allocate, and a
// run's outputs ask for the same sizes every time. Shared by the engine and its snapshots,
// which give theirs back from the thread that read them.
class HostCopyPool {
 public:
  std::unique_ptr<gpu::HostCopy> take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(m_);
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if ((*it)->capacity() >= bytes) {
          auto c = std::move(*it);
          free_.erase(it);
          return c;
        }
    }
    return std::make_unique<gpu::HostCopy>(bytes, "a field snapshot");
  }
  void give(std::unique_ptr<gpu::HostCopy> c) {
    std::lock_guard<std::mutex> lock(m_);
    free_.push_back(std::move(c));
  }

 private:
  std::mutex m_;
  std::vector<std::unique_ptr<gpu::HostCopy>> free_;
};

// A snapshot in flight: one host copy per stored field, scattered to grid order on read().
template <class Real>
class DeviceSnapshot final : public Snapshot {
 public:
  struct Piece {
    std::size_t variable;
    FieldRef ref;
    std::unique_ptr<gpu::HostCopy> copy;
  };
  DeviceSnapshot(const SimSetup& s, const RowLayout& layout, std::shared_ptr<HostCopyPool> pool,
                 std::size_t variables)
      : s_(s), layout_(layout), pool_(std::move(pool)), variables_(variables) {}
  ~DeviceSnapshot() override {
    for (Piece& p : pieces_)
      if (p.copy) pool_->give(std::move(p.copy));
  }
  void add(std::size_t variable, FieldRef ref, std::unique_ptr<gpu::HostCopy> copy) {
    pieces_.push_back({variable, ref, std::move(copy)});
  }
  void read(std::vector<Field<float>>& out) override {
    const Grid& g = s_.geo.grid;
    out.assign(variables_, Field<float>());
    for (auto& f : out) f.resize(g.size(), std::numeric_limits<float>::quiet_NaN());
    for (Piece& piece : pieces_) {
      const Real* h = static_cast<const Real*>(piece.copy->wait());
      Field<float>& f = out[piece.variable];
      if (piece.ref.part < 0) {
        for (std::size_t n = 0; n < g.size(); ++n)
          if (is_tissue(&s_.geo.mask, n)) f[n] = float(h[layout_.index(n)]);
      } else {
        const Part& p = s_.parts[std::size_t(piece.ref.part)];
        for (std::size_t i = 0; i < p.n; ++i) f[p.grid_index(i)] = float(h[i]);
      }
      pool_->give(std::move(piece.copy));
    }
  }

 private:
  const SimSetup& s_;
  const RowLayout& layout_;
  std::shared_ptr<HostCopyPool> pool_;
  std::size_t variables_;
  std::vector<Piece> pieces_;
};

template <class Real>
class CudaEngine final : public Engine {
 public:
  explicit CudaEngine(const SimSetup& s) : s_(s) {
    check_cuda_support(s.tcase);
    gpu::make_current();
    const Grid& g = s.geo.grid;
    layout_ = row_layout(g, s.geo.mask);
    if (layout_.size() >= (std::size_t(1) << 32) || g.size() >= (std::size_t(1) << 32))
      throw InputError(s.tcase.geometry.loc, "backend cuda: grids of 2^32 cells or more are not supported");
    if (g.nz() > 65535 || g.ny() > 65535 * 8)
      throw InputError(s.tcase.geometry.loc, "backend cuda: more than 65535 cells along z (or 524280 "
                                             "along y) do not fit the GPU's launch grid");
    // The fourth-order stencil's conditions, checked as the cpu operator checks them.
    if (s.order == StencilOrder::fourth) fourth_order_sigma(g, s.sigma, s.geo.mask);
    check_memory();
    build_fields();
    build_parts();
    if (s.time.diffusion != DiffusionScheme::forward_euler) build_implicit();
    compile();
    fail_ = gpu::DeviceBuffer(2 * sizeof(unsigned long long), "the failure flag");
    reset_failure();
    batch_clock_ = gpu::DeviceBuffer(std::size_t(kMaxBatch) * 2 * s.parts.size() * sizeof(hw::cuda::PassTime<Real>),
                                     "the step clock");
    if (const char* e = std::getenv("HEARTWAVE_CUDA_GRAPHS"); e && std::string(e) == "0") use_graphs_ = false;
    tuner_timer_ = std::make_unique<gpu::Timer>();
  }

  void step(long n) override {
    long done = 0;
    advance(n, 1, done);
  }

  // Queues `count` steps from step n, then checks the failure flag once.
  void advance(long n, long count, long& done) override {
    done = 0;
    if (implicit_) {
      // The CG reads its residuals on the host every iteration anyway; stepping one step at a
      // time keeps it from ever running on the V of a failed step.
      for (long m = 0; m < count; ++m) queue_and_check(n + m, 1, done);
      return;
    }
    for (long m = 0; m < count; m += kMaxBatch) queue_and_check(n + m, std::min(kMaxBatch, count - m), done);
  }

  // Queues `count` steps from step n, then reads the failure flag once: the GPU has the
  // whole batch queued and never waits for the host inside it. Adds the steps done to `done`.
  void queue_and_check(long n, long count, long& done) {
    batch_start_ = n;
    write_clock(n, count);
    for (long m = n; m < n + count;) {
      const long chunk = std::min(kGraphSteps, n + count - m);
      if (graph_fits(m, chunk)) {
        launch_graph(m, chunk);
      } else {
        for (long k = m; k < m + chunk; ++k) enqueue(k);
      }
      m += chunk;
    }
    unsigned long long f[2];
    fail_.download(f, sizeof f);
    if (f[0] == kNoFailure) {
      cur_ = int((cur_ + count) % 2);
      done += count;
      return;
    }
    // Steps n .. f[1]−1 succeeded: the state is theirs (the failed step wrote only into its
    // V_next, and later steps did nothing).
    const long good = long(f[1]) - n;
    cur_ = int((cur_ + good) % 2);
    done += good;
    const std::size_t cell = std::size_t(f[0] >> 9);
    const int k = int(f[0] & 511) - 1;
    std::string var = "V";
    for (const Part& p : s_.parts)
      if (k >= 0 && k < p.ns && k != p.kv && contains(p, cell)) var = p.setup.state_names[k];
    reset_failure();
    throw_numerical_error(s_.geo.grid, cell, var, double(f[1]) * s_.time.dt, s_.time.dt);
  }

  void voltage(Field<float>& out) const override {
    const Grid& g = s_.geo.grid;
    download_v();
    out.resize(g.size());
    for (std::size_t n = 0; n < g.size(); ++n)
      out[n] = is_tissue(&s_.geo.mask, n) ? float(host_v_[layout_.index(n)])
                                          : std::numeric_limits<float>::quiet_NaN();
  }

  // The copies start on the default stream after the steps queued so far; the steps queued
  // after them do not wait for the bytes to reach the host.
  std::unique_ptr<Snapshot> snapshot(const std::vector<FieldRefs>& what) const override {
    auto snap = std::make_unique<DeviceSnapshot<Real>>(s_, layout_, copies_, what.size());
    for (std::size_t i = 0; i < what.size(); ++i)
      for (const FieldRef& r : what[i]) {
        std::size_t bytes = layout_.size() * sizeof(Real);
        gpu::DevicePtr src = v_[cur_].ptr();
        if (r.part >= 0) {
          const Part& p = s_.parts[std::size_t(r.part)];
          bytes = p.n * sizeof(Real);
          src = parts_[std::size_t(r.part)].y.ptr() + slot(p, r.state) * p.n * sizeof(Real);
        }
        auto copy = copies_->take(bytes);
        copy->start(src, bytes);
        snap->add(i, r, std::move(copy));
      }
    return snap;
  }

  double voltage_at(std::size_t n) const override {
    if (!is_tissue(&s_.geo.mask, n)) return std::numeric_limits<double>::quiet_NaN();
    Real x;
    v_[cur_].download(&x, sizeof(Real), layout_.index(n) * sizeof(Real));
    return double(x);
  }

  void state(std::size_t q, int k, Field<float>& out) const override {
    const Part& p = s_.parts[q];
    std::vector<Real> y(p.n);
    parts_[q].y.download(y.data(), p.n * sizeof(Real), slot(p, k) * p.n * sizeof(Real));
    for (std::size_t i = 0; i < p.n; ++i) out[p.grid_index(i)] = float(y[i]);
  }

  double state_at(std::size_t q, int k, std::size_t i) const override {
    const Part& p = s_.parts[q];
    Real x;
    parts_[q].y.download(&x, sizeof(Real), (slot(p, k) * p.n + i) * sizeof(Real));
    return double(x);
  }

  CanonicalState save() const override {
    CanonicalState st;
    st.bytes = sizeof(Real);
    for (std::size_t q = 0; q < parts_.size(); ++q) {
      const Part& p = s_.parts[q];
      std::vector<Real> y(std::size_t(p.ns - 1) * p.n);
      parts_[q].y.download(y.data(), y.size() * sizeof(Real));
      st.parts.emplace_back(y.begin(), y.end());
    }
    download_v();
    const Grid& g = s_.geo.grid;
    st.v.reserve(s_.tissue_cells);
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) st.v.push_back(double(host_v_[layout_.index(n)]));
    return st;
  }

  void load(const CanonicalState& st) override {
    for (std::size_t q = 0; q < parts_.size(); ++q) {
      std::vector<Real> y(st.parts[q].begin(), st.parts[q].end());
      parts_[q].y.upload(y.data(), y.size() * sizeof(Real));
    }
    download_v();
    const Grid& g = s_.geo.grid;
    std::size_t i = 0;
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) host_v_[layout_.index(n)] = Real(st.v[i++]);
    v_[cur_].upload(host_v_.data(), host_v_.size() * sizeof(Real));
    halo_block_ = {};  // the tower's halo slots are the old V's
  }

  EngineInfo describe() const override {
    const gpu::DeviceInfo& d = gpu::gpu_status().device;
    EngineInfo info;
    info.backend = fmt::format("cuda ({}, {}, {}; kernels {})", d.name, d.arch(),
                               sizeof(Real) == 8 ? "double" : "float",
                               image_.from_cache ? "from the cache"
                                                 : fmt::format("compiled in {:.1f} s", image_.compile_seconds));
    info.storage = layout_.box ? fmt::format("the whole box on the GPU ({} cells per field)", layout_.size())
                               : fmt::format("compressed rows around the tissue on the GPU, {} cells per "
                                             "field ({:.1f}% of the box)",
                                             layout_.size(), 100.0 * double(layout_.size()) / double(s_.geo.grid.size()));
    info.kernels = fmt::format("one fused diffusion+reaction kernel per model region ({}){}",
                               links_ ? "link coefficients" : "uniform diagonal sigma",
                               inv_phi_.empty() ? "" : ", phase-field no-flux boundary (L(phi sigma) V / phi)");
    if (use_graphs_ && !implicit_)
      info.kernels += graph_batches_ ? fmt::format("; {} batches of steps without a stimulus ran as CUDA graphs",
                                                   graph_batches_)
                                     : "; batches of steps without a stimulus run as CUDA graphs";
    for (const auto& dp : parts_) {
      const gpu::KernelResources r = gpu::kernel_resources(dp.fn());
      info.part_kernels.push_back(fmt::format("printed CUDA via NVRTC ({} registers{}; blocks {})", r.registers,
                                              r.local_bytes ? fmt::format(", {} B local", r.local_bytes) : "",
                                              dp.tuner.describe()));
    }
    return info;
  }

  std::size_t memory_bytes() const override { return bytes_; }

  bool attach_activation(const ActivationMaps& m) override {
    const std::size_t N = s_.geo.grid.size();
    if (m.act.size() != N || (m.with_apd && (m.apd.size() != N || m.v_rest.size() != N || m.v_peak.size() != N)))
      throw Error("activation maps: arrays of the wrong size for this grid");
    graphs_.clear();  // built with the old maps' pointers (or none)
    act_.threshold = m.threshold;
    act_.with_apd = m.with_apd;
    act_.act = put(m.act, "the activation map");
    if (m.with_apd) {
      act_.apd = put(m.apd, "the APD90 map");
      act_.v_rest = put(m.v_rest, "the APD90 map's V_rest");
      act_.v_peak = put(m.v_peak, "the APD90 map's V_peak");
    }
    return true;
  }

  void read_activation(ActivationMaps& m) const override {
    const std::size_t N = s_.geo.grid.size();
    m.threshold = act_.threshold;
    m.with_apd = act_.with_apd;
    auto get = [&](const gpu::DeviceBuffer& b, std::vector<float>& v) {
      v.resize(N);
      b.download(v.data(), N * sizeof(float));
    };
    get(act_.act, m.act);
    if (act_.with_apd) {
      get(act_.apd, m.apd);
      get(act_.v_rest, m.v_rest);
      get(act_.v_peak, m.v_peak);
    }
  }

 private:
  struct DevMaps {
    float threshold = -20;
    bool with_apd = false;
    gpu::DeviceBuffer act, apd, v_rest, v_peak;
  };
  struct DevPart {
    gpu::DeviceBuffer y, p, cells, stim_mask;
    std::vector<void*> fns;    // the kernel as compiled, its offered variants, the window and tower if any
    std::vector<int> variants;  // the kVariants index of each of fns but the window and tower
    int window = -1;            // the index of the sliding window in fns
    int tower = -1;             // the index of the window on the tower layout in fns
    gpu::BlockTuner tuner;   // the variant and block shape
    void* fn() const { return fns[std::size_t(tuner.launch().variant)]; }
  };

  static std::size_t slot(const Part& p, int k) { return std::size_t(k < p.kv ? k : k - 1); }

  static bool contains(const Part& p, std::size_t cell) {
    return p.identity || std::binary_search(p.cells.begin(), p.cells.end(), std::uint32_t(cell));
  }

  // Refuses, before allocating anything, a case whose arrays do not fit in free memory.
  void check_memory() {
    const std::size_t S = layout_.size();
    std::size_t need = 2 * S * sizeof(Real);
    if (s_.time.splitting == Splitting::strang) need += S * sizeof(Real);
    if (!s_.phi.empty()) need += S * sizeof(Real);
    if (!uniform_case()) need += 3 * S * sizeof(Real) + (s_.sigma.has_off_diagonal() ? 3 * S * sizeof(Real) : 0);
    if (!layout_.box) need += layout_.rows() * 4;
    for (const Part& p : s_.parts)
      if (tower_case(s_, layout_, !uniform_case(), p)) need += 2 * most_tower_slots(s_.geo.grid) * sizeof(Real);
    for (const Part& p : s_.parts) {
      need += std::size_t(p.ns - 1) * p.n * sizeof(Real);
      need += (p.per_cell ? std::size_t(p.np) * p.n : std::size_t(p.np)) * sizeof(Real);
      if (!p.identity) need += p.n * 4;
      if (!s_.schedules.empty()) need += p.n * 4;
    }
    const auto [free, total] = gpu::memory_info();
    if (need > free)
      throw Error(fmt::format("GPU out of memory: the case needs {:.1f} MiB on the GPU, {:.1f} MiB of "
                              "{:.1f} MiB are free; run in float (time.precision = \"float\"), on a "
                              "smaller case, or with --backend cpu",
                              need / 1048576.0, free / 1048576.0, total / 1048576.0));
  }

  bool uniform_case() const { return uniform_sigma_case(s_); }

  template <class T>
  gpu::DeviceBuffer put(const std::vector<T>& v, const char* what) {
    bytes_ += v.size() * sizeof(T);
    return gpu::DeviceBuffer::from(v, what);
  }

  void build_fields() {
    const Grid& g = s_.geo.grid;
    const std::size_t S = layout_.size();
    std::vector<Real> v0(S, Real(0));
    for (const Part& p : s_.parts) {
      const Real v = Real(p.setup.initial_states[p.kv] * p.v2mV);
      for (std::size_t i = 0; i < p.n; ++i) v0[layout_.index(p.grid_index(i))] = v;
    }
    for (const ResolvedInitial& ic : s_.initial)
      if (ic.part < 0)
        for (std::uint32_t n : ic.cells)
          if (is_tissue(&s_.geo.mask, n)) v0[layout_.index(n)] = Real(ic.value);
    v_[0] = put(v0, "the voltage field");
    v_[1] = put(v0, "the voltage field");  // off-tissue stored cells never change
    if (s_.time.splitting == Splitting::strang) tmp_ = put(v0, "the Strang field");
    if (!layout_.box) {
      std::vector<std::uint32_t> base(layout_.rows());
      for (std::size_t r = 0; r < base.size(); ++r) base[r] = std::uint32_t(layout_.base[r]);
      base_ = put(base, "the row table");
    }
    if (!s_.phi.empty()) {
      std::vector<Real> ip(S, Real(0));
      for (std::size_t n = 0; n < g.size(); ++n)
        if (s_.phi[n] > 0) ip[layout_.index(n)] = Real(1.0 / s_.phi[n]);
      inv_phi_ = put(ip, "1/phi");
    }
    links_ = !uniform_case();
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

  void build_parts() {
    parts_.resize(s_.parts.size());
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      DevPart& d = parts_[q];
      std::vector<Real> y(std::size_t(p.ns - 1) * p.n);
      for (int k = 0; k < p.ns; ++k)
        if (k != p.kv) std::fill_n(y.data() + slot(p, k) * p.n, p.n, Real(p.setup.initial_states[k]));
      for (const ResolvedInitial& ic : s_.initial)
        if (ic.part == int(q))
          for (std::uint32_t i : ic.cells) y[slot(p, ic.state) * p.n + i] = Real(ic.value);
      d.y = put(y, "the cell states");
      const auto& pv = p.per_cell ? p.pcell : p.params;
      d.p = put(std::vector<Real>(pv.begin(), pv.end()), "the cell parameters");
      if (!p.identity) d.cells = put(p.cells, "the cell lists");
      if (!s_.schedules.empty()) {
        std::vector<std::uint32_t> mask(p.n, 0);
        for (std::size_t st = 0; st < p.stim.size(); ++st)
          for (std::uint32_t i : p.stim[st]) mask[i] |= 1u << st;
        d.stim_mask = put(mask, "the stimulus masks");
      }
    }
  }

  void compile() {
    const std::string arch = gpu::gpu_status().device.arch();
    image_ = gpu::compile_cuda(cuda_kernel_source(s_, sizeof(Real) == 4, kThreads), arch);
    module_ = gpu::Module(image_.image);
    // The register count is known once compiled: kernels above a step are compiled again
    // beside their capped variant (both cached; the tuner picks).
    std::vector<int> caps(parts_.size(), 0);
    bool any = false;
    for (std::size_t q = 0; q < parts_.size(); ++q)
      any |= (caps[q] = register_cap(gpu::kernel_resources(module_.function(fmt::format("hw_part{}", q))).registers)) > 0;
    if (any) {
      image_ = gpu::compile_cuda(cuda_kernel_source(s_, sizeof(Real) == 4, kThreads, caps), arch);
      module_ = gpu::Module(image_.image);
    }
    ecg_fn_ = module_.function("hw_ecg");
    if (implicit_) {
      cg_fn_.apply = module_.function("hw_cg_apply");
      cg_fn_.residual = module_.function("hw_cg_residual");
      cg_fn_.start = module_.function("hw_cg_start");
      cg_fn_.update = module_.function("hw_cg_update");
      cg_fn_.direction = module_.function("hw_cg_direction");
      cg_fn_.weighted_copy = module_.function("hw_cg_weighted_copy");
    }
    const Grid& g = s_.geo.grid;
    for (std::size_t q = 0; q < parts_.size(); ++q) {
      DevPart& d = parts_[q];
      std::vector<std::string> names;
      d.variants = offered_variants(caps[q], s_.time.ode_substeps);
      for (int id : d.variants) {
        const Variant& v = kVariants[id];
        d.fns.push_back(module_.function(fmt::format("hw_part{}{}", q, v.suffix)));
        names.push_back(v.capped ? fmt::format("{} at {} registers", v.name, caps[q]) : v.name);
      }
      std::vector<gpu::Launch> launches;
      for (std::size_t v = 0; v < d.fns.size(); ++v) {
        const unsigned tb = kVariants[d.variants[v]].capped ? kCappedThreads
                                                             : block_size(gpu::kernel_resources(d.fns[v]).registers);
        if (s_.parts[q].identity)
          for (const gpu::Dim3& b : gpu::box_block_shapes(unsigned(g.nx()), unsigned(g.ny()), tb))
            launches.push_back({int(v), b});
        else
          launches.push_back({int(v), {tb, 1, 1}});
      }
      const bool window = window_case(s_, layout_, links_, s_.parts[q]);
      const bool tower = tower_case(s_, layout_, links_, s_.parts[q]);
      if (window || tower) {
        const int v = int(d.fns.size());
        (window ? d.window : d.tower) = v;
        d.fns.push_back(module_.function(fmt::format("hw_part{}{}", q, window ? kWindowSuffix : kTowerSuffix)));
        names.push_back(window ? "sliding window" : "tower");
        for (const gpu::Dim3& b : gpu::box_block_shapes(unsigned(g.nx()), unsigned(g.ny()), kWindowThreads))
          for (unsigned depth : kWindowDepths)
            launches.push_back({v, b, std::min(depth, unsigned(g.nz())), tower});
        // A grid thinner than the depths offers the same launch twice.
        launches.erase(std::unique(launches.begin(), launches.end()), launches.end());
        if (tower) {
          const std::vector<Real> none(most_tower_slots(g), Real(0));
          for (auto& h : halo_) h = put(none, "the tower layout's halo slots");
        }
      }
      keep_only_asked_kernel(launches, d.variants, {d.window, d.tower});
      if (names.size() == 1) names.clear();
      d.tuner = gpu::BlockTuner(launches, names,
                                image_.cache_path + fmt::format(".part{}.{}x{}x{}.block", q, g.nx(), g.ny(), g.nz()));
    }
  }

  // HEARTWAVE_CUDA_KERNEL=cell|capped|fenced|fenced-capped|window|tower leaves the tuner only
  // that kernel's launches (tests compare the kernels' bits, benchmarks their speeds; the
  // window and the tower exist only when asked for); unset, or a kernel this part lacks,
  // leaves them all.
  static void keep_only_asked_kernel(std::vector<gpu::Launch>& launches, const std::vector<int>& variants,
                                     std::array<int, 2> window_tower) {
    const std::string k = asked_kernel();
    if (k.empty()) return;
    const char* known[] = {"cell", "capped", "fenced", "fenced-capped", "window", "tower"};
    const auto at = std::find(std::begin(known), std::end(known), k);
    if (at == std::end(known))
      throw Error(fmt::format("HEARTWAVE_CUDA_KERNEL={}: expected cell, capped, fenced, fenced-capped, window or tower",
                              k));
    const int asked = int(at - std::begin(known));  // cell..fenced-capped: the kVariants index
    const auto offered = std::find(variants.begin(), variants.end(), asked);
    const int v = asked >= 4 ? window_tower[std::size_t(asked - 4)]
                             : offered != variants.end() ? int(offered - variants.begin()) : -1;
    if (v < 0) return;
    std::erase_if(launches, [&](const gpu::Launch& l) { return l.variant != v; });
  }

  void reset_failure() {
    const unsigned long long f[2] = {kNoFailure, kNoFailure};
    fail_.upload(f, sizeof f);
  }

  // Steps [n, n + count) of the batch as one graph launch. A graph is built once per (parity
  // of the current field at its start, steps, place in the batch) from the launches
  // enqueue() would make; its nodes read their times from their slots of the batch clock.
  void launch_graph(long n, long count) {
    const long place = (n - batch_start_) / kGraphSteps;
    std::unique_ptr<gpu::KernelGraph>& g = graphs_[{cur_of(n), count, place}];
    if (!g) {
      g = std::make_unique<gpu::KernelGraph>();
      building_ = g.get();
      for (long m = n; m < n + count; ++m) enqueue(m);
      building_ = nullptr;
    }
    g->launch();
    ++graph_batches_;
    // Replayed, its passes left what they left when it was built: every step on the tower
    // (graph_fits), so both fields' halo slots.
    for (const DevPart& d : parts_)
      if (d.tower >= 0 && d.tuner.launch().variant == d.tower) halo_block_ = {d.tuner.launch().block, d.tuner.launch().block};
  }

  // The times of every pass of steps [n, n + count) into the batch clock, at slot
  // ((m − n)·2 + pass)·parts + q (pass 1: Strang's second, half a step in). The upload is
  // synchronous and comes after the last check of the failure flag, which waited for every
  // kernel queued before: no kernel still reads the old times.
  void write_clock(long n, long count) {
    const std::size_t P = s_.parts.size();
    std::vector<hw::cuda::PassTime<Real>> times(std::size_t(count) * 2 * P);
    for (long m = 0; m < count; ++m)
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t q = 0; q < P; ++q)
          times[(std::size_t(m) * 2 + std::size_t(pass)) * P + q] =
              pass_time(n + m, pass * 0.5 * s_.time.dt, s_.parts[q].t2ms);
    batch_clock_.upload(times.data(), times.size() * sizeof(times[0]));
  }

  // Whether the batch of steps [n, n + count) can be one graph launch: explicit diffusion
  // (the CG reads its residuals on the host), the block shapes tuned, and no stimulus on in
  // any of its steps (the only arguments that change from step to step besides the step).
  bool graph_fits(long n, long count) const {
    if (!use_graphs_ || implicit_ || count < 2) return false;
    for (const DevPart& d : parts_) {
      if (d.tuner.tuning()) return false;
      // A graph's tower passes read their halo slots (halo_valid is fixed in it).
      if (d.tower >= 0 && d.tuner.launch().variant == d.tower &&
          halo_block_[std::size_t(cur_of(n))] != d.tuner.launch().block)
        return false;
    }
    for (const StimulusSchedule& sch : s_.schedules)
      for (long m = n; m < n + count; ++m)
        if (sch.on(m)) return false;
    return true;
  }

  // One step from step n: Godunov, one diffusing pass; Strang, a reaction half step into
  // the Strang field, then a diffusing pass with the second half.
  void enqueue(long n) {
    const double dt = s_.time.dt;
    unsigned active = 0;
    for (std::size_t q = 0; q < s_.schedules.size(); ++q)
      if (s_.schedules[q].on(n)) active |= 1u << q;
    const gpu::DeviceBuffer& cur = v_[cur_of(n)];
    const gpu::DeviceBuffer& next = v_[1 - cur_of(n)];
    if (implicit_) {
      // Implicit diffusion of the whole dt by CG into V_next, then the reaction in place.
      const gpu::DeviceBuffer* from = &cur;
      double h = dt;
      int second = 0;
      if (s_.time.splitting == Splitting::strang) {
        pass(cur, tmp_, false, 0.5 * dt, 0, active, n, nullptr);
        if (failed()) return;
        from = &tmp_;
        h = 0.5 * dt;
        second = 1;
      }
      gpu::copy_device(next.ptr(), from->ptr(), layout_.size() * sizeof(Real));
      solve(next);
      pass(next, next, false, h, second, active, n, &cur);
      return;
    }
    if (s_.time.splitting == Splitting::godunov) {
      pass(cur, next, true, dt, 0, active, n, &cur);
    } else {
      pass(cur, tmp_, false, 0.5 * dt, 0, active, n, nullptr);
      pass(tmp_, next, true, 0.5 * dt, 1, active, n, &cur);
    }
  }
  // The field that is current at step n of a batch started from cur_ at step n0: tracked
  // by parity, since each step swaps.
  int cur_of(long n) const { return int((cur_ + (n - batch_start_)) % 2); }

  // When a pass that starts t_shift ms into step n runs (t in model units of t2ms ms).
  hw::cuda::PassTime<Real> pass_time(long n, double t_shift, double t2ms) const {
    const double t0 = double(n) * s_.time.dt;
    return {t0, static_cast<unsigned long long>(n), Real((t0 + t_shift) / t2ms)};
  }

  // Pass `second` of step n (1: Strang's second, half a step in). track: V at the step's
  // start, when this pass ends the step (the maps are updated then).
  void pass(const gpu::DeviceBuffer& vin, const gpu::DeviceBuffer& vout, bool diffuse, double h,
            int second, unsigned active, long n, const gpu::DeviceBuffer* track) {
    const Grid& g = s_.geo.grid;
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      const DevPart& d = parts_[q];
      hw::cuda::PartArgs<Real> a = geometry_args();
      a.vin = reinterpret_cast<const Real*>(vin.ptr());
      a.vout = reinterpret_cast<Real*>(vout.ptr());
      a.diffuse = diffuse;
      a.n = p.n;
      a.cells = reinterpret_cast<const unsigned*>(d.cells.ptr());
      a.y = reinterpret_cast<Real*>(d.y.ptr());
      a.p = reinterpret_cast<const Real*>(d.p.ptr());
      a.per_cell = p.per_cell;
      a.stim_mask = reinterpret_cast<const unsigned*>(d.stim_mask.ptr());
      a.stim_active = 0;
      for (std::size_t st = 0; st < p.stim.size(); ++st)
        if ((active >> st & 1u) && !p.stim[st].empty()) {
          a.stim_active |= 1u << st;
          a.stim_add[st] = Real(h * p.stim_rate[st]);
        }
      a.clock = reinterpret_cast<const hw::cuda::PassTime<Real>*>(batch_clock_.ptr());
      a.slot = unsigned((std::size_t(n - batch_start_) * 2 + std::size_t(second)) * s_.parts.size() + q);
      a.dt_ms = s_.time.dt;
      a.hs = Real(h / s_.time.ode_substeps / p.t2ms);
      a.substeps = s_.time.ode_substeps;
      a.max_finite = std::numeric_limits<Real>::max();
      if (track && !act_.act.empty()) {
        a.act = reinterpret_cast<float*>(act_.act.ptr());
        a.apd = reinterpret_cast<float*>(act_.apd.ptr());
        a.v_rest = reinterpret_cast<float*>(act_.v_rest.ptr());
        a.v_peak = reinterpret_cast<float*>(act_.v_peak.ptr());
        a.vstart = reinterpret_cast<const Real*>(track->ptr());
        a.thr = act_.threshold;
        a.with_apd = act_.with_apd;
      }
      void* args[] = {&a};
      // The diffusing passes time the block shapes under trial (tuner_timer_ synchronises).
      DevPart& dt = parts_[q];
      const bool timed = diffuse && dt.tuner.tuning();
      if (timed) tuner_timer_->start();
      const gpu::Launch& l = dt.tuner.launch();
      const gpu::Dim3 b = l.block;
      // A window thread steps l.depth layers; a thread of the other kernels one cell.
      const gpu::Dim3 grid = p.identity ? gpu::Dim3{(unsigned(g.nx()) + b[0] - 1) / b[0],
                                                    (unsigned(g.ny()) + b[1] - 1) / b[1],
                                                    (unsigned(g.nz()) + l.depth - 1) / l.depth}
                                        : gpu::Dim3{unsigned((p.n + b[0] - 1) / b[0]), 1, 1};
      // The tower's halo slots: those of vin if the pass that wrote vin left them for this
      // block shape; this pass leaves vout's (any other kernel writing vout, none).
      const int in_field = &vin == &v_[0] ? 0 : &vin == &v_[1] ? 1 : -1;
      const int out_field = &vout == &v_[0] ? 0 : &vout == &v_[1] ? 1 : -1;
      const bool tower = d.tower >= 0 && l.variant == d.tower;
      if (tower) {
        a.halo_in = reinterpret_cast<const Real*>(halo_[std::size_t(std::max(in_field, 0))].ptr());
        a.halo_out = reinterpret_cast<Real*>(halo_[std::size_t(std::max(out_field, 0))].ptr());
        a.halo_valid = in_field >= 0 && out_field >= 0 && halo_block_[std::size_t(in_field)] == b;
      }
      if (out_field >= 0) halo_block_[std::size_t(out_field)] = tower && in_field >= 0 ? b : gpu::Dim3{0, 0, 0};
      if (building_)
        building_->add(d.fn(), grid, b, args);
      else
        gpu::launch(d.fn(), grid, b, args);
      if (timed) dt.tuner.record(tuner_timer_->stop_ms());
    }
  }

  // The grid, the row layout and the stencil's coefficients, for every kernel.
  hw::cuda::PartArgs<Real> geometry_args() const {
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
    a.fail = reinterpret_cast<unsigned long long*>(fail_.ptr());
    a.fail_step = a.fail + 1;
    return a;
  }

  bool failed() const {
    unsigned long long f = 0;
    fail_.download(&f, sizeof f);
    return f != kNoFailure;
  }

  // ---- implicit diffusion: (Φ − θ·a·L) V⁺ = rhs by Jacobi-preconditioned CG (cg.hpp) ----

  void build_implicit() {
    implicit_ = true;
    const Grid& g = s_.geo.grid;
    const std::size_t S = layout_.size();
    theta_ = s_.time.diffusion == DiffusionScheme::backward_euler ? 1.0 : 0.5;
    a_ = s_.time.dt / (s_.chi * s_.cm);
    cg_tol_ = s_.time.cg_tolerance;
    if (sizeof(Real) == 4) cg_tol_ = std::max(cg_tol_, 1e-6);
    // diag(Φ − θ·a·L) = w − θ·a·L_nn from the cpu operator's diagonal (w = φ on tissue, 1
    // elsewhere), as the cpu stepper builds its preconditioner.
    const auto op = make_diffusion_operator(diffusion_setup(s_, layout_), Backend::cpu);
    std::vector<double> w(S, 1.0);
    if (!s_.phi.empty())
      for (std::size_t n = 0; n < g.size(); ++n)
        if (is_tissue(&s_.geo.mask, n)) w[layout_.index(n)] = s_.phi[n];
    std::vector<Real> inv(S), wr(S);
    for (std::size_t i = 0; i < S; ++i) {
      inv[i] = Real(1.0 / (w[i] - theta_ * a_ * op->diagonal()[i]));
      wr[i] = Real(w[i]);
    }
    cg_inv_diag_ = put(inv, "the CG preconditioner");
    if (!s_.phi.empty()) cg_w_ = put(wr, "the phase field's weights");
    std::vector<Real> zero(S, Real(0));
    for (auto* b : {&cg_r_, &cg_z_, &cg_p_, &cg_q_, &cg_b_}) *b = put(zero, "the CG vectors");
    cg_sums_ = gpu::DeviceBuffer(2 * sizeof(double), "the CG sums");
  }

  bool all_tissue_box() const { return layout_.box && s_.geo.mask.empty(); }

  // Runs one CG kernel with the sums zeroed first, and returns the sums.
  std::array<double, 2> reduce(void* fn, hw::cuda::CgArgs<Real>& g, bool stencil) {
    cg_sums_.fill_zero();
    g.sums = reinterpret_cast<double*>(cg_sums_.ptr());
    if (stencil) {
      hw::cuda::PartArgs<Real> a = geometry_args();
      launch_over_tissue(fn, a, &g);
    } else {
      void* args[] = {&g};
      gpu::launch(fn, {unsigned((layout_.size() + 255) / 256), 1, 1}, {256, 1, 1}, args);
    }
    std::array<double, 2> out{};
    cg_sums_.download(out.data(), sizeof out);
    return out;
  }

  // Launches fn(a, extra) with a thread per tissue cell (the kernels instantiated with
  // hw_tissue_V): over the box where it is all tissue, else over the tissue cell list (built
  // on first use). Blocks of whole warps: the kernels sum over warps.
  template <class Extra>
  void launch_over_tissue(void* fn, hw::cuda::PartArgs<Real>& a, Extra* extra) const {
    constexpr unsigned tb = 256;
    void* args[] = {&a, extra};
    if (all_tissue_box()) {
      const Grid& gr = s_.geo.grid;
      const unsigned bx = std::min(tb, (unsigned(gr.nx()) + 31) / 32 * 32), by = tb / bx;
      gpu::launch(fn, {(unsigned(gr.nx()) + bx - 1) / bx, (unsigned(gr.ny()) + by - 1) / by, unsigned(gr.nz())},
                  {bx, by, 1}, args);
      return;
    }
    if (tissue_cells_.empty()) {
      std::vector<std::uint32_t> cells;
      for (std::size_t n = 0; n < s_.geo.grid.size(); ++n)
        if (is_tissue(&s_.geo.mask, n)) cells.push_back(std::uint32_t(n));
      bytes_ += cells.size() * sizeof(std::uint32_t);
      tissue_cells_ = gpu::DeviceBuffer::from(cells, "the tissue cell list");
      tissue_ncells_ = cells.size();
    }
    a.cells = reinterpret_cast<const unsigned*>(tissue_cells_.ptr());
    a.n = tissue_ncells_;
    gpu::launch(fn, {unsigned((tissue_ncells_ + tb - 1) / tb), 1, 1}, {tb, 1, 1}, args);
  }

  // The pseudo-ECG's sums from V where it lives: a few doubles cross to the host, not V.
  bool ecg_sums(const std::vector<std::array<double, 3>>& at, double rmin,
                std::vector<double>& sums) const override {
    const Grid& g = s_.geo.grid;
    sums.assign(at.size(), 0.0);
    if (ecg_sums_.empty()) ecg_sums_ = gpu::DeviceBuffer(hw::cuda::kEcgElectrodes * sizeof(double), "the ECG sums");
    hw::cuda::PartArgs<Real> a = geometry_args();
    a.vin = reinterpret_cast<const Real*>(v_[cur_].ptr());
    for (std::size_t e0 = 0; e0 < at.size(); e0 += hw::cuda::kEcgElectrodes) {
      hw::cuda::EcgArgs e{};
      e.count = int(std::min<std::size_t>(hw::cuda::kEcgElectrodes, at.size() - e0));
      for (int q = 0; q < e.count; ++q)
        for (int d = 0; d < 3; ++d) e.at[q][d] = at[e0 + std::size_t(q)][std::size_t(d)];
      for (int d = 0; d < 3; ++d) e.h[d] = g.h[std::size_t(d)];
      e.rmin = rmin;
      e.sums = reinterpret_cast<double*>(ecg_sums_.ptr());
      ecg_sums_.fill_zero();
      launch_over_tissue(ecg_fn_, a, &e);
      ecg_sums_.download(sums.data() + e0, std::size_t(e.count) * sizeof(double));
    }
    return true;
  }

  // V⁺ in place of v (which holds V on entry).
  void solve(const gpu::DeviceBuffer& v) {
    const auto ptr = [](const gpu::DeviceBuffer& b) { return reinterpret_cast<Real*>(b.ptr()); };
    hw::cuda::CgArgs<Real> g{};
    g.n = layout_.size();
    g.w = cg_w_.empty() ? nullptr : ptr(cg_w_);
    g.inv_diag = ptr(cg_inv_diag_);
    g.xv = ptr(v);
    g.r = ptr(cg_r_);
    g.z = ptr(cg_z_);
    g.p = ptr(cg_p_);
    g.q = ptr(cg_q_);
    g.b = ptr(cg_b_);
    // rhs: backward Euler Φ V; Crank-Nicolson (Φ + a/2·L) V.
    g.x = ptr(v);
    g.y = ptr(cg_b_);
    double bb;
    if (theta_ == 1.0) {
      bb = reduce(cg_fn_.weighted_copy, g, false)[0];
    } else {
      g.coef = Real(0.5 * a_);
      bb = reduce(cg_fn_.apply, g, true)[1];
    }
    const double bnorm = std::sqrt(bb);
    if (bnorm == 0.0) {
      v.fill_zero();
      return;
    }
    const Real coef = Real(-theta_ * a_);
    // r = b − A x
    g.coef = coef;
    g.x = ptr(v);
    g.y = ptr(cg_q_);
    reduce(cg_fn_.apply, g, true);
    double rel = std::sqrt(reduce(cg_fn_.residual, g, false)[0]) / bnorm;
    if (rel <= cg_tol_) return;
    double rz = reduce(cg_fn_.start, g, false)[0];
    constexpr int kMaxIter = 1000;  // CgOptions' default, as the cpu stepper
    for (int it = 1; it <= kMaxIter; ++it) {
      g.x = ptr(cg_p_);
      g.y = ptr(cg_q_);
      const double pq = reduce(cg_fn_.apply, g, true)[0];
      if (!(pq > 0.0)) break;
      g.alpha = Real(rz / pq);
      const auto [rr, rz_new] = reduce(cg_fn_.update, g, false);
      rel = std::sqrt(rr) / bnorm;
      if (rel <= cg_tol_) return;
      g.beta = Real(rz_new / rz);
      rz = rz_new;
      void* args[] = {&g};
      gpu::launch(cg_fn_.direction, {unsigned((layout_.size() + 255) / 256), 1, 1}, {256, 1, 1}, args);
    }
    throw Error(fmt::format("diffusion: CG did not converge in {} iterations (relative residual {:.3g} > {:.3g})",
                            kMaxIter, rel, cg_tol_));
  }

  void download_v() const {
    host_v_.resize(layout_.size());
    v_[cur_].download(host_v_.data(), host_v_.size() * sizeof(Real));
  }

  const SimSetup& s_;
  RowLayout layout_;
  std::array<gpu::DeviceBuffer, 2> v_;
  // The tower layout's x-halo slots of v_[0] and v_[1], and the block shape each holds them
  // for ({0, 0, 0}: none; the slots' places depend on the shape).
  std::array<gpu::DeviceBuffer, 2> halo_;
  std::array<gpu::Dim3, 2> halo_block_{};
  gpu::DeviceBuffer tmp_, base_, inv_phi_, zero_row_, fail_;
  std::array<gpu::DeviceBuffer, 3> face_, edge_;
  std::array<double, 3> w_{0, 0, 0};
  bool links_ = false;
  std::vector<DevPart> parts_;
  DevMaps act_;  // empty until attach_activation
  std::unique_ptr<gpu::Timer> tuner_timer_;  // times the block shapes under trial
  // Implicit diffusion.
  bool implicit_ = false;
  double theta_ = 1, a_ = 0, cg_tol_ = 1e-8;
  gpu::DeviceBuffer cg_inv_diag_, cg_w_, cg_r_, cg_z_, cg_p_, cg_q_, cg_b_, cg_sums_;
  struct {
    void *apply = nullptr, *residual = nullptr, *start = nullptr, *update = nullptr,
         *direction = nullptr, *weighted_copy = nullptr;
  } cg_fn_;
  // The kernels over every tissue cell (launch_over_tissue) and the pseudo-ECG's.
  mutable gpu::DeviceBuffer tissue_cells_, ecg_sums_;
  mutable std::size_t tissue_ncells_ = 0;
  void* ecg_fn_ = nullptr;
  gpu::CompiledImage image_;
  gpu::Module module_;
  int cur_ = 0;
  long batch_start_ = 0;
  // Chunks of kGraphSteps steps as CUDA graphs (graph_fits). HEARTWAVE_CUDA_GRAPHS=0 launches every
  // kernel on its own (the tests compare both ways).
  gpu::DeviceBuffer batch_clock_;  // kMaxBatch steps (write_clock), allocated once: graphs point into it
  bool use_graphs_ = true;
  std::map<std::tuple<int, long, long>, std::unique_ptr<gpu::KernelGraph>> graphs_;
  gpu::KernelGraph* building_ = nullptr;  // the graph being built
  long graph_batches_ = 0;
  mutable std::size_t bytes_ = 0;
  mutable std::vector<Real> host_v_;
  std::shared_ptr<HostCopyPool> copies_ = std::make_shared<HostCopyPool>();
};

}  // namespace

// The kernel source: the template, then per part its printed model, a model struct and an
// extern "C" kernel hw_part<q>.
gpu::CudaSource cuda_kernel_source(const SimSetup& s, bool f32, unsigned threads, const std::vector<int>& caps) {
  // The engine's choices, made the same way here: the row layout and whether the stencil
  // needs link coefficients.
  const RowLayout layout = row_layout(s.geo.grid, s.geo.mask);
  const bool links = !uniform_sigma_case(s);
  const bool fourth = s.order == StencilOrder::fourth;
  const char* real = f32 ? "float" : "double";
  const Grid& g = s.geo.grid;
  // The grid is compiled in: a neighbour on the box is then a load at a constant offset.
  const std::string periodic = fmt::format("  static constexpr bool periodic_x = {}, periodic_y = {}, periodic_z = {};\n"
                                           "  static constexpr unsigned nx = {}, ny = {}, nz = {};\n",
                                           g.bc[0] == Boundary::periodic, g.bc[1] == Boundary::periodic,
                                           g.bc[2] == Boundary::periodic, g.nx(), g.ny(), g.nz());
  gpu::CudaSource src;
  src.name = "heartwave_tissue.cu";
  src.headers = gpu::embedded_sources();
  src.options = {"-default-device"};
  if (f32)
    for (auto& o : gpu::float_kernel_options()) src.options.push_back(o);
  std::string& t = src.text;
  t = "#include \"kernels/cuda/monodomain.cuh\"\n";
  // The whole-tissue kernels (the CG's operator, the pseudo-ECG) visit every tissue cell:
  // a box launch where the box is all tissue, else a launch over the tissue cell list.
  t += "#include \"kernels/cuda/ecg.cuh\"\n";
  t += fmt::format("struct hw_tissue_V {{\n"
                   "  static constexpr bool box = {}, links = {}, fourth = {}, phase = {}, cells = {}, per_cell = false,\n"
                   "                        stimuli = false;\n"
                   "{}}};\n",
                   layout.box, links, fourth, !s.phi.empty(), !(layout.box && s.geo.mask.empty()), periodic);
  t += fmt::format("extern \"C\" __global__ void hw_ecg(const hw::cuda::PartArgs<{0}> a, const hw::cuda::EcgArgs e) {{\n"
                   "  hw::cuda::ecg_sums<{0}, hw_tissue_V>(a, e);\n}}\n",
                   real);
  if (s.time.diffusion != DiffusionScheme::forward_euler) {
    // The CG kernels of implicit diffusion.
    t += "#include \"kernels/cuda/diffusion_cg.cuh\"\n";
    t += fmt::format(
        "extern \"C\" __global__ void hw_cg_apply(const hw::cuda::PartArgs<{0}> a, const hw::cuda::CgArgs<{0}> g) {{\n"
        "  hw::cuda::cg_apply<{0}, hw_tissue_V>(a, g);\n}}\n",
        real);
    for (const char* k : {"residual", "start", "update", "direction", "weighted_copy"})
      t += fmt::format("extern \"C\" __global__ void hw_cg_{1}(const hw::cuda::CgArgs<{0}> g) {{ hw::cuda::cg_{1}<{0}>(g); }}\n",
                       real, k);
  }
  const char* method = cell::integrator_name(s.integrator);
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    const Part& p = s.parts[q];
    model::CudaOptions co;
    co.use_float = f32;
    co.function_prefix = fmt::format("hw_p{}", q);
    co.demo_kernel = false;
    const std::string pre = co.function_prefix;
    t += fmt::format("\n// ---- part {}: model {} ----\n", q, p.model);
    // Parameters that no cell varies are compiled in as constants (model/passes/specialise).
    std::vector<std::optional<double>> fixed(std::size_t(p.np));
    for (int k = 0; k < p.np; ++k) {
      if (!p.per_cell) {
        fixed[k] = p.params[k];
        continue;
      }
      const double* v = p.pcell.data() + std::size_t(k) * p.n;
      if (std::all_of(v, v + p.n, [&](double x) { return x == v[0]; })) fixed[k] = v[0];
    }
    t += model::print_cuda(model::specialise_parameters(*p.analysed, fixed), co);
    t += fmt::format(
        "struct {0}_M {{\n"
        "  static constexpr int ns = {0}_n_states, np = {0}_n_params, nc = {0}_n_constants, kv = {1};\n"
        "  static constexpr {2} to_model = {2}({14:a}), to_mv = {2}({15:a});  // from mV, to mV\n"
        "  static __device__ __forceinline__ void constants(const {2}* p, {2}* c) {{ {0}_constants(p, c); }}\n"
        "  static __device__ __forceinline__ void step({2} t, {2} dt, {2}* y, const {2}* p, const {2}* c) {{\n"
        "    {0}_step_{3}(t, dt, y, p, c);\n  }}\n}};\n"
        "struct {0}_V {{\n"
        "  static constexpr bool box = {6}, links = {7}, fourth = {13}, phase = {8}, cells = {9}, per_cell = {10},\n"
        "                        stimuli = {11};\n"
        "  static constexpr int substeps = {16};\n"
        "{12}}};\n"
        "struct {0}_V_fenced : {0}_V {{ static constexpr int substeps = 0; }};\n",
        pre, p.kv, real, method, threads, q, layout.box, links, !s.phi.empty(), !p.identity,
        p.per_cell, !s.schedules.empty(), periodic, fourth, 1.0 / p.v2mV, p.v2mV, s.time.ode_substeps);
    const int cap = q < caps.size() ? caps[q] : 0;
    for (int id : offered_variants(cap, s.time.ode_substeps)) {
      const Variant& v = kVariants[id];
      const std::string bounds = v.capped ? fmt::format("{}, {}", kCappedThreads, 65536 / (kCappedThreads * unsigned(cap)))
                                          : std::to_string(threads);
      t += fmt::format(
          "extern \"C\" __global__ void __launch_bounds__({1}) hw_part{2}{3}(const hw::cuda::PartArgs<{0}> a) {{\n"
          "  hw::cuda::part_step<{0}, {4}_M, {4}_V{5}>(a);\n}}\n",
          real, bounds, q, v.suffix, pre, v.fenced ? "_fenced" : "");
    }
    const bool tower = tower_case(s, layout, links, p);
    if (tower || window_case(s, layout, links, p))
      t += fmt::format(
          "extern \"C\" __global__ void __launch_bounds__({1}) hw_part{2}{3}(const hw::cuda::PartArgs<{0}> a) {{\n"
          "  hw::cuda::part_step_window<{0}, {4}_M, {4}_V{5}>(a);\n}}\n",
          real, kWindowThreads, q, tower ? kTowerSuffix : kWindowSuffix, pre, tower ? ", true" : "");
  }
  return src;
}

std::unique_ptr<Engine> make_cuda_engine(const SimSetup& s) {
  if (s.time.precision == Precision::f64) return std::make_unique<CudaEngine<double>>(s);
  return std::make_unique<CudaEngine<float>>(s);
}

}  // namespace hw::tissue
