// The CUDA engine: the cpu engine's storage (compressed rows, SoA states per part) in device
// memory (tissue/cuda/fields.hpp), and one fused kernel per model region compiled at run
// time (tissue/cuda/kernel_source.hpp), on the Device it is given.
//
// Why NVRTC per case: the cell model is inlined into the tissue kernel with its integrator
// chosen at compile time, so a cell's states live in registers for the whole step and its
// state crosses device memory once per step (seeds 000 and 001).
//
// A step launches one kernel per part (Strang: two passes) on the Device's compute stream.
// A non-finite V sets a device flag; the host reads it after each step, or after a batch of
// steps (advance()), where kernels queued after the failure do nothing, so the last good
// state is kept either way. Batches without a stimulus run as CUDA graphs.
//
// Split over ranks (tissue/cuda/split.hpp, docs/parallel.md), one GPU per rank: every rank
// holds the whole grid's arrays, as the cpu engine does, and launches its kernels over its
// slab's rows only (PartArgs' j0/j1/k0 and c0/c1). A diffusing pass queues the exchange of
// its input's face rows, steps the rows the halo does not reach, waits for the halos and
// steps the rest. The whole-field work (the implicit CG, the ECG, snapshots, checkpoints)
// first gathers every rank's rows, so it sees one rank's arrays. After each step the ranks'
// failure flags are reduced on the GPUs (an NCCL all-reduce of two words), so the next step
// on every rank sees any rank's failure and every rank stops where one GPU would; batches
// are queued as on one GPU, without CUDA graphs (NCCL's calls are not kernel nodes). Staged
// through the host (no NCCL), the host agrees after every step instead.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "device/block_tuner.hpp"
#include "device/compile.hpp"
#include "device/device.hpp"
#include "kernels/cuda/part_args.hpp"
#include "tissue/cuda/fields.hpp"
#include "tissue/cuda/implicit.hpp"
#include "tissue/cuda/kernel_source.hpp"
#include "tissue/cuda/sinks.hpp"
#include "tissue/cuda/split.hpp"
#include "tissue/cuda/stimuli.hpp"
#include "tissue/cuda/variants.hpp"
#include "tissue/engine.hpp"

