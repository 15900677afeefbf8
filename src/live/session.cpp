#include "live/session.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "live/flat_json.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/maps.hpp"
#include "outputs/probes.hpp"
#include "tissue/sinks.hpp"

namespace hw::live {

using namespace hw::tissue;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kMaxPlotSamples = 4096;  // probe/ECG samples kept for the next status
constexpr std::size_t kMaxSaves = 16;
// The shares of the stepping thread's time that frames and the pseudo-ECG may take (so that
// a watched run steps within 5 % of an unwatched one, docs/live.md).
constexpr double kFrameShare = 0.015, kEcgShare = 0.005;

const char* kSigma = "conductivity.scale";
const char* kDt = "time.dt";

// "model[q].scale.NAME" → (q, NAME).
std::optional<std::pair<std::size_t, std::string>> model_parameter(const std::string& name) {
  const std::string head = "model[";
  if (name.rfind(head, 0) != 0) return std::nullopt;
  const std::size_t close = name.find("].scale.");
  if (close == std::string::npos) return std::nullopt;
  return std::make_pair(std::size_t(std::stoul(name.substr(head.size(), close - head.size()))), name.substr(close + 8));
}

// The case with the page's numbers: σ scaled, dt, model parameters scaled in their region.
TissueCase with_settings(const TissueCase& base, const Settings& s) {
  TissueCase c = base;
  for (const auto& [name, value] : s) {
    if (name == kSigma) {
      c.conductivity.sigma_l *= value;
      c.conductivity.sigma_t *= value;
      if (c.conductivity.sigma_n) *c.conductivity.sigma_n *= value;
    } else if (name == kDt) {
      c.time.dt = value;
    } else if (const auto mp = model_parameter(name)) {
      auto& scales = c.models.at(mp->first).scales;
      const auto it = scales.find(mp->second);
      scales[mp->second] = (it == scales.end() ? 1.0 : it->second) * value;
    }
  }
  return c;
}

std::size_t cell_at(const Grid& g, const std::array<double, 3>& x) {
  int ijk[3];
  for (int d = 0; d < 3; ++d)
    ijk[d] = std::clamp(int(std::floor(x[std::size_t(d)] / g.h[std::size_t(d)])), 0, g.n[std::size_t(d)] - 1);
  return g.index(ijk[0], ijk[1], ijk[2]);
}

std::string numbers_json(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::isfinite(v[i]) ? fmt::format("{:.6g}", v[i]) : std::string("null");
  }
  return s + "]";
}

std::string names_json(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += json_quote(v[i]);
  }
  return s + "]";
}

}  // namespace

struct LiveRun::Saved {
  std::vector<std::uint8_t> state;
  Settings settings;
  ActivationMaps act;
  bool has_act = false;
};

