// See population_gpu.hpp.
#include "cell/population_gpu.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "device/device.hpp"
#include "device/embedded.hpp"
#include "model/passes/tabulate.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/passes/specialise.hpp"

namespace hw::cell {

namespace {

constexpr unsigned kThreads = 128;  // per block; the kernel's __launch_bounds__

// Row of each parameter in the device's parameter array, −1 where it has none (compiled in,
// or the stimulus switch, which each launch sets).
std::vector<int> parameter_slots(const CellSetup& s, const std::vector<std::optional<double>>& fixed) {
  std::vector<int> slots(s.params.size(), -1);
  int next = 0;
  for (std::size_t q = 0; q < slots.size(); ++q)
    if (static_cast<int>(q) != s.stim_on && !(q < fixed.size() && fixed[q])) slots[q] = next++;
  return slots;
}

// Cells of a batch (count cells, ns states each, state k of cell c at k·count + c on the
// device) with a state that is not finite: counted on the host as the cpu runner counts.
template <class Real>
std::size_t count_nonfinite_on_device(const gpu::DeviceBuffer& dy, std::size_t count, std::size_t ns) {
  std::vector<Real> y(count * ns);
  dy.download(y.data(), y.size() * sizeof(Real));
  return count_nonfinite_cells(y.data(), count, ns);
}

// Appends launches for steps [a, z), split into pieces of at most max_steps.
void add_launches(std::vector<kernels::PopulationLaunch>& out, long a, long z, bool on,
                  bool track, int beat, long max_steps) {
  for (long f = a; f < z; f += max_steps) {
    kernels::PopulationLaunch l{};
    l.first = f;
    l.steps = static_cast<int>(std::min(max_steps, z - f));
    l.stim_on = on ? 1 : 0;
    l.interval = a;
    l.track = track ? 1 : 0;
    l.beat = beat;
    out.push_back(l);
  }
}

template <class Real>
PopulationResult run_typed(const model::Model& m, const CellSetup& s, const PopulationDesign& d,
                           const StimulusTrain& train, const PopulationOptions& o,
                           GpuPopulationInfo* info, gpu::Device& gpu) {
  const gpu::DeviceInfo& dev = gpu.info();
  const std::size_t n = d.cells();
  const std::size_t ns = s.initial_states.size(), np = s.params.size();
  std::vector<Real> y, p;
  population_arrays(s, d, y, p);  // before compiling: an unknown name fails fast

  const auto fixed = population_fixed_parameters(s, d);
  const std::vector<int> slots = parameter_slots(s, fixed);
  const std::size_t nvary = static_cast<std::size_t>(std::count_if(slots.begin(), slots.end(), [](int k) { return k >= 0; }));
  const gpu::CudaSource src = population_kernel_source(m, s, o.solver.method, sizeof(Real) == 4, fixed, o.solver.cell_maths);
  const gpu::CompiledImage image = gpu::compile_cuda(src, dev.arch());
  const gpu::Module module(gpu, image.image);
  void* fn = module.function("hw_population");
  void* fn_track = module.function("hw_population_track");

  // Cells per batch: all of them where they fit in half the free memory (the rest is
  // headroom for the driver and other processes), else as many as do.
  const std::size_t per_cell = (ns + nvary) * sizeof(Real) + sizeof(kernels::BeatState);
  const auto [free, total] = gpu.memory_info();
  std::size_t batch = o.gpu_batch > 0 ? o.gpu_batch : std::max<std::size_t>(1, free / 2 / per_cell);
  batch = std::min(batch, n);
  if (batch * per_cell > free)
    throw Error(fmt::format("GPU out of memory: {} cells need {:.1f} MiB on the GPU, {:.1f} MiB of "
                            "{:.1f} MiB are free; run fewer cells at once or use --backend cpu",
                            batch, batch * per_cell / 1048576.0, free / 1048576.0, total / 1048576.0));

  const auto launches = population_launches(train, o.solver.dt_ms, kPopulationMaxLaunchSteps);
  PopulationResult r;
  r.last_beat.resize(n);
  const gpu::Stream& on = gpu.compute();
  gpu::Timer timer(on);
  double device_ms = 0;
  gpu::DeviceBuffer dy(gpu, ns * batch * sizeof(Real), "the population's states");
  gpu::DeviceBuffer dp(gpu, std::max<std::size_t>(1, nvary) * batch * sizeof(Real), "the population's parameters");
  gpu::DeviceBuffer dtr(gpu, batch * sizeof(kernels::BeatState), "the population's beat trackers");
  std::vector<kernels::BeatState> tracks(batch);
  if (o.stop) r.done.assign(n, 0);
  for (std::size_t first = 0; first < n; first += batch) {
    if (o.stop && o.stop()) break;  // Ctrl-C: the batches not begun stay undone
    const std::size_t count = std::min(batch, n - first);
    // The batch's rows of the full arrays, packed with stride `count`.
    for (std::size_t k = 0; k < ns; ++k)
      dy.upload(y.data() + k * n + first, count * sizeof(Real), k * count * sizeof(Real));
    for (std::size_t k = 0; k < np; ++k)
      if (slots[k] >= 0)
        dp.upload(p.data() + k * n + first, count * sizeof(Real), std::size_t(slots[k]) * count * sizeof(Real));
    dtr.fill_zero();
    kernels::PopulationArgs<Real> a{};
    a.n = count;
    a.y = reinterpret_cast<Real*>(dy.ptr());
    a.p = reinterpret_cast<const Real*>(dp.ptr());
    a.track = reinterpret_cast<kernels::BeatState*>(dtr.ptr());
    a.dt_model = o.solver.dt_ms / s.time_to_ms;
    a.dt_ms = o.solver.dt_ms;
    a.to_mv = s.voltage_to_mV;
    const unsigned blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
    timer.start();
    bool stopped = false;
    for (std::size_t i = 0; i < launches.size() && !stopped; ++i) {
      a.l = launches[i];
      void* args[] = {&a};
      gpu::launch(on, a.l.track ? fn_track : fn, {blocks, 1, 1}, {kThreads, 1, 1}, args);
      // Ctrl-C within a batch: the queue is drained launch by launch (each at most
      // kPopulationMaxLaunchSteps steps, seconds at most), so the stop is seen within one
      // launch, not after the whole batch (minutes for 10^5 cells of a large model in double).
      // The batch's cells are then unfinished and stay undone (--resume runs them).
      if (o.stop && i % 4 == 3) {
        on.synchronize();
        stopped = o.stop();
      }
    }
    device_ms += timer.stop_ms();
    if (stopped) break;
    dtr.download(tracks.data(), count * sizeof(kernels::BeatState));
    for (std::size_t i = 0; i < count; ++i) r.last_beat[first + i] = BeatTracker(tracks[i]).finish();
    if (info) info->nonfinite += count_nonfinite_on_device<Real>(dy, count, ns);
    if (o.stop) std::fill(r.done.begin() + long(first), r.done.begin() + long(first + count), 1);
  }
  if (info) {
    auto resources = [](void* f) {
      const gpu::KernelResources res = gpu::kernel_resources(f);
      return fmt::format("{} registers{}", res.registers,
                         res.local_bytes ? fmt::format(" + {} B local", res.local_bytes) : "");
    };
    info->device = fmt::format("{} ({})", dev.name, dev.arch());
    info->kernel = fmt::format("{}; {} of {} parameters compiled in as constants; {}, last beat {}",
                               image.from_cache ? "from the cache"
                                                : fmt::format("compiled in {:.1f} s", image.compile_seconds),
                               np - nvary - (s.stim_on >= 0 ? 1 : 0), np, resources(fn), resources(fn_track));
    info->batch = batch;
    info->device_ms = device_ms;
  }
  return r;
}

}  // namespace

std::vector<std::optional<double>> population_fixed_parameters(const CellSetup& s,
                                                               const PopulationDesign& d) {
  std::vector<std::optional<double>> fixed(s.params.size());
  for (std::size_t q = 0; q < fixed.size(); ++q) fixed[q] = s.params[q];
  const std::size_t nc = d.names.size(), n = d.cells();
  for (std::size_t j = 0; j < nc; ++j) {
    const int q = s.param_index(d.names[j]);
    if (q < 0) continue;  // population_arrays reports it
    const double first = n ? d.values[j] : 0.0;
    bool uniform = true;
    for (std::size_t c = 1; c < n && uniform; ++c) uniform = d.values[c * nc + j] == first;
    fixed[std::size_t(q)] = uniform ? std::optional<double>(d.scaling ? first * s.params[std::size_t(q)] : first)
                                    : std::nullopt;
  }
  if (s.stim_on >= 0) fixed[std::size_t(s.stim_on)] = std::nullopt;  // set by each launch
  return fixed;
}

void check_gpu_population(const SolverOptions& solver) {
  if (solver.cvode)
    throw InputError(SourceLoc{}, "--integrator cvode does not run on the GPU: populations there use "
                                  "the fixed-step integrators (fe, rk2, rk4, rl1, rl2, sbe, grl1, grl2); use one "
                                  "of them or --backend cpu");
}

bool choose_population_gpu(const std::string& backend, const SolverOptions& solver,
                           std::string* note) {
  const gpu::GpuStatus& g = gpu::gpu_status();
  auto say = [&](std::string s) {
    if (note) *note = std::move(s);
  };
  if (backend == "cpu") return say("backend cpu"), false;
  if (backend == "cuda") {
    if (!g.usable) throw Error("--backend cuda: " + g.why);
    check_gpu_population(solver);
    say(fmt::format("backend cuda on {} ({})", g.device.name, g.device.arch()));
    return true;
  }
  if (backend == "auto") {
    if (!g.usable) return say(fmt::format("backend auto: cpu ({})", g.why)), false;
    try {
      check_gpu_population(solver);
    } catch (const InputError& e) {
      say(fmt::format("backend auto: cpu, as the GPU does not run this: {}",
                      e.diagnostics().empty() ? e.what() : e.diagnostics().front().message));
      return false;
    }
    say(fmt::format("backend auto: cuda on {} ({})", g.device.name, g.device.arch()));
    return true;
  }
  throw InputError(SourceLoc{}, fmt::format("--backend \"{}\": expected auto, cpu or cuda", backend));
}

std::vector<kernels::PopulationLaunch> population_launches(const StimulusTrain& train,
                                                           double dt_ms, long max_steps) {
  const StepSchedule sched(train, dt_ms);
  if (sched.onset_steps().empty()) throw InputError(SourceLoc{}, "the stimulus train has no beats");
  max_steps = std::max(1L, max_steps);
  const long total = sched.total_steps();
  const long last_onset = sched.onset_steps().back();
  const auto edges = sched.edges();
  const int beat = static_cast<int>(sched.onset_steps().size());  // the last, 1-based
  std::vector<kernels::PopulationLaunch> out;
  // Before the last beat: as run_chunk, one interval of constant stimulus per cpu call.
  for (std::size_t e = 0; e + 1 < edges.size() && edges[e] < last_onset; ++e) {
    const long a = edges[e], z = std::min(edges[e + 1], last_onset);
    add_launches(out, a, z, sched.on(a), false, beat, max_steps);
  }
  // The last beat, tracked; the stimulus is constant between edges.
  const std::size_t first_tracked = out.size();
  long a = last_onset;
  for (long e : edges) {
    if (e <= a) continue;
    const long z = std::min(e, total);
    add_launches(out, a, z, sched.on(a), true, beat, max_steps);
    a = z;
    if (a >= total) break;
  }
  if (out.size() == first_tracked) {  // an empty last beat still begins its tracker
    kernels::PopulationLaunch l{};
    l.first = last_onset;
    l.interval = last_onset;
    l.track = 1;
    l.beat = beat;
    out.push_back(l);
  }
  out[first_tracked].begin = 1;
  return out;
}

gpu::CudaSource population_kernel_source(const model::Model& m, const CellSetup& s,
                                         Integrator method, bool f32,
                                         const std::vector<std::optional<double>>& fixed, model::CellMaths maths) {
  if (m.states.size() != s.initial_states.size() || m.parameters.size() != s.params.size())
    throw Error(fmt::format("population on the GPU: the model '{}' ({} states, {} parameters) is "
                            "not the one the setup was made from",
                            m.name, m.states.size(), m.parameters.size()));
  const char* real = f32 ? "float" : "double";
  gpu::CudaSource src;
  src.name = "heartwave_population.cu";
  src.headers = gpu::embedded_sources();
  src.options = {"-default-device"};
  if (f32)
    for (auto& o : gpu::float_kernel_options()) src.options.push_back(o);
  model::CudaOptions co;
  co.use_float = f32;
  co.function_prefix = "hw_pop";
  co.demo_kernel = false;
  std::string& t = src.text;
  t = "#include \"kernels/population_k.hpp\"\n";
  t += fmt::format("\n// ---- model {} ----\n", m.name);
  std::vector<std::optional<double>> values = fixed;
  values.resize(m.parameters.size());
  const model::Model specialised = model::specialise_parameters(m, values);
  const model::Tabulation tabulation = maths.tables ? model::tabulate_voltage_functions(specialised) : model::Tabulation{};
  co.tables = &tabulation;
  co.fast_intrinsics = maths.fast;
  t += model::print_cuda(specialised, co);
  std::string slot_list;
  for (int k : parameter_slots(s, values)) slot_list += fmt::format("{}{}", slot_list.empty() ? "" : ", ", k);
  t += fmt::format(
      "struct hw_pop_M {{\n"
      "  static constexpr int ns = hw_pop_n_states, np = hw_pop_n_params, nc = hw_pop_n_constants;\n"
      "  static constexpr int kv = {1}, kc = {2}, kon = {3};\n"
      "  static __device__ __forceinline__ constexpr int slot(int q) {{\n"
      "    constexpr int rows[] = {{{6}}};\n    return rows[q];\n  }}\n"
      "  static __device__ __forceinline__ void constants(const {0}* p, {0}* c) {{ hw_pop_constants(p, c); }}\n"
      "  static __device__ __forceinline__ void step({0} t, {0} dt, {0}* y, const {0}* p, const {0}* c) {{\n"
      "    hw_pop_step_{4}(t, dt, y, p, c);\n  }}\n}};\n"
      // Two kernels: the last beat's launches carry the trackers, the others do not.
      "extern \"C\" __global__ void __launch_bounds__({5}) hw_population(const hw::kernels::PopulationArgs<{0}> a) {{\n"
      "  const unsigned long long c = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (c < a.n) hw::kernels::population_cell<{0}, hw_pop_M, false>(a, c);\n}}\n"
      "extern \"C\" __global__ void __launch_bounds__({5}) hw_population_track(const hw::kernels::PopulationArgs<{0}> a) {{\n"
      "  const unsigned long long c = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (c < a.n) hw::kernels::population_cell<{0}, hw_pop_M, true>(a, c);\n}}\n",
      real, s.voltage, s.calcium, s.stim_on, integrator_name(method), kThreads,
      slot_list.empty() ? "-1" : slot_list);
  return src;
}

PopulationResult run_population_gpu(const model::Model& analysed, const CellSetup& s,
                                    const PopulationDesign& d, const StimulusTrain& train,
                                    const PopulationOptions& o, GpuPopulationInfo* info) {
  check_gpu_population(o.solver);
  if (d.cells() == 0) throw InputError(SourceLoc{}, "the population has no cells");
  const gpu::GpuStatus& g = gpu::gpu_status();
  if (!g.usable) throw Error("--backend cuda: " + g.why);
  const std::shared_ptr<gpu::Device> dev = gpu::Device::open(o.gpu_device);
  return o.solver.single_precision ? run_typed<float>(analysed, s, d, train, o, info, *dev)
                                   : run_typed<double>(analysed, s, d, train, o, info, *dev);
}

}  // namespace hw::cell