namespace hw::tissue {

namespace {

using cuda::DeviceFields;
using cuda::KernelVariant;

constexpr unsigned long long kNoFailure = ~0ull;
// Steps per CUDA graph: long enough that the host's launch is nothing beside the steps,
// short enough that graphs stay small (two graphs per length: one per parity).
constexpr long kGraphSteps = 64;
// Steps queued before one check of the failure flag, at most.
constexpr long kMaxBatch = 1024;
// A pass over every row of this rank's slab (all rows on one rank).
constexpr std::size_t kAllRows = ~std::size_t(0);

// A part's compiled kernels and how it is launched.
struct PartKernels {
  std::vector<void*> fns;                      // one per offered variant, in the table's order
  std::vector<const KernelVariant*> variants;  // the variant of each of fns
  gpu::BlockTuner tuner;                       // the variant and block shape
  bool tables = false;                         // its source reads lookup tables of V
  // The launch of a single step where the tuner's is several steps a pass and a step must
  // go alone (a stimulus, a batch's last steps): the kernel as compiled, its first shape.
  gpu::Launch single;
  void* fn() const { return fns[std::size_t(tuner.launch().variant)]; }
  const KernelVariant& variant() const { return *variants[std::size_t(tuner.launch().variant)]; }
  // The launch of one step (a several-steps launch's part stands in for: single).
  const gpu::Launch& step_launch() const { return variant().steps > 1 ? single : tuner.launch(); }
};

// What compile_kernels gives the engine.
struct CompiledKernels {
  gpu::CompiledImage image;
  gpu::Module module;
  std::vector<PartKernels> parts;
  void* ecg = nullptr;
  void* frame = nullptr;
  void* stimulus = nullptr;
  cuda::CgKernels cg;
  bool tower = false;  // some part is offered the tower (it needs halo slots)
};

// Compiles the kernels of set-up s and sets up each part's tuner over its offered variants.
// The register count is known once compiled: kernels above a step are compiled again beside
// their capped and fenced variants (both cached; the tuner picks). `asked`: the variant
// forced by name, whose launches alone the tuner keeps.
template <class Real>
CompiledKernels compile_kernels(gpu::Device& dev, const SimSetup& s, const RowLayout& layout, const std::string& asked,
                                bool split) {
  CompiledKernels out;
  const std::string arch = dev.info().arch();
  const bool f32 = sizeof(Real) == 4;
  const gpu::CudaSource source = cuda_kernel_source(s, f32, cuda::kThreads, {}, asked);
  out.image = gpu::compile_cuda(source, arch);
  out.module = gpu::Module(dev, out.image.image);
  std::vector<int> caps(s.parts.size(), 0);
  bool any = false;
  for (std::size_t q = 0; q < caps.size(); ++q)
    any |= (caps[q] = cuda::register_cap(
                gpu::kernel_resources(out.module.function(fmt::format("hw_part{}", q))).registers)) > 0;
  if (any) {
    out.image = gpu::compile_cuda(cuda_kernel_source(s, f32, cuda::kThreads, caps, asked), arch);
    out.module = gpu::Module(dev, out.image.image);
  }
  const gpu::Module& m = out.module;
  out.ecg = m.function("hw_ecg");
  out.frame = m.function("hw_frame");
  out.stimulus = m.function("hw_stimulus");
  if (s.time.diffusion != DiffusionScheme::forward_euler)
    out.cg = {m.function("hw_cg_begin"), m.function("hw_cg_apply"), m.function("hw_cg_update"),
              m.function("hw_cg_direction"), m.function("hw_cg_finish"), m.function("hw_cg_sum")};
  const Grid& g = s.geo.grid;
  const std::array<unsigned, 3> n{unsigned(g.nx()), unsigned(g.ny()), unsigned(g.nz())};
  out.parts.resize(s.parts.size());
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    PartKernels& k = out.parts[q];
    // The printer names a part's tables hw_p<q>_lut<g>; a model with no function of V worth
    // a table (or a dimensionless V) has none.
    k.tables = source.text.find(fmt::format("hw_p{}_lut", q)) != std::string::npos;
    k.variants = cuda::offered_variants(cuda::part_context(s, layout, s.parts[q], caps[q]), asked);
    // A window thread steps a column through every layer, and a several-steps block needs K
    // layers of halo: neither stops at a slab's faces.
    if (split) std::erase_if(k.variants, [](const KernelVariant* v) { return v->window || v->steps > 1; });
    if (k.variants.empty())
      throw Error(fmt::format("HEARTWAVE_CUDA_KERNEL={}: the window kernels do not split over ranks", asked));
    std::vector<std::string> names;
    std::vector<gpu::Launch> launches;
    for (const KernelVariant* v : k.variants) {
      const int index = int(k.fns.size());
      k.fns.push_back(m.function(fmt::format("hw_part{}{}", q, v->suffix)));
      names.push_back(v->capped ? fmt::format("{} at {} registers", v->label, caps[q]) : v->label);
      const unsigned tb = cuda::block_size(gpu::kernel_resources(k.fns.back()).registers);
      for (const gpu::Launch& l : cuda::launches_of(*v, index, s.parts[q].identity, n, tb)) launches.push_back(l);
      out.tower |= v->tower;
    }
    k.single = *std::find_if(launches.begin(), launches.end(),
                             [&](const gpu::Launch& l) { return k.variants[std::size_t(l.variant)]->steps == 1; });
    // A variant forced by name leaves the tuner only its launches.
    for (std::size_t i = 0; i < k.variants.size(); ++i)
      if (!asked.empty() && asked == k.variants[i]->name)
        std::erase_if(launches, [&](const gpu::Launch& l) { return l.variant != int(i); });
    if (names.size() == 1) names.clear();
    k.tuner = gpu::BlockTuner(launches, names,
                              out.image.cache_path + fmt::format(".part{}.{}x{}x{}.block", q, g.nx(), g.ny(), g.nz()));
  }
  return out;
}

template <class Real>
class CudaEngine final : public Engine {
 public:
  CudaEngine(const SimSetup& s, std::shared_ptr<gpu::Device> dev, const CudaEngineOptions& opt,
             comm::Communicator* comm)
      : s_(s), opt_(opt), dev_(std::move(dev)), on_(dev_->compute()), f_((check(s), *dev_), s, opt.kernel),
        stim_(*dev_), sinks_(*this, *dev_, s, f_, cur_), split_(comm, s, *dev_) {
    if (split_.active()) {
      sinks_.set_gather([this] { gather(); }, [this](const gpu::DeviceBuffer& b) { gather_grid(b); });
      sinks_.set_split(&split_.split());
    }
    load(initial_state(s));
    if (s.time.diffusion != DiffusionScheme::forward_euler)
      implicit_ = std::make_unique<cuda::DeviceImplicit<Real>>(*dev_, s, f_);
    else if (split_.active())
      split_.enable_peer_stores<Real>(f_.layout());
    fail_ = gpu::DeviceBuffer(*dev_, 2 * sizeof(unsigned long long), "the failure flag");
    reset_failure();
    compile();
    batch_clock_ = gpu::DeviceBuffer(*dev_, std::size_t(kMaxBatch) * 2 * s.parts.size() * sizeof(hw::cuda::PassTime<Real>),
                                     "the step clock");
    // Split, graphs where peer stores carry the halos (captured from the stream: the
    // exchange is a cooperative launch). Not with NCCL: a capture of its exchange and
    // all-reduce hung on 2 H200s, every rank capturing the same steps (docs/parallel.md).
    use_graphs_ = opt.graphs && (!split_.active() || split_.peer());
    tuner_timer_ = std::make_unique<gpu::Timer>(on_);
  }

  void step(long n) override {
    long done = 0;
    advance(n, 1, done);
  }

  // Queues `count` steps from step n, then checks the failure flag once.
  void advance(long n, long count, long& done) override {
    done = 0;
    const auto armed = split_.deadline("a batch of steps");
    if (split_.active() && (implicit_ || !split_.agrees_on_device())) {
      // Split, the ranks agree on each step's failure, and a solve gathers every rank's V
      // first: one step at a time.
      for (long m = 0; m < count; ++m) queue_and_check(n + m, 1, done);
      return;
    }
    for (long m = 0; m < count; m += kMaxBatch) queue_and_check(n + m, std::min(kMaxBatch, count - m), done);
  }

  void voltage(Field<float>& out) const override {
    const Grid& g = s_.geo.grid;
    gather();
    download_v();
    out.resize(g.size());
    for (std::size_t n = 0; n < g.size(); ++n)
      out[n] = is_tissue(&s_.geo.mask, n) ? float(host_v_[f_.layout().index(n)]) : std::numeric_limits<float>::quiet_NaN();
  }

  double voltage_at(std::size_t n) const override {
    if (!is_tissue(&s_.geo.mask, n)) return std::numeric_limits<double>::quiet_NaN();
    gather();
    Real x;
    f_.v(cur_).download(&x, sizeof(Real), f_.layout().index(n) * sizeof(Real));
    return double(x);
  }

