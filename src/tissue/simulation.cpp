// Simulation: the set-up (tissue/reaction.hpp), one engine (tissue/engine.hpp) and the step
// count; checkpoints in the canonical state format, so any engine resumes any other's run.
#include "tissue/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "comm/world.hpp"
#include "core/bytes.hpp"
#include "tissue/engine.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue {

namespace {

// Version 04: the canonical state (tissue/engine.hpp), V on tissue cells in grid order, then
// the stimuli added while running (write_added_stimuli); 03 had no stimuli; 02 held V in the
// cpu engine's row layout, 01 on the whole box.
constexpr char kMagic[8] = {'H', 'W', 'T', 'I', 'S', 'S', '0', '4'};

// The stimuli after the case's own: each one's numbers and its resolved cells per part, so
// a restart stimulates the same cells whatever the region was.
void write_added_stimuli(const SimSetup& s, ByteWriter& out) {
  const auto& list = s.stimuli.list();
  out.put<std::uint64_t>(list.size() - s.tcase.stimuli.size());
  for (std::size_t q = s.tcase.stimuli.size(); q < list.size(); ++q) {
    const ResolvedStimulus& r = list[q];
    out.put<double>(r.given.amplitude);
    out.put<double>(r.given.start);
    out.put<double>(r.given.duration);
    out.put<double>(r.given.period);
    out.put<std::int64_t>(r.given.count);
    for (const auto& cells : r.cells) {
      out.put<std::uint64_t>(cells.size());
      out.put_bytes(cells.data(), cells.size() * sizeof(std::uint32_t));
    }
  }
}

// Read whole before anything changes: a damaged state leaves the run as it was.
std::vector<ResolvedStimulus> read_added_stimuli(const SimSetup& s, ByteReader& in) {
  const auto stimuli = in.get<std::uint64_t>();
  std::vector<ResolvedStimulus> added;
  for (std::uint64_t q = 0; q < stimuli; ++q) {
    Stimulus st;
    st.amplitude = in.get<double>();
    st.start = in.get<double>();
    st.duration = in.get<double>();
    st.period = in.get<double>();
    st.count = int(std::clamp<std::int64_t>(in.get<std::int64_t>(), 0, std::numeric_limits<int>::max()));
    std::vector<std::vector<std::uint32_t>> cells;
    for (std::size_t p = 0; p < s.parts.size(); ++p) {
      const auto n = in.get<std::uint64_t>();
      if (n > in.remaining() / sizeof(std::uint32_t)) throw Error("load_state: the saved state is truncated (an added stimulus)");
      cells.emplace_back(n);
      in.get_bytes(cells.back().data(), n * sizeof(std::uint32_t));
    }
    const std::string what = fmt::format("stimulus[{}]", s.tcase.stimuli.size() + q);
    try {
      added.push_back(stimulus_on_cells(s, st, std::move(cells), what));
    } catch (const InputError& e) {
      throw Error(fmt::format("load_state: an added stimulus is damaged: {}", e.what()));
    }
  }
  return added;
}

}  // namespace

struct Simulation::Impl {
  SimSetup s;
  SimulationOptions opt;
  std::unique_ptr<Engine> engine;
  long steps = 0;
  std::optional<DiffusionSetup> ecg_diffusion;  // see diffusion()
};

Simulation::Simulation(const TissueCase& c, const SimulationOptions& opt)
    : Simulation(prepare_setup(c), opt) {}

Simulation::Simulation(SimSetup&& setup, const SimulationOptions& opt)
    : impl_(std::make_unique<Impl>()) {
  impl_->opt = opt;
  impl_->s = std::move(setup);
  setup.stage = SetupStage::none;  // taken: a second Simulation must set its case up again
  // Only the cpu engine runs the set-up's CellKernels; the reference interprets the IR and
  // the CUDA engine prints its own kernels from it.
  resolve_setup(impl_->s, opt.backend == Backend::cpu);
  EngineOptions eo{opt.backend, opt.threads, opt.adapt_threads, opt.device, nullptr};
  eo.comm = opt.comm ? opt.comm : &comm::world();
  impl_->engine = make_engine(impl_->s, eo);
  // Only the GPU engine sums the pseudo-ECG itself (its SinkHost's ecg sink); with the others the
  // outputs apply the operator on the host, from this (diffusion()).
  if (!impl_->s.tcase.output.electrodes.empty() && opt.backend != Backend::cuda)
    impl_->ecg_diffusion = diffusion_setup(impl_->s, row_layout(impl_->s.geo.grid, impl_->s.geo.mask));
  // Set-up data the engine has copied into its own arrays (per-voxel σ and φ are box-sized:
  // keeping them would make a heart's memory follow its box, not its tissue).
  impl_->s.initial.clear();
  impl_->s.initial.shrink_to_fit();
  impl_->s.sigma = Conductivity{};
  impl_->s.phi = Field<double>();
  impl_->s.models.clear();  // the parts keep the analysed models they run
  for (Part& p : impl_->s.parts) {
    p.pcell.clear();
    p.pcell.shrink_to_fit();
  }
}

