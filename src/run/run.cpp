#include "run/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <unistd.h>

#include <fmt/format.h>

#include "comm/world.hpp"
#include "core/error.hpp"
#include "device/device.hpp"
#include "device/driver.hpp"
#include "run/case_file.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/geometry_fields.hpp"
#include "outputs/output_manager.hpp"
#include "outputs/run_manifest.hpp"
#include "run/output_folder.hpp"
#include "tissue/case_codes.hpp"
#include "tissue/engine.hpp"
#include "tissue/reaction.hpp"

namespace hw::run {

namespace fs = std::filesystem;
using namespace hw::tissue;

namespace {

// The output folder the user named (rank 0's; the other ranks write into scratch).
template <class Impl>
std::string c_directory(const Impl& r) {
  return r.scratch.dir.empty() ? r.c.output.directory : r.user_directory;
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) b /= 1000, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.1f} {}", b, units[u]);
}

}  // namespace

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

std::vector<std::string> Plan::describe() const {
  std::vector<std::string> l;
  l.push_back(fmt::format("  memory    {} ({} bytes) needed, {} available", format_bytes(double(memory.peak())),
                          memory.peak(), host_available ? format_bytes(double(host_available)) : "unknown"));
  if (memory.setup > 0)
    l.push_back(fmt::format("            {} ({} bytes) while running; {} of set-up data (the initial state in double "
                            "among it) is freed before the first step",
                            format_bytes(double(memory.run)), memory.run, format_bytes(double(memory.setup))));
  if (memory.snapshots > 0)
    l.push_back(fmt::format("            up to {} of field outputs in flight (copies written while the steps go on)",
                            format_bytes(double(memory.snapshots))));
  if (memory.checkpoint > 0)
    l.push_back(fmt::format("            {} more while a checkpoint is written (the state in double, and its bytes)",
                            format_bytes(double(memory.checkpoint))));
  if (stable_dt > 0) l.push_back(fmt::format("  stability explicit diffusion needs dt ≤ {:.4g} ms", stable_dt));
  l.push_back("  " + backend_note);
  if (backend == Backend::cuda)
    l.push_back(fmt::format("  GPU memory {} needed ({} of it output snapshots in flight), {} of {} free",
                            format_bytes(double(gpu_need())), format_bytes(double(memory.snapshots)),
                            format_bytes(double(gpu_free)), format_bytes(double(gpu_total))));
  return l;
}

int split_device(int device) { return comm::world().size() > 1 ? device + comm::world().local_rank() : device; }

Plan plan(const TissueCase& c, const std::string& backend, int device) {
  return plan(std::make_shared<SimSetup>(prepare_setup(c)), backend, device);
}

Plan plan(std::shared_ptr<SimSetup> prepared, const std::string& backend, int device) {
  Plan p;
  p.setup = std::move(prepared);
  const TissueCase& c = p.setup->tcase;
  p.memory = estimate_memory(*p.setup);
  p.host_available = available_memory_bytes();
  const std::size_t need = p.memory.peak();
  if (p.host_available > 0 && need > p.host_available)
    throw InputError({case_code::problem(
        SourceLoc{c.source_file, 0, 0},
        fmt::format("the case needs {} ({} bytes) but only {} ({} bytes) of memory is available "
                    "(MemAvailable in /proc/meminfo): use a coarser grid or a smaller domain",
                    format_bytes(double(need)), need, format_bytes(double(p.host_available)), p.host_available),
        case_code::no_memory)});
  // σ and the explicit dt limit, checked there (a plan, --check, reports it before any run).
  prepare_diffusion(*p.setup);
  if (std::isfinite(p.setup->stable_dt)) p.stable_dt = p.setup->stable_dt;
  // A split run (docs/parallel.md) takes one GPU per rank, the rank's place on its host
  // counted from `device` (split_device); auto steps on the cpu where a host has more ranks
  // than GPUs, cuda refuses that.
  const int ranks = comm::world().size();
  // The GPUs are counted only for a split run (a one-rank cpu run never loads the driver here).
  const int local = comm::world().local_size(), gpus = ranks > 1 && backend != "cpu" ? gpu::device_count() : 0;
  if (ranks > 1 && backend == "auto" && gpu::gpu_status().usable && device + local > gpus) {
    p.backend = Backend::cpu;
    p.backend_note = fmt::format("backend auto: cpu ({} ranks on this host, {} GPU{} from GPU {})", local, gpus,
                                 gpus == 1 ? "" : "s", device);
  } else {
    p.backend = choose_backend(backend, &p.backend_note);
  }
  if (p.backend == Backend::cuda && ranks > 1 && device + local > gpus)
    throw Error(fmt::format("--backend cuda: {} ranks on this host but {} GPU{}{}: start at most {} rank{} per host "
                            "(one GPU each), or use --backend cpu",
                            local, gpus, gpus == 1 ? "" : "s", device ? fmt::format(" from GPU {} on", device) : "",
                            std::max(0, gpus - device), gpus - device == 1 ? "" : "s"));
  if (p.backend == Backend::cuda) {
    std::tie(p.gpu_free, p.gpu_total) = gpu::Device::open(split_device(device))->memory_info();
    if (p.gpu_need() > p.gpu_free)
      throw InputError({case_code::problem(
          SourceLoc{c.source_file, 0, 0},
          fmt::format("the case needs {} on the GPU ({} of it output snapshots in flight) but {} is "
                      "free: run in float (time.precision = \"float\"), on a coarser grid, with fewer "
                      "output variables, or with --backend cpu",
                      format_bytes(double(p.gpu_need())), format_bytes(double(p.memory.snapshots)),
                      format_bytes(double(p.gpu_free))),
          case_code::no_memory)});
  }
  return p;
}