LiveRun::LiveRun(const TissueCase& c, const LiveOptions& o, Hub* hub) : base_(c), opt_(o), hub_(hub) {
  settings_[kSigma] = 1.0;
  settings_[kDt] = c.time.dt;
  build(settings_);  // the simulation, its control space, the view's layout and sinks
  if (!opt_.start_state.empty()) {
    sim_->load_state(opt_.start_state);
    next_probe_t_ = sim_->time();
  }
  paused_ = o.start_paused;
  if (!opt_.log_path.empty()) {
    const std::filesystem::path p(opt_.log_path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    log_.open(opt_.log_path, std::ios::out | std::ios::trunc);
    if (!log_) throw Error(fmt::format("live: cannot write the action log {}", opt_.log_path));
    log_line(fmt::format("{{\"event\":\"start\",\"case\":{},\"step\":{},\"t\":{},\"dt\":{},\"grid\":{}}}",
                         json_quote(opt_.case_label), sim_->steps_done(), sim_->time(), sim_->dt(),
                         json_quote(sim_->grid().str())));
  }
  rate_wall_ = Clock::now();
  if (hub_) hub_->set_hello(hello_json());
}

LiveRun::~LiveRun() = default;

void LiveRun::build(const Settings& s) {
  const TissueCase c = with_settings(base_, s);
  if (c.time.diffusion == DiffusionScheme::forward_euler) {
    const double limit = stable_dt_limit(c);
    if (c.time.dt > limit)
      throw Error(fmt::format("dt {:g} ms is above the explicit diffusion's limit {:g} ms at this conductivity; "
                              "lower dt or the conductivity scale",
                              c.time.dt, limit));
  }
  auto sim = std::make_unique<Simulation>(c, opt_.sim);
  ActivationMaps maps;
  bool had = false;
  if (sim_) {
    sim->take_state(*sim_);
    if (act_) {
      act_->read(maps);
      had = true;
    }
  }
  sim_ = std::move(sim);
  space_ = ControlSpace{};
  const Grid& g = sim_->grid();
  space_.cell = std::numeric_limits<double>::infinity();
  for (int d = 0; d < 3; ++d) {
    space_.extent[std::size_t(d)] = g.n[std::size_t(d)] * g.h[std::size_t(d)];
    if (g.n[std::size_t(d)] > 1) space_.cell = std::min(space_.cell, g.h[std::size_t(d)]);
  }
  // The default click: the case's own stimulus, else one that lifts V by about its range in
  // 2 ms (50 mV/ms, or 0.5/ms for a dimensionless model); at most 20 times that.
  const VariableUnits vu = sim_->variable_units("V");
  const double rate = vu.units == "mV" ? 50.0 : 0.5;
  space_.amplitude = c.stimuli.empty() ? rate * c.conductivity.chi * c.conductivity.cm : std::fabs(c.stimuli[0].amplitude);
  space_.amplitude_max = 20 * space_.amplitude;
  const double largest = std::max({space_.extent[0], space_.extent[1], space_.extent[2]});
  space_.radius = std::max(2.0, 3 * space_.cell);
  space_.radius_max = std::max(space_.radius, largest / 4);
  space_.duration = 2;
  space_.parameters.push_back({kSigma, "conductivity ×", "×", s.at(kSigma), 0.1, 10});
  const double limit = c.time.diffusion == DiffusionScheme::forward_euler ? stable_dt_limit(c) : 10 * base_.time.dt;
  space_.parameters.push_back({kDt, "dt", "ms", s.at(kDt), base_.time.dt / 20, limit});
  space_.variables = {"V"};
  for (const auto& pp : sim_->part_parameters()) {
    // The part's model region in the case: the one declared where the part says.
    std::optional<std::size_t> q;
    for (std::size_t r = 0; r < c.models.size(); ++r)
      if (c.models[r].loc.line == pp.loc.line && c.models[r].loc.file == pp.loc.file) q = r;
    if (!q && c.models.size() == 1) q = 0;
    if (!q) continue;
    for (const std::string& n : pp.names) {
      const std::string name = fmt::format("model[{}].scale.{}", *q, n);
      if (std::any_of(space_.parameters.begin(), space_.parameters.end(), [&](const Parameter& p) { return p.name == name; }))
        continue;
      const auto it = s.find(name);
      space_.parameters.push_back({name, fmt::format("{} × ({})", n, pp.model), "×", it == s.end() ? 1.0 : it->second, 0, 10});
    }
  }
  for (const std::string& st : sim_->state_names()) space_.variables.push_back(st);
  if (std::find(space_.variables.begin(), space_.variables.end(), variable_) == space_.variables.end())
    variable_ = std::string("V");  // not = "V": GCC 12's -Wrestrict false positive
  if (layout_.cells.empty()) layout_ = make_layout(g, centre_);
  attach_sinks(had ? &maps.act : nullptr);
}

void LiveRun::attach_sinks(const std::vector<float>* act) {
  const Grid& g = sim_->grid();
  const TissueCase& c = sim_->tissue_case();
  frame_ = sim_->attach_frame(variable_, layout_.cells);
  // The case's probes, or one at the centre; the case's electrodes, or one beside the tissue.
  // Each at the tissue cell nearest its point, as a run's probes are (the centre of a hollow
  // heart is no tissue).
  probe_names_.clear();
  std::vector<std::pair<std::string, std::size_t>> reads;
  const Mask* mask = &sim_->mask();
  for (const Probe& p : c.output.probes) {
    probe_names_.push_back(p.name);
    reads.emplace_back("V", io::nearest_tissue_cell(g, mask, p.position, "probe '" + p.name + "'"));
  }
  if (reads.empty()) {
    probe_names_.push_back("centre");
    reads.emplace_back("V", io::nearest_tissue_cell(g, mask, {space_.extent[0] / 2, space_.extent[1] / 2,
                                                              space_.extent[2] / 2}, "the live view's probe"));
  }
  probes_ = sim_->attach_probes(reads);
  std::vector<io::ElectrodePoint> el;
  for (const Electrode& e : c.output.electrodes) el.push_back({e.name, e.position});
  if (el.empty()) el.push_back({"beside", {1.1 * space_.extent[0], space_.extent[1] / 2, space_.extent[2] / 2}});
  electrode_names_.clear();
  for (const auto& e : el) electrode_names_.push_back(e.name);
  ecg_ = std::make_unique<io::PseudoEcg>(g, el);
  // The first sample builds the host engines' operator (about 0.4 s for the rabbit on two
  // cores): made here, with the simulation, so that it is set-up time and not a stall of
  // the stepping the first time someone watches.
  if (hub_) sample_ecg();
  // The activation map follows V after every step: shown when the case asks for one (as its
  // run would make it), so that watching costs the stepping no more than the run does.
  act_.reset();
  if (c.output.activation_map) {
    ActivationMaps m;
    m.threshold = float(c.output.activation_threshold);
    m.with_apd = false;
    m.act = act ? *act : std::vector<float>(g.size(), std::numeric_limits<float>::quiet_NaN());
    act_ = sim_->attach_activation(m);
  }
  next_probe_t_ = sim_->time();
}

std::string LiveRun::hello_json() const {
  const Grid& g = sim_->grid();
  const VariableUnits vu = sim_->variable_units(variable_);
  std::string params = "[";
  for (std::size_t i = 0; i < space_.parameters.size(); ++i) {
    const Parameter& p = space_.parameters[i];
    params += fmt::format("{}{{\"name\":{},\"label\":{},\"unit\":{},\"value\":{},\"min\":{},\"max\":{}}}", i ? "," : "",
                          json_quote(p.name), json_quote(p.label), json_quote(p.unit), p.value, p.min, p.max);
  }
  params += "]";
  return fmt::format(
      "{{\"type\":\"hello\",\"case\":{},\"n\":[{},{},{}],\"h\":[{},{},{}],\"extent\":[{},{},{}],\"dt\":{},\"t_end\":{},"
      "\"variable\":{},\"unit\":{},\"variables\":{},\"panels\":{},\"parameters\":{},"
      "\"stimulus\":{{\"amplitude\":{},\"amplitude_max\":{},\"radius\":{},\"radius_max\":{},\"duration\":{},"
      "\"duration_max\":{},\"unit\":\"µA/mm³\"}},\"probes\":{},\"electrodes\":{},\"fps\":{},\"activation\":{}}}",
      json_quote(base_.name), g.n[0], g.n[1], g.n[2], g.h[0], g.h[1], g.h[2], space_.extent[0], space_.extent[1],
      space_.extent[2], sim_->dt(), base_.time.t_end, json_quote(variable_), json_quote(vu.units), names_json(space_.variables),
      layout_json(layout_), params, space_.amplitude, space_.amplitude_max, space_.radius, space_.radius_max,
      space_.duration, space_.duration_max, names_json(probe_names_), names_json(electrode_names_), opt_.fps,
      act_ ? "true" : "false");
}

std::string LiveRun::status_json() {
  std::string probes = "[", ecg = "[";
  // Appended piece by piece: `(i ? "," : "") + a_string` makes GCC 12 warn (-Wrestrict, a
  // false positive in its inlined string insert).
  for (std::size_t i = 0; i < probe_samples_.size(); ++i) {
    if (i) probes += ',';
    probes += numbers_json(probe_samples_[i]);
  }
  for (std::size_t i = 0; i < ecg_samples_.size(); ++i) {
    if (i) ecg += ',';
    ecg += numbers_json(ecg_samples_[i]);
  }
  probe_samples_.clear();
  ecg_samples_.clear();
  return fmt::format(
      "{{\"type\":\"status\",\"t\":{},\"step\":{},\"dt\":{},\"steps_per_s\":{:.1f},\"realtime\":{:.4g},\"paused\":{},"
      "\"speed\":{},\"frames\":{},\"stimuli\":{},\"failure\":{},\"probes\":{}],\"ecg\":{}]}}",
      sim_->time(), sim_->steps_done(), sim_->dt(), steps_per_s_, realtime_, paused_ ? "true" : "false", speed_, frames_,
      sim_->stimuli(), json_quote(failure_), probes, ecg);
}

std::vector<float> LiveRun::frame_values() const {
  std::vector<float> v;
  frame_->read(v);
  return v;
}

std::string LiveRun::make_frame(bool with_activation) {
  std::vector<float> v;
  frame_->read(v);
  for (const float x : v) {
    if (!std::isfinite(x)) continue;
    if (!have_range_) {
      lo_ = hi_ = x;
      have_range_ = true;
    }
    lo_ = std::min(lo_, x);
    hi_ = std::max(hi_, x);
  }
  std::vector<float> act;
  if (with_activation && act_) {
    ActivationMaps m;
    act_->read(m);
    act.reserve(layout_.cells.size());
    for (const std::size_t n : layout_.cells) act.push_back(m.act[n]);
  }
  const VariableUnits vu = sim_->variable_units(variable_);
  const std::string header = fmt::format(
      "{{\"t\":{},\"step\":{},\"variable\":{},\"unit\":{},\"lo\":{},\"hi\":{},\"act\":{},\"samples\":{}}}", sim_->time(),
      sim_->steps_done(), json_quote(vu.name), json_quote(vu.units), have_range_ ? double(lo_) : 0.0,
      have_range_ ? double(hi_) : 1.0, act.empty() ? "false" : "true", v.size());
  ++frames_;
  return encode_frame(header, v, act);
}

void LiveRun::log_line(const std::string& json) {
  if (!log_.is_open()) return;
  log_ << json << '\n';
  log_.flush();  // a run stopped hard still leaves its schedule
}

void LiveRun::end_log() {
  log_line(fmt::format("{{\"event\":\"end\",\"step\":{},\"t\":{}}}", sim_->steps_done(), sim_->time()));
}

std::string LiveRun::refuse(const std::string& text, const std::string& why, const std::string& id) {
  log_line(fmt::format("{{\"event\":\"refused\",\"step\":{},\"message\":{},\"text\":{}}}", sim_->steps_done(),
                       json_quote(why), json_quote(text.substr(0, 200))));
  if (hub_)
    hub_->reply(fmt::format("{{\"type\":\"reply\",\"id\":{},\"ok\":false,\"message\":{}}}", json_quote(id), json_quote(why)));
  return why;
}

std::string LiveRun::submit(const std::string& text) {
  std::string why;
  const std::optional<Control> c = parse_control(text, space_, &why);
  if (!c) {
    // The id, when one can be read, so the page knows which request failed.
    std::string id;
    if (const auto o = parse_flat_json(text, nullptr))
      if (const auto it = o->find("id"); it != o->end() && it->second.kind == FlatValue::Kind::string) id = it->second.text.substr(0, 32);
    return refuse(text, why, id);
  }
  if (c->op == Control::Op::probe) {
    // A read of the engine's state at a point: nothing changes, nothing is logged.
    const double v = sim_->value_at(variable_, cell_at(sim_->grid(), c->at));
    const std::string r = fmt::format("{{\"type\":\"reply\",\"id\":{},\"ok\":true,\"op\":\"probe\",\"variable\":{},\"value\":{},\"t\":{}}}",
                                      json_quote(c->id), json_quote(variable_), std::isfinite(v) ? fmt::format("{}", v) : "null", sim_->time());
    if (hub_) hub_->reply(r);
    last_reply_ = r;
    return "";
  }
  // The step at which it takes effect, before it does (a dt change or a restore moves the
  // step count): the replay steps to this step, then applies it.
  const long step = sim_->steps_done();
  const double t = sim_->time();
  try {
    apply(*c);
  } catch (const Error& e) {
    return refuse(text, fmt::format("{} refused: {}", op_name(c->op), e.what()), c->id);
  }
  const std::string js = control_json(*c);
  log_line(fmt::format("{{\"step\":{},\"t\":{},{}", step, t, js.substr(1)));
  if (hub_) hub_->reply(fmt::format("{{\"type\":\"reply\",\"id\":{},\"ok\":true,\"op\":\"{}\"}}", json_quote(c->id), op_name(c->op)));
  return "";
}

void LiveRun::apply(const Control& c) {
  switch (c.op) {
    case Control::Op::stimulate: {
      Stimulus st;
      st.where.kind = Region::Kind::sphere;
      st.where.centre = c.at;
      st.where.radius = c.radius;
      st.where.loc = SourceLoc{"live view", 0, 0};
      st.amplitude = c.amplitude;
      st.start = sim_->time();
      st.duration = c.duration;
      st.period = 0;
      st.count = 1;
      st.loc = st.where.loc;
      sim_->add_stimulus(st);
      break;
    }
    case Control::Op::probe: break;
    case Control::Op::pause: paused_ = true; break;
    case Control::Op::resume:
      paused_ = false;
      single_steps_ = 0;
      break;
    case Control::Op::step: single_steps_ += c.count; break;
    case Control::Op::speed: speed_ = c.value; break;
    case Control::Op::set: {
      Settings s = settings_;
      s[c.name] = c.value;
      build(s);
      settings_ = s;
      if (hub_) hub_->set_hello(hello_json());
      break;
    }
    case Control::Op::view: {
      if (sim_->grid().n[2] > 1) {
        centre_ = {-1, -1, -1};
        if (c.position >= 0)
          centre_[std::size_t(c.axis)] = std::min(int(c.position / sim_->grid().h[std::size_t(c.axis)]), sim_->grid().n[std::size_t(c.axis)] - 1);
      }
      variable_ = c.name;
      layout_ = make_layout(sim_->grid(), centre_);
      frame_ = sim_->attach_frame(variable_, layout_.cells);
      have_range_ = false;
      if (hub_) hub_->set_hello(hello_json());
      break;
    }
    case Control::Op::save: {
      if (saves_.size() >= kMaxSaves && !saves_.count(c.name))
        throw Error(fmt::format("at most {} checkpoints per live run; restore or reuse a name", kMaxSaves));
      auto sv = std::make_unique<Saved>();
      sv->state = sim_->save_state();
      sv->settings = settings_;
      if (act_) {
        act_->read(sv->act);
        sv->has_act = true;
      }
      // Also a file beside the log, from which `heartwave run --restart` continues.
      if (!opt_.log_path.empty()) {
        const auto path = std::filesystem::path(opt_.log_path).parent_path() / fmt::format("live-{}.hwck", c.name);
        io::write_checkpoint(path.string(), sv->state, io::CheckpointMeta{0, sim_->time(), sim_->steps_done()});
      }
      saves_[c.name] = std::move(sv);
      break;
    }
    case Control::Op::restore: {
      const auto it = saves_.find(c.name);
      if (it == saves_.end()) {
        std::string names;
        for (const auto& [n, _] : saves_) {
          if (!names.empty()) names += ", ";
          names += n;
        }
        throw Error(fmt::format("no checkpoint '{}' saved in this run (saved: {})", c.name, names.empty() ? "none" : names));
      }
      const Saved& sv = *it->second;
      if (sv.settings != settings_) {
        build(sv.settings);
        settings_ = sv.settings;
        if (hub_) hub_->set_hello(hello_json());
      }
      sim_->load_state(sv.state);
      attach_sinks(sv.has_act ? &sv.act.act : nullptr);
      failure_.clear();
      break;
    }
  }
}

void LiveRun::sample_probes() {
  std::vector<double> v;
  probes_->read(v);
  v.insert(v.begin(), sim_->time());
  probe_samples_.push_back(std::move(v));
  if (probe_samples_.size() > kMaxPlotSamples) probe_samples_.erase(probe_samples_.begin());
  const double every = std::max(sim_->tissue_case().output.probe_interval, sim_->dt());
  while (next_probe_t_ <= sim_->time() + 1e-9) next_probe_t_ += every;
}

bool LiveRun::run_to_step(long n) {
  if (sim_->steps_done() >= n) return true;
  try {
    sim_->run_until(double(n) * sim_->dt());
  } catch (const NumericalError& e) {
    failure_ = e.what();
    return false;
  }
  return true;
}

void LiveRun::publish(bool frame_now) {
  const auto now = Clock::now();
  if (frame_now) {
    // The activation map about twice a second.
    const auto t0 = Clock::now();
    hub_->publish_frame(std::make_shared<const std::string>(make_frame(frames_ % 15 == 0)));
    frame_cost_ = 0.8 * frame_cost_ + 0.2 * std::chrono::duration<double>(Clock::now() - t0).count();
  }
  // The pseudo-ECG applies the operator to the whole V on the host engines: sampled only as
  // often as keeps it within its share of the stepping thread.
  if (now >= next_ecg_) {
    const double cost = sample_ecg();
    next_ecg_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(2.0, cost / kEcgShare)));
  }
  hub_->publish_status(status_json());
}