Simulation::~Simulation() = default;

void Simulation::step() {
  impl_->engine->step(impl_->steps);
  ++impl_->steps;
}

void Simulation::run_until(double t_ms, const std::function<void(const Simulation&)>& after) {
  const double dt = impl_->s.time.dt;
  if (after) {
    while (time() < t_ms - 1e-3 * dt) {
      step();
      after(*this);
    }
    return;
  }
  // Nobody looks between steps: let the engine run them in batches (the GPU queues a batch
  // and checks its NaN flag once). Long batches keep the GPU busy while the host waits: a
  // host whose cores are all taken may take milliseconds to come back after each check.
  constexpr long kBatch = 1024;
  while (time() < t_ms - 1e-3 * dt) {
    const long left = std::max(1L, long(std::ceil((t_ms - 1e-3 * dt - time()) / dt)));
    long done = 0;
    try {
      impl_->engine->advance(impl_->steps, std::min(left, kBatch), done);
    } catch (...) {
      impl_->steps += done;
      throw;
    }
    impl_->steps += done;
  }
}

double Simulation::time() const { return impl_->steps * impl_->s.time.dt; }
long Simulation::steps_done() const { return impl_->steps; }
double Simulation::dt() const { return impl_->s.time.dt; }
const Grid& Simulation::grid() const { return impl_->s.geo.grid; }
VariableUnits Simulation::variable_units(const std::string& variable) const {
  return tissue::variable_units(impl_->s, variable);
}
const Mask& Simulation::mask() const { return impl_->s.geo.mask; }
const TissueCase& Simulation::tissue_case() const { return impl_->s.tcase; }
std::shared_ptr<const io::UnstructuredMesh> Simulation::mesh() const { return impl_->s.geo.mesh; }
std::size_t Simulation::tissue_cells() const { return impl_->s.tissue_cells; }
std::vector<int> Simulation::part_states() const {
  std::vector<int> ns;
  for (const Part& p : impl_->s.parts) ns.push_back(p.ns);
  return ns;
}

void Simulation::voltage(Field<float>& out) const { impl_->engine->voltage(out); }
double Simulation::voltage_at(std::size_t n) const { return impl_->engine->voltage_at(n); }
void Simulation::voltages_at(const std::vector<std::size_t>& cells, std::vector<double>& out) const {
  impl_->engine->voltages_at(cells, out);
}

namespace {

// Where a variable lives: V, or the state of that name in every part whose model has one
// (empty: nowhere).
FieldRefs refs_of(const SimSetup& s, const std::string& variable) {
  if (variable == "V") return {FieldRef{}};
  FieldRefs refs;
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    const Part& p = s.parts[q];
    for (int k = 0; k < p.ns; ++k)
      if (k != p.kv && p.setup.state_names[k] == variable) refs.push_back({int(q), k});
  }
  return refs;
}

FieldRefs refs_or_throw(const SimSetup& s, const std::string& variable, const char* who) {
  FieldRefs refs = refs_of(s, variable);
  if (refs.empty()) throw Error(fmt::format("{}: no model region has a state '{}'", who, variable));
  return refs;
}

// Compact index of grid cell n in part p (nullopt: not one of its cells).
std::optional<std::size_t> compact_index(const Part& p, std::size_t n) {
  if (p.identity) return n;
  const auto it = std::lower_bound(p.cells.begin(), p.cells.end(), std::uint32_t(n));
  if (it == p.cells.end() || *it != n) return std::nullopt;
  return std::size_t(it - p.cells.begin());
}

// A probe that reads nothing (its cell has no such state, or is not tissue): NaN.
class ProbesWithGaps final : public ProbeSink {
 public:
  ProbesWithGaps(std::shared_ptr<ProbeSink> inner, std::vector<long> where, std::size_t n)
      : inner_(std::move(inner)), where_(std::move(where)), n_(n) {}
  void read(std::vector<double>& out) const override {
    if (inner_) inner_->read(got_);
    out.assign(n_, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < n_; ++i)
      if (where_[i] >= 0) out[i] = got_[std::size_t(where_[i])];
  }