std::uint64_t case_identity(const std::string& text, const std::vector<std::string>& sets) {
  std::uint64_t h = io::fnv1a64(text);
  for (const auto& s : sets) {
    if (s.rfind("time.t_end", 0) == 0 || s.rfind("output.", 0) == 0) continue;
    h = io::fnv1a64(s.data(), s.size(), h ^ 0x9e3779b97f4a7c15ull);
  }
  return h;
}

// The folder a rank other than 0 of a split run writes into: its own, removed when the run
// ends. Every rank runs the same outputs (they gather the fields, so the collectives match);
// only rank 0's land in output.directory.
struct RankScratch {
  std::string dir;
  RankScratch() {
    if (comm::world().rank() == 0) return;
    dir = (fs::temp_directory_path() / fmt::format("heartwave-rank{}-{}", comm::world().rank(), ::getpid())).string();
  }
  ~RankScratch() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

struct Run::Impl {
  RankScratch scratch;
  TissueCase c;
  std::string user_directory;  // c.output.directory as the case gave it
  std::uint64_t identity = 0;
  std::unique_ptr<Simulation> sim;
  std::unique_ptr<io::OutputManager> out;
  std::string ckpt;
  bool begun = false;
  io::CheckpointOrigin origin;
  std::string dir;
  io::RunManifest manifest;
  std::set<std::string> foreign;  // files in the folder before the run that are not its
  std::vector<std::string> cleared;
  std::string case_name;  // what the manifest calls a case without a path (built-in, Python)