double LiveRun::sample_ecg() {
  const auto t0 = Clock::now();
  std::vector<double> phi = ecg_->compute(*sim_);
  phi.insert(phi.begin(), sim_->time());
  ecg_samples_.push_back(std::move(phi));
  if (ecg_samples_.size() > kMaxPlotSamples) ecg_samples_.erase(ecg_samples_.begin());
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void LiveRun::serve(const std::function<bool()>& stop) {
  if (!hub_) throw Error("live: serve() needs a hub");
  long batch = 16;
  bool dirty = true, ended = false;
  auto next_frame = Clock::now();
  const auto frame_every = std::chrono::duration<double>(1.0 / std::max(1.0, opt_.fps));
  // The speed's anchor: simulated time and wall time when it was last set or resumed.
  double anchor_t = sim_->time();
  auto anchor_wall = Clock::now();
  double last_speed = speed_;
  bool was_paused = paused_;
  while (!stop()) {
    // At a set speed, a run ahead of its wall clock waits (for controls, meanwhile).
    double ahead = 0;
    if (speed_ > 0 && !paused_)
      ahead = (sim_->time() - anchor_t) / speed_ - std::chrono::duration<double>(Clock::now() - anchor_wall).count();
    const bool idle = (paused_ && single_steps_ == 0) || !failure_.empty();
    const auto wait = idle ? std::chrono::milliseconds(30)
                           : std::chrono::milliseconds(ahead > 0 ? std::min(30L, long(ahead * 1000) + 1) : 0);
    for (const std::string& text : hub_->take_controls(wait)) {
      const long before = sim_->steps_done();
      submit(text);
      dirty = true;
      if (sim_->steps_done() != before) next_probe_t_ = sim_->time();
    }
    if (speed_ != last_speed || paused_ != was_paused) {
      anchor_t = sim_->time();
      anchor_wall = Clock::now();
      last_speed = speed_;
      was_paused = paused_;
      ahead = 0;
    }
    const bool can_step = (!paused_ || single_steps_ > 0) && failure_.empty() && (paused_ || ahead <= 0);
    if (can_step) {
      long n = paused_ ? std::min(single_steps_, batch) : batch;
      const long to_probe = std::max(1L, long(std::ceil((next_probe_t_ - sim_->time()) / sim_->dt() - 1e-6)));
      n = std::min(n, to_probe);
      const long before = sim_->steps_done();
      const auto w0 = Clock::now();
      try {
        sim_->run_until(sim_->time() + (double(n) - 0.5) * sim_->dt());
      } catch (const NumericalError& e) {
        failure_ = fmt::format("{} The run is paused at the last good state (t = {:g} ms): restore a checkpoint, or "
                               "change a parameter and resume.",
                               e.what(), sim_->time());
        paused_ = true;
        single_steps_ = 0;
        log_line(fmt::format("{{\"event\":\"failed\",\"step\":{},\"message\":{}}}", sim_->steps_done(), json_quote(e.what())));
        hub_->reply(fmt::format("{{\"type\":\"reply\",\"id\":\"\",\"ok\":false,\"message\":{}}}", json_quote(failure_)));
      }
      const long done = sim_->steps_done() - before;
      if (paused_) single_steps_ = std::max(0L, single_steps_ - done);
      const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
      ++profile_.step_calls;
      profile_.steps += done;
      profile_.step_s += wall;
      if (wall < 0.004 && batch < 4096) batch *= 2;
      if (wall > 0.016 && batch > 1) batch /= 2;
      if (sim_->time() >= next_probe_t_ - 1e-6 * sim_->dt()) sample_probes();
      dirty = true;
      if (!ended && sim_->time() >= base_.time.t_end - 1e-6 * sim_->dt()) {
        ended = true;
        paused_ = true;
        hub_->reply(fmt::format("{{\"type\":\"reply\",\"id\":\"\",\"ok\":true,\"op\":\"pause\",\"message\":{}}}",
                                json_quote(fmt::format("reached the case's t_end = {:g} ms: paused (resume goes on)", base_.time.t_end))));
      }
    }
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - rate_wall_).count();
    if (since >= 0.5) {
      const long steps = sim_->steps_done();
      steps_per_s_ = double(steps - rate_steps_) / since;
      realtime_ = steps_per_s_ * sim_->dt() / 1000.0;
      rate_steps_ = steps;
      rate_wall_ = now;
    }
    if (hub_->watchers() > 0 && now >= next_frame) {
      const auto f0 = Clock::now();
      publish(dirty);
      ++profile_.frames;
      profile_.frame_s += std::chrono::duration<double>(Clock::now() - f0).count();
      dirty = false;
      // At most fps frames a second, and fewer where a frame costs more than its share of
      // the stepping thread (a large heart on the cpu): the view slows, not the run.
      const double every = std::max(frame_every.count(), frame_cost_ / kFrameShare);
      next_frame = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(every));
    }
  }
  end_log();
}