 private:
  std::shared_ptr<ProbeSink> inner_;
  std::vector<long> where_;  // per probe: its read in inner_, or −1
  std::size_t n_;
  mutable std::vector<double> got_;
};

}  // namespace

bool Simulation::field(const std::string& variable, Field<float>& out) const {
  if (variable == "V") {
    voltage(out);
    return true;
  }
  const FieldRefs refs = refs_of(impl_->s, variable);
  out.resize(grid().size(), std::numeric_limits<float>::quiet_NaN());
  for (const FieldRef& r : refs) impl_->engine->state(std::size_t(r.part), r.state, out);
  return !refs.empty();
}

std::unique_ptr<Snapshot> Simulation::snapshot(const std::vector<std::string>& variables) const {
  std::vector<FieldRefs> what;
  for (const std::string& name : variables) what.push_back(refs_or_throw(impl_->s, name, "snapshot"));
  return impl_->engine->sinks().snapshot(what);
}

double Simulation::value_at(const std::string& variable, std::size_t n) const {
  if (variable == "V") return voltage_at(n);
  for (const FieldRef& r : refs_of(impl_->s, variable))
    if (const auto i = compact_index(impl_->s.parts[std::size_t(r.part)], n))
      return impl_->engine->state_at(std::size_t(r.part), r.state, *i);  // parts do not overlap
  return std::numeric_limits<double>::quiet_NaN();
}

std::shared_ptr<ActivationSink> Simulation::attach_activation(const ActivationMaps& m) const {
  return impl_->engine->sinks().activation(m);
}

std::shared_ptr<EcgSink> Simulation::attach_ecg(const std::vector<std::array<double, 3>>& at, double rmin) const {
  return impl_->engine->sinks().ecg(at, rmin);
}

namespace {

// The engine's reads for (variable, grid cell) pairs: `found` the reads that exist, `where`
// per pair its index in found or −1 (off tissue, or no state of that name in the cell's
// model). hw::Error for a variable no model has.
void resolve_reads(const SimSetup& s, const std::vector<std::pair<std::string, std::size_t>>& reads, const char* who,
                   std::vector<ProbeRead>& found, std::vector<long>& where) {
  std::string last_variable;
  FieldRefs refs;
  for (const auto& [variable, n] : reads) {
    if (refs.empty() || variable != last_variable) {
      refs = refs_or_throw(s, variable, who);
      last_variable = variable;
    }
    where.push_back(-1);
    if (n >= s.geo.grid.size() || !is_tissue(&s.geo.mask, n)) continue;
    for (const FieldRef& r : refs) {
      std::optional<std::size_t> i = n;
      if (r.part >= 0) i = compact_index(s.parts[std::size_t(r.part)], n);
      if (!i) continue;
      where.back() = long(found.size());
      found.push_back({r, *i});
      break;
    }
  }
}

// A frame whose samples off the tissue (or without the state) read NaN.
class FrameWithGaps final : public FrameSink {
 public:
  FrameWithGaps(std::shared_ptr<FrameSink> inner, std::vector<long> where)
      : inner_(std::move(inner)), where_(std::move(where)) {}
  void read(std::vector<float>& out) const override {
    if (inner_) inner_->read(got_);
    out.assign(where_.size(), std::numeric_limits<float>::quiet_NaN());
    for (std::size_t i = 0; i < where_.size(); ++i)
      if (where_[i] >= 0) out[i] = got_[std::size_t(where_[i])];
  }

 private:
  std::shared_ptr<FrameSink> inner_;
  std::vector<long> where_;
  mutable std::vector<float> got_;
};

}  // namespace

std::shared_ptr<ProbeSink> Simulation::attach_probes(const std::vector<std::pair<std::string, std::size_t>>& reads) const {
  std::vector<ProbeRead> found;
  std::vector<long> where;
  resolve_reads(impl_->s, reads, "probe", found, where);
  auto inner = found.empty() ? nullptr : impl_->engine->sinks().probes(found);
  return std::make_shared<ProbesWithGaps>(std::move(inner), std::move(where), reads.size());
}

std::shared_ptr<FrameSink> Simulation::attach_frame(const std::string& variable, const std::vector<std::size_t>& cells) const {
  std::vector<std::pair<std::string, std::size_t>> reads;
  reads.reserve(cells.size());
  for (std::size_t n : cells) reads.emplace_back(variable, n);
  std::vector<ProbeRead> found;
  std::vector<long> where;
  resolve_reads(impl_->s, reads, "frame", found, where);
  auto inner = found.empty() ? nullptr : impl_->engine->sinks().frame(found);
  return std::make_shared<FrameWithGaps>(std::move(inner), std::move(where));
}