  void checkpoint() {
    io::write_checkpoint(ckpt, sim->save_state(), io::CheckpointMeta{identity, sim->time(), sim->steps_done()},
                         out->save_state(), origin);
  }
  // Rewrites run.json: the state, the time, and the files the run has written so far.
  void record(const char* state) {
    manifest.state = state;
    manifest.t_ms = sim->time();
    std::set<std::string> files;
    const std::vector<std::string> present = io::files_in(dir);
    for (const auto& f : manifest.files)
      if (std::binary_search(present.begin(), present.end(), f)) files.insert(f);
    for (const auto& f : present)
      if (!foreign.count(f)) files.insert(f);
    files.insert(io::manifest_name);
    manifest.files.assign(files.begin(), files.end());
    io::write_manifest(dir, manifest);
  }
  // The manifest at the start: a new run's, or the continued run's own (its start time
  // and files kept). Files already in the folder that are neither heartwave's nor the
  // continued run's are the user's: never listed. Called before the outputs are opened
  // (they create the folder and files); record() writes it once they are.
  void open_manifest() {
    std::optional<io::RunManifest> before;
    try {
      before = io::read_manifest(dir);
    } catch (const InputError&) {
      // a damaged run.json (the caller's check let it through): replaced below
    }
    const bool same_run = before && before->run_id == origin.run_id;
    manifest = same_run ? *before : io::RunManifest{};
    manifest.run_id = origin.run_id;
    manifest.case_path = origin.case_path.empty() ? case_name : origin.case_path;
    manifest.case_hash = identity;
    manifest.overrides = origin.overrides;
    manifest.version = io::heartwave_version();
    if (!same_run) manifest.started = io::utc_now();
    for (const auto& f : io::files_in(dir))
      if (!io::is_heartwave_output(f) &&
          !(same_run && std::find(before->files.begin(), before->files.end(), f) != before->files.end()))
        foreign.insert(f);
  }
  // What OutputManager checks before it creates anything: --overwrite deletes nothing
  // for a run that its outputs' check is about to refuse.
  bool outputs_valid(const TissueCase& c) const {
    Field<float> f;
    for (const auto& v : c.output.variables)
      if (!sim->field(v, f)) return false;
    return c.output.png_interval <= 0 || sim->field(c.output.png_variable, f);
  }
};

Run::Run(const TissueCase& c, const Options& o) : impl_(std::make_unique<Impl>()) {
  Impl& r = *impl_;
  r.c = c;
  r.user_directory = c.output.directory;
  if (!r.scratch.dir.empty()) r.c.output.directory = r.scratch.dir;
  r.identity = o.identity;
  if (o.setup && o.setup->stage != SetupStage::none)
    r.sim = std::make_unique<Simulation>(std::move(*o.setup), o.sim);
  else
    r.sim = std::make_unique<Simulation>(c, o.sim);
  if (io::grid_from_file(c)) io::validate_regions(c, r.sim->grid());
  std::optional<io::Checkpoint> ck;
  if (!o.restart.empty()) {
    ck = io::read_checkpoint(o.restart, o.identity);
    try {
      r.sim->load_state(ck->bytes);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      throw InputError(SourceLoc{o.restart, 0, 0}, std::string("cannot restart from this checkpoint: ") + e.what());
    }
  }
  // Everything is checked: now the folder may be cleared and claimed.
  r.dir = r.c.output.directory.empty() ? "." : r.c.output.directory;
  r.case_name = c.source_file.empty() ? "<case without a file>" : c.source_file;
  r.origin.run_id = ck && ck->origin.known() ? ck->origin.run_id : io::new_run_id();
  r.origin.case_path = o.case_path;
  r.origin.case_text_hash = o.case_text_hash;
  r.origin.overrides = o.overrides;
  if (o.overwrite && r.outputs_valid(r.c) && r.scratch.dir.empty()) r.cleared = clear_previous_outputs(r.dir, o.restart);
  r.open_manifest();
  r.out = std::make_unique<io::OutputManager>(r.c, *r.sim, ck ? &ck->outputs : nullptr);
  if (!r.c.output.geometry_fields.empty() && !ck) io::write_geometry_fields(r.c);
  r.ckpt = (fs::path(r.c.output.directory) / "checkpoint.hwck").string();
  r.record("running");
}

Run::~Run() = default;

const Simulation& Run::simulation() const { return *impl_->sim; }
std::vector<std::string> Run::notes() const { return impl_->out->notes(); }
const std::string& Run::checkpoint_path() const { return impl_->ckpt; }
const std::string& Run::run_id() const { return impl_->origin.run_id; }
const std::vector<std::string>& Run::cleared() const { return impl_->cleared; }

Result Run::advance(double t_end, const std::function<void(double)>& progress, bool finish) {
  Impl& r = *impl_;
  Simulation& sim = *r.sim;
  if (t_end < 0) t_end = r.c.time.t_end;
  if (!r.begun) {
    r.out->begin();
    r.begun = true;
  }
  Result res;
  res.checkpoint = (fs::path(c_directory(r)) / "checkpoint.hwck").string();
  const io::StopSignalGuard guard;
  const double eps = 1e-3 * sim.dt();
  const double every = r.c.output.checkpoint_interval;
  double next_ckpt = every > 0 ? (std::floor(sim.time() / every + 1e-9) + 1) * every : INFINITY;
  // Steps run in batches up to the next output or checkpoint (a GPU queues a batch and
  // checks it once instead of waiting for every step); the batch grows while it takes
  // under 50 ms, so progress and a stop signal are still seen several times a second.
  long batch = 1;
  while (sim.time() < t_end - eps) {
    try {
      const double until = std::min({t_end, r.out->next_due(), next_ckpt, sim.time() + double(batch) * sim.dt()});
      const auto w0 = std::chrono::steady_clock::now();
      if (until < sim.time() + 1.5 * sim.dt())
        sim.step();
      else
        sim.run_until(until);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      // Split: every rank takes the same batches (the slowest rank's time decides).
      if (comm::world().size() > 1) comm::world().allreduce(&wall, 1, comm::Reduce::max);
      if (wall < 0.05 && batch < 4096) batch *= 2;
      if (wall > 0.2 && batch > 1) batch /= 2;
    } catch (const NumericalError& e) {
      // The simulation kept the last good state: checkpoint it and keep its fields.
      r.checkpoint();
      res.outcome = Result::Outcome::failed;
      res.t_ms = sim.time();
      res.failed_at_ms = e.time;
      res.cell = e.cell;
      res.variable = e.variable;
      res.message = e.what();
      res.last_good = r.out->write_last_good();
      if (!r.scratch.dir.empty()) res.last_good = (fs::path(r.user_directory) / fs::path(res.last_good).filename()).string();
      r.record("failed");
      return res;
    }
    r.out->after_step();
    if (sim.time() >= next_ckpt - eps) {
      r.checkpoint();
      r.record("running");
      while (next_ckpt <= sim.time() + eps) next_ckpt += every;
    }
    if (progress) progress(sim.time());
    // Split: a signal reaches the ranks at different steps; all stop when any has seen one.
    double stop = io::stop_requested() ? 1 : 0;
    if (comm::world().size() > 1) comm::world().allreduce(&stop, 1, comm::Reduce::max);
    if (stop > 0) {
      r.checkpoint();
      res.outcome = Result::Outcome::stopped;
      res.signal = io::stop_signal();
      res.t_ms = sim.time();
      r.record("stopped");
      return res;
    }
  }
  r.checkpoint();
  res.t_ms = sim.time();
  if (finish) res.summary = r.out->finish(true);
  r.record(finish ? "finished" : "running");
  return res;
}

}  // namespace hw::run