std::unique_ptr<LiveRun> replay(const TissueCase& c, const LiveOptions& o, const std::string& log_path, std::size_t* applied) {
  std::ifstream in(log_path);
  if (!in) throw InputError(SourceLoc{log_path, 0, 0}, "cannot read the action log");
  LiveOptions headless = o;
  headless.log_path.clear();
  auto run = std::make_unique<LiveRun>(c, headless, nullptr);
  std::string line;
  int no = 0;
  long end = -1;
  std::size_t count = 0;
  while (std::getline(in, line)) {
    ++no;
    if (line.empty()) continue;
    std::string error;
    std::optional<FlatObject> obj = parse_flat_json(line, &error);
    if (!obj) throw InputError(SourceLoc{log_path, no, 0}, error);
    const auto step = obj->find("step");
    if (step == obj->end() || step->second.kind != FlatValue::Kind::number || !(step->second.number >= 0))
      throw InputError(SourceLoc{log_path, no, 0}, "a line of the action log without its \"step\"");
    const long at = long(step->second.number);
    if (const auto ev = obj->find("event"); ev != obj->end()) {
      if (ev->second.text == "start" && at != 0)
        throw InputError(SourceLoc{log_path, no, 0}, "the live run began at a restart; replay continues only from step 0");
      if (ev->second.text == "end") end = at;
      continue;
    }
    if (at < run->simulation().steps_done())
      throw InputError(SourceLoc{log_path, no, 0}, fmt::format("step {} is before the step the replay has reached ({}): the log is out of order", at, run->simulation().steps_done()));
    if (!run->run_to_step(at) && run->simulation().steps_done() != at)
      throw InputError(SourceLoc{log_path, no, 0}, fmt::format("the replay blew up at t = {:g} ms before this line's step {}; "
                                                               "is this the log of this case?", run->simulation().time(), at));
    obj->erase("step");
    obj->erase("t");
    const std::string why = run->submit(flat_json_text(*obj));
    if (!why.empty()) throw InputError(SourceLoc{log_path, no, 0}, "the control was refused on replay: " + why);
    ++count;
  }
  if (end >= 0) run->run_to_step(end);
  if (applied) *applied = count;
  return run;
}

}  // namespace hw::live