void Simulation::add_stimulus(const Stimulus& st) {
  SimSetup& s = impl_->s;
  s.stimuli.add(resolve_stimulus(s, st, fmt::format("stimulus[{}]", s.stimuli.size())));
}

std::size_t Simulation::stimuli() const { return impl_->s.stimuli.size(); }

bool Simulation::set_field(const std::string& variable, const std::vector<double>& values) {
  const Grid& g = grid();
  if (values.size() != g.size())
    throw Error(fmt::format("set_field '{}': {} values given, the grid has {} cells ({})", variable,
                            values.size(), g.size(), g.str()));
  CanonicalState st = impl_->engine->save();
  bool found = false;
  if (variable == "V") {
    found = true;
    const Mask* m = &impl_->s.geo.mask;
    for (std::size_t n = 0, t = 0; n < g.size(); ++n) {
      if (!is_tissue(m, n)) continue;
      if (std::isfinite(values[n])) st.v[t] = values[n];
      ++t;
    }
  } else {
    for (std::size_t q = 0; q < impl_->s.parts.size(); ++q) {
      const Part& p = impl_->s.parts[q];
      for (int k = 0; k < p.ns; ++k) {
        if (k == p.kv || p.setup.state_names[k] != variable) continue;
        found = true;
        // The canonical parts hold every state but V, state-major over the part's cells.
        double* dst = st.parts[q].data() + std::size_t(k < p.kv ? k : k - 1) * p.n;
        for (std::size_t i = 0; i < p.n; ++i)
          if (const double v = values[p.grid_index(i)]; std::isfinite(v)) dst[i] = v;
      }
    }
  }
  if (found) impl_->engine->load(st);
  return found;
}

std::vector<std::uint8_t> Simulation::save_state() const {
  ByteWriter out;
  out.put_bytes(kMagic, 8);
  out.put<std::int64_t>(impl_->steps);
  out.put<double>(impl_->s.time.dt);
  out.put<std::uint64_t>(impl_->s.geo.grid.size());
  out.put<std::uint64_t>(impl_->s.tissue_cells);
  write_canonical(impl_->engine->save(), out);
  write_added_stimuli(impl_->s, out);
  return out.take();
}

void Simulation::load_state(const std::vector<std::uint8_t>& bytes) {
  ByteReader in(bytes, "load_state: the saved state");
  char magic[8];
  in.get_bytes(magic, 8);
  const bool v03 = std::memcmp(magic, kMagic, 6) == 0 && std::memcmp(magic + 6, "03", 2) == 0;
  if (std::memcmp(magic, kMagic, 6) == 0 &&
      (std::memcmp(magic + 6, "01", 2) == 0 || std::memcmp(magic + 6, "02", 2) == 0))
    throw Error("load_state: the state was written by an older heartwave (voltage stored in that "
                "version's own layout); start the run again without --restart");
  if (!v03 && std::memcmp(magic, kMagic, 8) != 0) throw Error("load_state: not a heartwave tissue state");
  const auto steps = in.get<std::int64_t>();
  const auto dt = in.get<double>();
  const auto cells = in.get<std::uint64_t>();
  const auto tissue = in.get<std::uint64_t>();
  if (dt != impl_->s.time.dt || cells != impl_->s.geo.grid.size() || tissue != impl_->s.tissue_cells)
    throw Error(fmt::format(
        "load_state: the saved state is of another case (dt {} ms, {} cells, {} tissue; this "
        "case: dt {} ms, {} cells, {} tissue)",
        dt, cells, tissue, impl_->s.time.dt, impl_->s.geo.grid.size(), impl_->s.tissue_cells));
  // 2^40 steps is over 30 years of simulated time at dt 1 µs; beyond 2^52 steps, time + dt
  // would round back to time and every output schedule would stall.
  if (steps < 0 || steps > (std::int64_t(1) << 40))
    throw Error(fmt::format("load_state: the saved step count {} is damaged (negative or beyond 2^40)", steps));
  std::vector<std::size_t> sizes;
  for (const Part& p : impl_->s.parts) sizes.push_back(std::size_t(p.ns - 1) * p.n);
  CanonicalState st;
  read_canonical(in, sizes, impl_->s.tissue_cells, st);
  SimSetup& s = impl_->s;
  std::vector<ResolvedStimulus> added;
  if (!v03) added = read_added_stimuli(s, in);
  if (!in.at_end()) throw Error("load_state: the saved state has trailing bytes");
  s.stimuli.keep_first(s.tcase.stimuli.size());
  for (ResolvedStimulus& r : added) s.stimuli.add(std::move(r));
  impl_->engine->load(st);
  impl_->steps = steps;
}