  // The cells' V through a DeviceProbes (one wait; split, read by their owners, no gather),
  // kept while the same cells are asked for again.
  void voltages_at(const std::vector<std::size_t>& cells, std::vector<double>& out) const override {
    if (!probe_reads_ || cells != probe_cells_) {
      std::vector<ProbeRead> reads(cells.size());
      for (std::size_t q = 0; q < cells.size(); ++q) reads[q].cell = cells[q];
      probe_reads_ = std::make_unique<cuda::DeviceProbes<Real>>(*dev_, s_, f_, cur_,
                                                                split_.active() ? &split_.split() : nullptr, reads);
      probe_cells_ = cells;
    }
    probe_reads_->read(out);
  }

  void state(std::size_t q, int k, Field<float>& out) const override {
    gather();
    const Part& p = s_.parts[q];
    std::vector<Real> y(p.n);
    f_.parts()[q].y.download(y.data(), p.n * sizeof(Real), DeviceFields<Real>::slot(p, k) * p.n * sizeof(Real));
    for (std::size_t i = 0; i < p.n; ++i) out[p.grid_index(i)] = float(y[i]);
  }

  double state_at(std::size_t q, int k, std::size_t i) const override {
    gather();
    const Part& p = s_.parts[q];
    Real x;
    f_.parts()[q].y.download(&x, sizeof(Real), (DeviceFields<Real>::slot(p, k) * p.n + i) * sizeof(Real));
    return double(x);
  }