void Simulation::take_state(const Simulation& from) {
  SimSetup& s = impl_->s;
  const SimSetup& f = from.impl_->s;
  bool same = s.geo.grid.size() == f.geo.grid.size() && s.tissue_cells == f.tissue_cells && s.parts.size() == f.parts.size();
  for (std::size_t q = 0; same && q < s.parts.size(); ++q)
    same = s.parts[q].n == f.parts[q].n && s.parts[q].ns == f.parts[q].ns;
  if (!same) throw Error("take_state: the two runs differ in grid, tissue or models");
  std::vector<ResolvedStimulus> added;
  for (std::size_t q = f.tcase.stimuli.size(); q < f.stimuli.size(); ++q) {
    const ResolvedStimulus& r = f.stimuli.list()[q];
    added.push_back(stimulus_on_cells(s, r.given, r.cells, fmt::format("stimulus[{}]", q)));
  }
  impl_->engine->load(from.impl_->engine->save());
  s.stimuli.keep_first(s.tcase.stimuli.size());
  for (ResolvedStimulus& r : added) s.stimuli.add(std::move(r));
  impl_->steps = std::lround(from.time() / s.time.dt);
}

std::vector<Simulation::PartParameters> Simulation::part_parameters() const {
  std::vector<PartParameters> out;
  for (const Part& p : impl_->s.parts) out.push_back({p.model, p.loc, p.setup.param_names, p.params});
  return out;
}

std::vector<std::string> Simulation::state_names() const {
  std::vector<std::string> out;
  for (const Part& p : impl_->s.parts)
    for (int k = 0; k < p.ns; ++k)
      if (k != p.kv && std::find(out.begin(), out.end(), p.setup.state_names[std::size_t(k)]) == out.end())
        out.push_back(p.setup.state_names[std::size_t(k)]);
  return out;
}

double Simulation::mean_threads() const { return impl_->engine->describe().threads; }
int Simulation::thread_moves() const { return impl_->engine->describe().thread_moves; }
bool Simulation::warming_up() const { return impl_->engine->warming_up(); }
double Simulation::cg_iterations() const { return impl_->engine->describe().cg_iterations; }

std::string Simulation::describe() const {
  const SimSetup& s = impl_->s;
  const EngineInfo e = impl_->engine->describe();
  std::string d = fmt::format("grid: {}\ntissue cells: {}\nbackend: {}\n", s.geo.grid.str(),
                              s.tissue_cells, e.backend);
  d += fmt::format("storage: {}\n", e.storage);
  d += fmt::format("diffusion: {}; {} splitting, dt {} ms, {} ODE sub-step(s), integrator {}\n",
                   e.kernels, s.time.splitting == Splitting::godunov ? "Godunov" : "Strang",
                   s.time.dt, s.time.ode_substeps, cell::integrator_name(s.integrator));
  if (e.cg_iterations > 0) d += fmt::format("CG: {:.1f} iterations per solve on the mean so far\n", e.cg_iterations);
  if (!s.integrator_note.empty()) d += s.integrator_note + "\n";
  if (!s.geo.long_axis_note.empty()) d += s.geo.long_axis_note + "\n";
  for (const std::string& n : s.state_notes) d += n + "\n";
  for (std::size_t q = 0; q < s.parts.size(); ++q) {
    const Part& p = s.parts[q];
    d += fmt::format("model {}: {} cells, {} states, kernel {}{}\n", p.model, p.n, p.ns,
                     e.part_kernels[q], p.per_cell ? ", per-cell parameters" : "");
  }
  return d;
}

// The set-up's σ is dropped once the engine has its own copy; a case with electrodes kept
// the operator's set-up for the pseudo-ECG, any other builds it again from the case.
DiffusionSetup Simulation::diffusion() const {
  if (impl_->ecg_diffusion) {
    DiffusionSetup d = std::move(*impl_->ecg_diffusion);
    impl_->ecg_diffusion.reset();
    return d;
  }
  return make_case_diffusion(impl_->s.tcase);
}

double stable_dt_limit(const TissueCase& c) { return sim_stable_dt(c); }

}  // namespace hw::tissue