  CanonicalState save() const override {
    gather();
    CanonicalState st;
    st.bytes = sizeof(Real);
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      std::vector<Real> y(std::size_t(p.ns - 1) * p.n);
      f_.parts()[q].y.download(y.data(), y.size() * sizeof(Real));
      st.parts.emplace_back(y.begin(), y.end());
    }
    download_v();
    const Grid& g = s_.geo.grid;
    st.v.reserve(s_.tissue_cells);
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) st.v.push_back(double(host_v_[f_.layout().index(n)]));
    return st;
  }

  void load(const CanonicalState& st) override {
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      std::vector<Real> y(st.parts[q].begin(), st.parts[q].end());
      f_.parts()[q].y.upload(y.data(), y.size() * sizeof(Real));
    }
    download_v();
    const Grid& g = s_.geo.grid;
    std::size_t i = 0;
    for (std::size_t n = 0; n < g.size(); ++n)
      if (is_tissue(&s_.geo.mask, n)) host_v_[f_.layout().index(n)] = Real(st.v[i++]);
    // Both fields: cells stored off the tissue never change, and the first step reads V_cur.
    for (int k = 0; k < 2; ++k) f_.v(k).upload(host_v_.data(), host_v_.size() * sizeof(Real));
    halo_block_ = {};  // the tower's halo slots are the old V's
    if (implicit_) implicit_->forget_history();  // its guesses came from the old run
    gathered_ = true;  // every rank loaded the whole state
  }

  EngineInfo describe() const override {
    const gpu::DeviceInfo& d = dev_->info();
    EngineInfo info;
    info.backend = fmt::format("cuda ({}, {}, {}; kernels {}{})", d.name, d.arch(), sizeof(Real) == 8 ? "double" : "float",
                               image_.from_cache ? "from the cache"
                                                 : fmt::format("compiled in {:.1f} s", image_.compile_seconds),
                               dev_->ordinal() == 0 ? "" : fmt::format("; GPU {}", dev_->ordinal()));
    if (split_.active())
      info.backend += fmt::format(" on each of {} ranks ({}; halos by {}), {}", split_.split().comm().size(),
                                  split_.split().comm().describe(), split_.carrier(),
                                  split_.split().decomposition().describe());
    const RowLayout& layout = f_.layout();
    info.storage = layout.box ? fmt::format("the whole box on the GPU ({} cells per field)", layout.size())
                              : fmt::format("compressed rows around the tissue on the GPU, {} cells per "
                                            "field ({:.1f}% of the box)",
                                            layout.size(), 100.0 * double(layout.size()) / double(s_.geo.grid.size()));
    const std::string stencil = fmt::format("{}{}", f_.links() ? "link coefficients" : "uniform diagonal sigma",
                                            f_.inv_phi().empty() ? "" : ", phase-field no-flux boundary (L(phi sigma) V / phi)");
    info.kernels = implicit_ ? fmt::format("implicit diffusion by a Jacobi-preconditioned CG on the GPU ({}{}), then "
                                           "one reaction kernel per model region",
                                           stencil, f_.columns() ? ", its stencil kernels walking columns of layers" : "")
                             : fmt::format("one fused diffusion+reaction kernel per model region ({})", stencil);
    const char* loop = implicit_ ? " (the CG's iterations a loop on the device)" : "";
    if (use_graphs_ && (!implicit_ || gpu::KernelGraph::loops_supported()))
      info.kernels += graph_batches_ ? fmt::format("; {} batches of steps without a stimulus ran as CUDA graphs{}",
                                                   graph_batches_, loop)
                                     : fmt::format("; batches of steps without a stimulus run as CUDA graphs{}", loop);
    for (const auto& k : kernels_) {
      const gpu::KernelResources r = gpu::kernel_resources(k.fn());
      info.part_kernels.push_back(fmt::format("printed CUDA via NVRTC ({} registers{}; blocks {}){}", r.registers,
                                              r.local_bytes ? fmt::format(", {} B local", r.local_bytes) : "",
                                              k.tuner.describe(),
                                              (!s_.time.cell_maths.tables ? ""
                                               : k.tables     ? ", functions of V from lookup tables"
                                                              : ", no lookup tables (no function of V worth one)") +
                                                  std::string(s_.time.cell_maths.fast && s_.time.precision == Precision::f32
                                                                  ? ", fast intrinsics"
                                                                  : "")));
    }
    if (implicit_) info.cg_iterations = implicit_->mean_iterations();
    return info;
  }

  bool warming_up() const override {
    for (const PartKernels& k : kernels_)
      if (k.tuner.tuning()) return true;
    return false;
  }

  std::size_t memory_bytes() const override { return f_.bytes() + stim_.bytes() + sinks_.bytes(); }

  SinkHost& sinks() const override { return sinks_; }

 private:
  // The case's limits on the GPU, checked before anything is allocated.
  static const SimSetup& check(const SimSetup& s) {
    const Grid& g = s.geo.grid;
    const std::size_t stored = row_layout(g, s.geo.mask).size();
    if (stored >= (std::size_t(1) << 32) || g.size() >= (std::size_t(1) << 32))
      throw InputError(s.tcase.geometry.loc, "backend cuda: grids of 2^32 cells or more are not supported");
    if (g.nz() > 65535 || g.ny() > 65535 * 8)
      throw InputError(s.tcase.geometry.loc, "backend cuda: more than 65535 cells along z (or 524280 "
                                             "along y) do not fit the GPU's launch grid");
    // The fourth-order stencil's conditions, checked as the cpu operator checks them.
    if (s.order == StencilOrder::fourth) fourth_order_sigma(g, s.sigma, s.geo.mask);
    return s;
  }

  // Compiles the kernels and sets up each part's tuner (compile_kernels, above).
  void compile() {
    compiled_for_stimuli_ = !s_.stimuli.empty();
    CompiledKernels k = compile_kernels<Real>(*dev_, s_, f_.layout(), opt_.kernel, split_.active());
    image_ = std::move(k.image);
    module_ = std::move(k.module);
    kernels_ = std::move(k.parts);
    ecg_fn_ = k.ecg;
    stim_fn_ = k.stimulus;
    sinks_.set_ecg_kernel(ecg_fn_, fail_.ptr());
    sinks_.set_frame_kernel(k.frame);
    if (implicit_) implicit_->set_kernels(k.cg);
    if (k.tower) {
      const Grid& g = s_.geo.grid;
      const std::vector<Real> none(cuda::most_tower_slots({unsigned(g.nx()), unsigned(g.ny()), unsigned(g.nz())}), Real(0));
      for (auto& h : halo_) h = f_.put(none, "the tower layout's halo slots");
    }
  }

  // Queues `count` steps from step n, then reads the failure flag once: the GPU has the
  // whole batch queued and never waits for the host inside it. Adds the steps done to `done`.
  void queue_and_check(long n, long count, long& done) {
    batch_start_ = n;
    // Between batches no kernel runs: stimuli added since are uploaded, and graphs built
    // with maps that came or went since are dropped.
    stim_.upload_new(s_);
    // The first stimulus of a run whose kernels were compiled without any: compiled again
    // with the stimulus field (seconds; from the cache after the first time).
    if (!s_.stimuli.empty() && !compiled_for_stimuli_) {
      compile();
      graphs_.clear();
      halo_block_ = {};
    }
    maps_ = sinks_.maps();
    // Held for this batch only: its holder may drop it between batches.
    const struct Release {
      std::shared_ptr<const cuda::ActivationMapsSink>& held;
      ~Release() { held.reset(); }
    } release{maps_};
    if (sinks_.generation() != graphs_generation_) {
      graphs_.clear();
      graphs_generation_ = sinks_.generation();
    }
    write_clock(n, count);
    for (long m = n; m < n + count;) {
      const long chunk = std::min(kGraphSteps, n + count - m);
      if (graph_fits(m, chunk))
        launch_graph(m, chunk);
      else
        for (long k = m; k < m + chunk;) k += enqueue(k, m + chunk - k);
      m += chunk;
    }
    // Peer stores: the batch's last step's failure, agreed.
    if (split_.peer()) split_.agree_on_device(fail_.ptr());
    unsigned long long f[2];
    fail_.download(f, sizeof f);
    // A several-steps pass failed: the state kept is its input, whose cell states may be in
    // the second buffer.
    const bool aside = f[0] != kNoFailure && (f[1] & hw::cuda::kStatesAside);
    const bool several = f[0] != kNoFailure && (f[1] & hw::cuda::kSeveralSteps);
    if (f[0] != kNoFailure) f[1] &= ~(hw::cuda::kStatesAside | hw::cuda::kSeveralSteps);
    if (split_.active()) {
      if (!split_.agrees_on_device()) agree_on_failure(n, f);
      gathered_ = false;
    }
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
    if (aside) {
      for (const cuda::DevicePart& d : f_.parts())
        if (!d.y_aside.empty()) gpu::copy_device(on_, d.y.ptr(), d.y_aside.ptr(), d.y.bytes());
      on_.synchronize();
    }
    if (several) {
      // The state is that of the failed pass's first step, and the failure is somewhere in
      // its K steps: on from there one step at a time, so that the run stops at the step,
      // cell and variable, and with the state, that single steps give (the same bits).
      reset_failure();
      for (long m = long(f[1]); m < n + count; ++m) queue_and_check(m, 1, done);
      return;
    }
    if (f[0] == hw::cuda::kCgFailed) {  // a CG solve did not converge
      reset_failure();
      implicit_->report_failure();
    }
    const std::size_t cell = std::size_t(f[0] >> 9);
    const int k = int(f[0] & 511) - 1;
    reset_failure();
    const std::string variable =
        split_.active() && !split_.agrees_on_device() ? agreed_variable_ : failing_variable(s_, cell, k);
    throw_numerical_error(s_.geo.grid, cell, variable, double(f[1]) * s_.time.dt, s_.time.dt, s_.time.cell_maths.tables);
  }

  // Split, one step queued (step n): every rank takes the lowest failing cell of any rank
  // (and its variable, named by its owner) as its own failure, so all stop at this step.
  void agree_on_failure(long n, unsigned long long f[2]) {
    // Every rank solves the whole field with the same bits: a CG that fails, fails on all.
    if (f[0] == hw::cuda::kCgFailed) return;
    std::size_t cell = std::numeric_limits<std::size_t>::max();
    std::string variable;
    if (f[0] != kNoFailure) {
      cell = std::size_t(f[0] >> 9);
      variable = failing_variable(s_, cell, int(f[0] & 511) - 1);
    }
    split_.split().agree_on_failure(cell, variable);
    if (cell == std::numeric_limits<std::size_t>::max()) {
      if (f[0] != kNoFailure) reset_failure();
      f[0] = kNoFailure;
      return;
    }
    f[0] = (static_cast<unsigned long long>(cell) << 9) | 1u;
    f[1] = static_cast<unsigned long long>(n);
    agreed_variable_ = variable;
  }

  // Split: every rank's rows of V and of each state reach every rank (collective; once per
  // step at most, before the first read after it).
  void gather() const {
    if (!split_.active() || gathered_) return;
    const auto armed = split_.deadline("the gather of every rank's state");
    std::vector<std::size_t> off, cnt;
    split_.split().row_ranges(f_.layout(), sizeof(Real), off, cnt);
    split_.gather(f_.v(cur_), 0, off, cnt);
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      split_.split().part_ranges(p, sizeof(Real), off, cnt);
      for (int k = 0; k + 1 < p.ns; ++k) split_.gather(f_.parts()[q].y, std::size_t(k) * p.n * sizeof(Real), off, cnt);
    }
    gathered_ = true;
  }
  // Split: a grid-ordered device array (the maps) from every rank's rows.
  void gather_grid(const gpu::DeviceBuffer& b) const {
    const auto armed = split_.deadline("the gather of a map");
    std::vector<std::size_t> off, cnt;
    split_.split().grid_ranges(b.bytes() / s_.geo.grid.size(), off, cnt);
    split_.gather(b, 0, off, cnt);
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
    // Implicit: the CG's ring of increments is in the graph too (three places).
    const int ring = implicit_ ? implicit_->ring_head() : 0;
    std::unique_ptr<gpu::KernelGraph>& g = graphs_[{cur_of(n) + 2 * ring, count, place}];
    if (!g) {
      g = std::make_unique<gpu::KernelGraph>();
      if (split_.active()) {
        // Split, the peer exchange is a cooperative launch, which KernelGraph::add does not
        // make: the steps are captured from the stream.
        g->begin_capture(on_);
        for (long m = n; m < n + count;) m += enqueue(m, n + count - m);
        g->end_capture(on_);
      } else {
        building_ = g.get();
        for (long m = n; m < n + count;) m += enqueue(m, n + count - m);
        building_ = nullptr;
      }
    } else if (implicit_) {
      implicit_->replayed(count);
    }
    g->launch(on_);
    ++graph_batches_;
    // Replayed, its passes left what they left when it was built: every step on the tower
    // (graph_fits), so both fields' halo slots.
    for (const PartKernels& k : kernels_)
      if (k.variant().tower) halo_block_ = {k.tuner.launch().block, k.tuner.launch().block};
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
          times[(std::size_t(m) * 2 + std::size_t(pass)) * P + q] = pass_time(n + m, pass * 0.5 * s_.time.dt, s_.parts[q].t2ms);
    batch_clock_.upload(times.data(), times.size() * sizeof(times[0]));
  }

  // Whether the batch of steps [n, n + count) can be one graph launch: the block shapes
  // tuned, no stimulus on in any of its steps (the only arguments that change from step to
  // step besides the step), and with implicit diffusion the CG's loop possible in a graph
  // and its first guess settled (DeviceImplicit::graph_ready).
  bool graph_fits(long n, long count) const {
    if (!use_graphs_ || count < 2) return false;
    if (implicit_ && !implicit_->graph_ready()) return false;
    for (const PartKernels& k : kernels_) {
      if (k.tuner.tuning()) return false;
      // A graph's tower passes read their halo slots (halo_valid is fixed in it).
      if (k.variant().tower && halo_block_[std::size_t(cur_of(n))] != k.tuner.launch().block) return false;
    }
    for (long m = n; m < n + count; ++m)
      if (s_.stimuli.any_on(m)) return false;
    return true;
  }

  // Steps from step n, `left` of them at most: a pair of several-steps passes where the
  // tuner's launch is one and they fit (several_steps), else one step: Godunov, one
  // diffusing pass; Strang, a reaction half step into the Strang field, then a diffusing
  // pass with the second half. Returns the steps queued.
  long enqueue(long n, long left) {
    if (const int k = several_steps(n, left)) {
      several_steps_pair(n, k);
      return 2 * k;
    }
    enqueue_step(n);
    return 1;
  }

  // The steps of a several-steps pass of the tuner's launch (K), if a pair of them fits from
  // step n: one part (the whole box), no stimulus on in any of their 2K steps, one GPU; else 0.
  int several_steps(long n, long left) const {
    if (implicit_ || split_.active() || kernels_.size() != 1) return 0;
    const int k = kernels_[0].variant().steps;
    if (k < 2 || left < 2 * k) return 0;
    for (long m = n; m < n + 2 * k; ++m)
      if (s_.stimuli.any_on(m)) return 0;
    return k;
  }

  // Steps [n, n + 2K) as two several-steps passes: the first writes the states into their
  // second buffer, the second back, so they are where every reader looks after the pair.
  void several_steps_pair(long n, int k) {
    PartKernels& kern = kernels_[0];
    const bool timed = kern.tuner.tuning();
    if (timed) tuner_timer_->start();
    several_steps_pass(n, k, false);
    several_steps_pass(n + k, k, true);
    // Per step, as the single-step launches are timed.
    if (timed) kern.tuner.record(tuner_timer_->stop_ms() / double(2 * k));
  }

  // Steps [n, n + K) in one pass (kernels/cuda/steps_per_pass.cuh): V from its current field
  // into the other (K is odd), the states from y (or the second buffer: aside) into the other.
  void several_steps_pass(long n, int k, bool aside) {
    const Part& p = s_.parts[0];
    const cuda::DevicePart& d = f_.parts()[0];
    PartKernels& kern = kernels_[0];
    const gpu::DeviceBuffer& vin = f_.v(cur_of(n));
    const gpu::DeviceBuffer& vout = f_.v(cur_of(n + k));
    hw::cuda::PartArgs<Real> a = f_.geometry_args(fail_.ptr());
    a.vin = reinterpret_cast<const Real*>(vin.ptr());
    a.vout = reinterpret_cast<Real*>(vout.ptr());
    a.diffuse = 1;
    a.n = p.n;
    a.y = reinterpret_cast<Real*>((aside ? d.y_aside : d.y).ptr());
    a.y_out = reinterpret_cast<Real*>((aside ? d.y : d.y_aside).ptr());
    a.states_aside = aside;
    a.p = reinterpret_cast<const Real*>(d.p.ptr());
    a.per_cell = p.per_cell;
    a.clock = reinterpret_cast<const hw::cuda::PassTime<Real>*>(batch_clock_.ptr());
    // One part: step n + s's clock is s·2 slots on (write_clock).
    a.slot = unsigned(std::size_t(n - batch_start_) * 2);
    a.dt_ms = s_.time.dt;
    a.hs = Real(s_.time.dt / s_.time.ode_substeps / p.t2ms);
    a.substeps = s_.time.ode_substeps;
    a.max_finite = std::numeric_limits<Real>::max();
    if (maps_) maps_->set_args(a, vin);
    void* args[] = {&a};
    const gpu::Launch& l = kern.tuner.launch();
    const gpu::Dim3 b = l.block;
    const Grid& g = s_.geo.grid;
    const gpu::Dim3 grid = cuda::steps_grid({unsigned(g.nx()), unsigned(g.ny()), unsigned(g.nz())}, b, l.depth, k);
    set_tower_halos(a, vin, vout, false, b);
    if (building_)
      building_->add(kern.fn(), grid, b, args);
    else
      gpu::launch(on_, kern.fn(), grid, b, args);
  }

  void enqueue_step(long n) {
    const double dt = s_.time.dt;
    // Every reaction pass spans dt (Godunov) or dt/2 (Strang), implicit or not.
    const bool stim = stim_.prepare(stim_fn_, s_, n, s_.time.splitting == Splitting::godunov ? dt : 0.5 * dt);
    const gpu::DeviceBuffer& cur = f_.v(cur_of(n));
    const gpu::DeviceBuffer& next = f_.v(1 - cur_of(n));
    const gpu::DeviceBuffer& tmp = f_.strang();
    if (implicit_) {
      // Implicit diffusion of the whole dt by CG into V_next, then the reaction in place.
      // Split: every rank solves the whole field from every rank's rows (the same bits on
      // each), then reacts its own.
      const gpu::DeviceBuffer* from = &cur;
      double h = dt;
      int second = 0;
      if (s_.time.splitting == Splitting::strang) {
        pass(cur, tmp, false, 0.5 * dt, 0, stim, n, nullptr);
        // Split, no rank gathers after a failure; on one GPU the solve itself does nothing
        // after one (its first kernels read the failure flag).
        if (split_.active() && failed_everywhere()) return;
        from = &tmp;
        h = 0.5 * dt;
        second = 1;
      }
      if (split_.active()) {
        std::vector<std::size_t> off, cnt;
        split_.split().row_ranges(f_.layout(), sizeof(Real), off, cnt);
        split_.gather(*from, 0, off, cnt);
      }
      const auto* clock = reinterpret_cast<const hw::cuda::PassTime<Real>*>(batch_clock_.ptr());
      implicit_->solve(*from, next, fail_.ptr(), clock + std::size_t(n - batch_start_) * 2 * s_.parts.size(), building_);
      pass(next, next, false, h, second, stim, n, &cur);
      if (split_.active() && split_.agrees_on_device()) split_.agree_on_device(fail_.ptr());
      return;
    }
    if (split_.peer()) {
      // Peer stores: the exchange before a step also agrees on the failures of the step
      // before it (and queue_and_check agrees on the last), so no rank starts a step after a
      // failure anywhere; the whole slab is then one pass, as on one GPU.
      const Split& sp = split_.split();
      if (s_.time.splitting == Splitting::godunov) {
        split_.peer_exchange(cur, fail_.ptr());
        pass(cur, next, true, dt, 0, stim, n, &cur, sp.row_begin(), sp.row_end());
      } else {
        split_.agree_on_device(fail_.ptr());
        pass(cur, tmp, false, 0.5 * dt, 0, stim, n, nullptr);
        split_.peer_exchange(tmp, fail_.ptr());
        pass(tmp, next, true, 0.5 * dt, 1, stim, n, &cur, sp.row_begin(), sp.row_end());
      }
      return;
    }
    if (s_.time.splitting == Splitting::godunov) {
      diffusing_pass(cur, next, dt, 0, stim, n, &cur);
    } else {
      pass(cur, tmp, false, 0.5 * dt, 0, stim, n, nullptr);
      diffusing_pass(tmp, next, 0.5 * dt, 1, stim, n, &cur);
    }
    if (split_.active() && split_.agrees_on_device()) split_.agree_on_device(fail_.ptr());
  }

  // The pass that diffuses vin into vout; split, around the exchange of vin's halos: the
  // rows they do not reach first, beside the exchange, then the rows next to the faces.
  void diffusing_pass(const gpu::DeviceBuffer& vin, const gpu::DeviceBuffer& vout, double h, int second, bool stim,
                      long n, const gpu::DeviceBuffer* track) {
    if (!split_.active()) {
      pass(vin, vout, true, h, second, stim, n, track);
      return;
    }
    const Split& sp = split_.split();
    const std::size_t r0 = sp.row_begin(), r1 = sp.row_end(), g = sp.ghost_rows();
    split_.start_halo<Real>(vin, f_.layout());
    if (r1 - r0 > 2 * g) pass(vin, vout, true, h, second, stim, n, track, r0 + g, r1 - g);
    split_.finish_halo();
    pass(vin, vout, true, h, second, stim, n, track, r0, std::min(r1, r0 + g), false);
    if (r1 - r0 > g) pass(vin, vout, true, h, second, stim, n, track, std::max(r0 + g, r1 - g), r1, false);
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
  // Rows [ra, rb) only (a split run's slab or part of it; all rows: the slab); `timed`: the
  // tuner may time it (a split pass's boundary rows are not its work).
  void pass(const gpu::DeviceBuffer& vin, const gpu::DeviceBuffer& vout, bool diffuse, double h, int second,
            bool stim, long n, const gpu::DeviceBuffer* track, std::size_t ra = 0, std::size_t rb = kAllRows,
            bool timed_pass = true) {
    const Grid& g = s_.geo.grid;
    if (rb == kAllRows) {
      ra = split_.split().row_begin();
      rb = split_.split().row_end();
    }
    const std::size_t nx = std::size_t(g.nx()), ny = std::size_t(g.ny());
    for (std::size_t q = 0; q < s_.parts.size(); ++q) {
      const Part& p = s_.parts[q];
      const cuda::DevicePart& d = f_.parts()[q];
      PartKernels& k = kernels_[q];
      hw::cuda::PartArgs<Real> a = f_.geometry_args(fail_.ptr());
      a.vin = reinterpret_cast<const Real*>(vin.ptr());
      a.vout = reinterpret_cast<Real*>(vout.ptr());
      a.diffuse = diffuse;
      a.n = p.n;
      a.cells = reinterpret_cast<const unsigned*>(d.cells.ptr());
      // The rows [ra, rb): whole planes on a 3D grid (slabs cut along z), rows of y on a 2D one.
      if (p.identity) {
        if (g.nz() > 1) {
          a.k0 = unsigned(ra / ny);
        } else {
          a.j0 = unsigned(ra);
          a.j1 = unsigned(rb);
        }
      } else {
        a.c0 = unsigned(p.row_begin(ra, int(nx)));
        a.c1 = unsigned(p.row_begin(rb, int(nx)));
        if (a.c1 <= a.c0) continue;
      }
      a.y = reinterpret_cast<Real*>(d.y.ptr());
      a.p = reinterpret_cast<const Real*>(d.p.ptr());
      a.per_cell = p.per_cell;
      a.stim_on = stim;
      a.stim = stim ? reinterpret_cast<const Real*>(stim_.field(q).ptr()) : nullptr;
      a.clock = reinterpret_cast<const hw::cuda::PassTime<Real>*>(batch_clock_.ptr());
      a.slot = unsigned((std::size_t(n - batch_start_) * 2 + std::size_t(second)) * s_.parts.size() + q);
      a.dt_ms = s_.time.dt;
      a.hs = Real(h / s_.time.ode_substeps / p.t2ms);
      a.substeps = s_.time.ode_substeps;
      a.max_finite = std::numeric_limits<Real>::max();
      if (track && maps_) maps_->set_args(a, *track);
      void* args[] = {&a};
      // The diffusing passes time the block shapes under trial (tuner_timer_ synchronises);
      // with implicit diffusion no pass diffuses, and the reaction passes are timed instead
      // (before, the tuner never finished there: TT06 in double ran its first trial's
      // shape, 2.0 ms a pass on 3.36 M cells against 1.2 ms for the whole explicit step).
      // A several-steps launch under trial is timed by its pairs (several_steps_pair).
      const gpu::Launch& l = k.step_launch();
      const bool timed = timed_pass && (diffuse || implicit_) && k.tuner.tuning() && &l == &k.tuner.launch();
      if (timed) tuner_timer_->start();
      const gpu::Dim3 b = l.block;
      // A window thread steps l.depth layers; a thread of the other kernels one cell.
      const unsigned cells_y = a.j1 - a.j0, planes = g.nz() > 1 ? unsigned((rb - ra) / ny) : 1u;
      const gpu::Dim3 grid = p.identity ? gpu::Dim3{(unsigned(g.nx()) + b[0] - 1) / b[0], (cells_y + b[1] - 1) / b[1],
                                                    (planes + l.depth - 1) / l.depth}
                                        : gpu::Dim3{(a.c1 - a.c0 + b[0] - 1) / b[0], 1, 1};
      if (cells_y == 0 || planes == 0) continue;
      const KernelVariant& v = *k.variants[std::size_t(l.variant)];
      void* fn = k.fns[std::size_t(l.variant)];
      set_tower_halos(a, vin, vout, v.tower, b);
      if (building_)
        building_->add(fn, grid, b, args);
      else
        gpu::launch(on_, fn, grid, b, args);
      if (timed) k.tuner.record(tuner_timer_->stop_ms());
    }
  }

  // The tower's halo slots: those of vin if the pass that wrote vin left them for this
  // block shape; this pass leaves vout's (any other kernel writing vout, none).
  void set_tower_halos(hw::cuda::PartArgs<Real>& a, const gpu::DeviceBuffer& vin, const gpu::DeviceBuffer& vout,
                       bool tower, gpu::Dim3 b) {
    const int in_field = &vin == &f_.v(0) ? 0 : &vin == &f_.v(1) ? 1 : -1;
    const int out_field = &vout == &f_.v(0) ? 0 : &vout == &f_.v(1) ? 1 : -1;
    if (tower) {
      a.halo_in = reinterpret_cast<const Real*>(halo_[std::size_t(std::max(in_field, 0))].ptr());
      a.halo_out = reinterpret_cast<Real*>(halo_[std::size_t(std::max(out_field, 0))].ptr());
      a.halo_valid = in_field >= 0 && out_field >= 0 && halo_block_[std::size_t(in_field)] == b;
    }
    if (out_field >= 0) halo_block_[std::size_t(out_field)] = tower && in_field >= 0 ? b : gpu::Dim3{0, 0, 0};
  }

  // Whether a pass of this step failed on any rank (split: the ranks agree first, so all
  // return together and none waits alone in a gather).
  bool failed_everywhere() {
    if (!split_.active()) return failed();
    if (split_.agrees_on_device()) {
      split_.agree_on_device(fail_.ptr());
      return failed();
    }
    double f = failed() ? 1 : 0;
    split_.split().comm().allreduce(&f, 1, comm::Reduce::max);
    return f > 0;
  }

  bool failed() const {
    unsigned long long f = 0;
    fail_.download(&f, sizeof f);
    return f != kNoFailure;
  }

  void download_v() const {
    host_v_.resize(f_.layout().size());
    f_.v(cur_).download(host_v_.data(), host_v_.size() * sizeof(Real));
  }

  const SimSetup& s_;
  const CudaEngineOptions opt_;
  std::shared_ptr<gpu::Device> dev_;  // first: everything below lives on it
  const gpu::Stream& on_;             // the compute stream every step runs on
  mutable DeviceFields<Real> f_;
  int cur_ = 0;  // V's current field (before sinks_, which reads it)
  cuda::DeviceStimuli<Real> stim_;
  mutable cuda::DeviceSinks<Real> sinks_;
  std::unique_ptr<cuda::DeviceImplicit<Real>> implicit_;
  std::vector<PartKernels> kernels_;
  std::shared_ptr<const cuda::ActivationMapsSink> maps_;  // the maps of this batch (sinks_.maps())
  long graphs_generation_ = 0;  // sinks_.generation() when graphs_ was built
  // The tower layout's x-halo slots of V's two fields, and the block shape each holds them
  // for ({0, 0, 0}: none; the slots' places depend on the shape).
  std::array<gpu::DeviceBuffer, 2> halo_;
  std::array<gpu::Dim3, 2> halo_block_{};
  gpu::DeviceBuffer fail_;
  std::unique_ptr<gpu::Timer> tuner_timer_;  // times the block shapes under trial
  void* ecg_fn_ = nullptr;
  mutable std::unique_ptr<cuda::DeviceProbes<Real>> probe_reads_;  // voltages_at's, for probe_cells_
  mutable std::vector<std::size_t> probe_cells_;
  void* stim_fn_ = nullptr;  // hw_stimulus
  bool compiled_for_stimuli_ = false;  // the step kernels add the stimulus field
  gpu::CompiledImage image_;
  gpu::Module module_;
  long batch_start_ = 0;
  // Chunks of kGraphSteps steps as CUDA graphs (graph_fits); without (CudaEngineOptions::graphs)
  // every kernel is launched on its own (the tests compare both ways).
  gpu::DeviceBuffer batch_clock_;  // kMaxBatch steps (write_clock), allocated once: graphs point into it
  bool use_graphs_ = true;
  std::map<std::tuple<int, long, long>, std::unique_ptr<gpu::KernelGraph>> graphs_;
  gpu::KernelGraph* building_ = nullptr;  // the graph being built
  long graph_batches_ = 0;
  mutable std::vector<Real> host_v_;
  mutable cuda::DeviceSplit split_;  // this rank's rows (all of them on one rank), the halos and gathers
  mutable bool gathered_ = true;     // split: every rank holds the whole V and states
  std::string agreed_variable_;      // split: the failing variable every rank names
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(const SimSetup& s, std::shared_ptr<gpu::Device> dev,
                                         const CudaEngineOptions& opt, comm::Communicator* comm) {
  if (!dev) throw Error("backend cuda: no GPU given (internal error)");
  if (s.time.precision == Precision::f64) return std::make_unique<CudaEngine<double>>(s, std::move(dev), opt, comm);
  return std::make_unique<CudaEngine<float>>(s, std::move(dev), opt, comm);
}

}  // namespace hw::tissue
