// Scheduling, naming and restart state of a run's outputs; see output_manager.hpp.
#include "outputs/output_manager.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "tissue/sinks.hpp"
#include "core/error.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/run_pictures.hpp"
#include "tissue/engine.hpp"
#include "tissue/reaction.hpp"

namespace hw::io {
namespace {

namespace fs = std::filesystem;
using tissue::Field;

// Tags the outputs' part of a checkpoint; a change of its layout needs a new tag.
// (2: the traces' headers carry units; a saved text of 1 has the old header.)
constexpr std::string_view state_tag = "heartwave-outputs-2";

std::string join(const std::string& dir, const std::string& leaf) { return (fs::path(dir) / leaf).string(); }

long index_at(double t, double interval) { return std::lround(t / interval); }

// The first output time ≥ t (inclusive: t itself counts), else the first one after t.
double next_after(double t, double interval, bool inclusive) {
  double next = std::floor(t / interval + 1e-9) * interval;
  if (next < t - 1e-9 * interval || !inclusive) next += interval;
  if (!inclusive && next <= t + 1e-9 * interval) next += interval;
  return next;
}

// What the accumulators depend on: the [output] table except where files go, the movie
// and the checkpoint interval. Equal hashes = the saved state continues these outputs.
std::uint64_t spec_hash(const tissue::OutputSpec& o) {
  std::string s = fmt::format("{:.17g}|{}|{:.17g}|{}|{:.17g}|{}|{}|{}|{:.17g}|{}|{}|{:.17g}|",
                              o.field_interval, int(o.format), o.probe_interval, o.activation_map,
                              o.activation_threshold, o.apd_map, o.conduction_velocity,
                              o.png_variable, o.png_interval, o.png_slice_axis, o.variables.size(),
                              o.png_slice_position);
  for (const auto& v : o.variables) s += v + "|";
  for (const auto& p : o.probes)
    s += fmt::format("p{}@{:.17g},{:.17g},{:.17g}|", p.name, p.position[0], p.position[1], p.position[2]);
  for (const auto& e : o.electrodes)
    s += fmt::format("e{}@{:.17g},{:.17g},{:.17g}|", e.name, e.position[0], e.position[1], e.position[2]);
  return fnv1a64(s);
}

}  // namespace

OutputManager::OutputManager(const tissue::TissueCase& c, const tissue::Simulation& sim,
                             const std::vector<unsigned char>* resume_state)
    : o_(c.output), sim_(sim), dir_(c.output.directory.empty() ? "." : c.output.directory),
      cv_(std::numeric_limits<double>::quiet_NaN()) {
  const tissue::Grid& g = sim.grid();
  mask_ = sim.mask().empty() ? nullptr : &sim.mask();
  writer_ = std::make_unique<WriteQueue>();
  // Every requested variable must exist somewhere before the run starts.
  Field<float> probe_field;
  for (const auto& v : o_.variables)
    if (!sim.field(v, probe_field))
      throw InputError(o_.loc, "output.fields: no model in this case has a state '" + v + "'");
  if (o_.png_interval > 0 && !sim.field(o_.png_variable, probe_field))
    throw InputError(o_.loc, "output.png_variable: no model in this case has a state '" + o_.png_variable + "'");
  fs::create_directories(dir_);
  slice_.axis = g.n[2] == 1 ? 2 : o_.png_slice_axis;
  slice_.position = o_.png_slice_position;

  if (resume_state == nullptr) {
    open(false, nullptr, nullptr);
    return;
  }
  // A restart: continue the accumulators when they belong to these outputs.
  const auto bad = [&](const std::string& why) {
    throw InputError(o_.loc, "checkpoint: the outputs' state is unusable: " + why);
  };
  try {
    StateReader r(*resume_state);
    if (resume_state->empty() || r.get_string() != state_tag || r.get<std::uint64_t>() != spec_hash(o_)) {
      notes_.push_back(fmt::format("restart: [output] differs from the checkpoint's; probes, ECG and maps start "
                                   "afresh at t = {} ms (files *_from_{})",
                                   sim.time(), sim.steps_done()));
      open(false, nullptr, nullptr);
      resumed_ = false;
      // A fresh start at the restart time, as in a new run (begin() samples it).
      due_.next_field = next_after(sim.time(), o_.field_interval > 0 ? o_.field_interval : 1, false);
      due_.next_png = next_after(sim.time(), o_.png_interval > 0 ? o_.png_interval : 1, false);
      if (png_) png_ = std::make_unique<PngSeriesWriter>(dir_, o_.png_variable, g, mask_, slice_, SnapshotOptions{},
                                                         int(index_at(sim.time(), o_.png_interval)) + 1);
      return;
    }
    resumed_ = true;
    due_.next_field = r.get<double>();
    due_.next_png = r.get<double>();
    due_.next_probe = r.get<double>();
    due_.next_ecg = r.get<double>();
    // Each was the next output time after the checkpoint's: within one interval of now. A
    // time far off (or not finite) would make sample() step through intervals for ever.
    // (Only the outputs this case writes: the others' times stay at the run's start.)
    const auto check_due = [&](bool active, double next, double interval, const char* what) {
      const double t = sim.time();
      if (active && (!std::isfinite(next) || std::fabs(next - t) > interval + sim.dt()))
        bad(fmt::format("its next {} time {} ms is not within one interval ({} ms) of the checkpoint's {} ms",
                        what, next, interval, t));
    };
    check_due(o_.field_interval > 0, due_.next_field, o_.field_interval, "field");
    check_due(o_.png_interval > 0, due_.next_png, o_.png_interval, "picture");
    check_due(!o_.probes.empty(), due_.next_probe, o_.probe_interval, "probe");
    check_due(!o_.electrodes.empty(), due_.next_ecg, o_.probe_interval, "ECG");
    const std::string probes_text = r.get_string(), ecg_text = r.get_string();
    const int frames = r.get<std::int32_t>();
    if (r.get<std::uint8_t>()) {
      const double lo = r.get<double>();
      png_range_ = std::pair{lo, r.get<double>()};
    }
    const auto n_pvd = r.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n_pvd; ++i) {
      const double t = r.get<double>();
      frames_.emplace_back(t, r.get_string());
    }
    open(true, &probes_text, &ecg_text);
    if (png_) png_ = std::make_unique<PngSeriesWriter>(dir_, o_.png_variable, g, mask_, slice_, SnapshotOptions{}, frames);
    if (act_) act_->load(r);
    if (!r.at_end()) bad("bytes left after the last output");
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    bad(e.what());
  }
  notes_.push_back(fmt::format("restart: outputs continue from t = {} ms (maps, traces and frames of the whole run)",
                               sim.time()));
}

OutputManager::~OutputManager() {
  try {
    if (writer_) writer_->flush();
  } catch (const std::exception&) {
    // An error of the last frames is the run's to report (finish()); a manager dropped
    // after another error has nothing better to do with it.
  }
}

// Opens the writers. continuing: a resumed run (names of a new run, texts restored);
// otherwise a run restarted with other outputs gets *_from_<step> names.
void OutputManager::open(bool continuing, const std::string* probes_text, const std::string* ecg_text) {
  const tissue::Grid& g = sim_.grid();
  const bool restarted = sim_.steps_done() > 0 && !continuing;
  const std::string from = restarted ? fmt::format("_from_{}", sim_.steps_done()) : "";
  if (o_.field_interval > 0) {
    if (o_.format == tissue::OutputSpec::Format::hdf5) {
      open_hdf5(continuing);
    } else {
      pvd_ = std::make_unique<PvdWriter>(join(dir_, "fields.pvd"));
      if (continuing) {
        for (const auto& [t, leaf] : frames_) pvd_->add(t, join(dir_, leaf));
      } else if (restarted) {
        // Other outputs than the checkpoint's: list the earlier frames that are on disk.
        const long k0 = index_at(sim_.time(), o_.field_interval);
        for (long k = 0; k < k0; ++k)
          if (fs::exists(vti_path(k))) {
            pvd_->add(double(k) * o_.field_interval, vti_path(k));
            frames_.emplace_back(double(k) * o_.field_interval, fs::path(vti_path(k)).filename().string());
          }
      }
    }
    if (!continuing) due_.next_field = sim_.time();
  }
  if (o_.png_interval > 0) {
    png_ = std::make_unique<PngSeriesWriter>(dir_, o_.png_variable, g, mask_, slice_, SnapshotOptions{});
    if (!continuing) due_.next_png = sim_.time();
  }
  if (!o_.probes.empty()) {
    std::vector<ProbePoint> pts;
    for (const auto& p : o_.probes) pts.push_back({p.name, p.position});
    probes_ = std::make_unique<ProbeWriter>(join(dir_, "probes" + from + ".csv"), g, mask_, pts, o_.variables,
                                            o_.loc, probes_text ? *probes_text : std::string(), units_of(o_.variables));
  }
  if (!continuing) due_.next_probe = due_.next_ecg = sim_.time();
  if (o_.activation_map || o_.apd_map || o_.conduction_velocity)
    act_ = std::make_unique<ActivationTracker>(g, mask_, o_.activation_threshold, o_.apd_map);
  // A resumed run continues V_mesh.igb after its frames up to the checkpoint (the frames
  // are in the file, not in the checkpoint); the maps on the mesh come from the maps,
  // which a restart continues.
  if (o_.on_mesh && sim_.mesh())
    mesh_out_ = std::make_unique<MeshOutputs>(dir_, sim_.mesh(), g, mask_,
                                              continuing ? sim_.time() : std::numeric_limits<double>::quiet_NaN());
  if (!o_.electrodes.empty()) {
    std::vector<ElectrodePoint> el;
    std::vector<std::string> cols;
    const std::string unit = sim_.variable_units("V").units;
    for (const auto& e : o_.electrodes) el.push_back({e.name, e.position}), cols.push_back(e.name + (unit.empty() ? "" : "_" + unit));
    ecg_ = std::make_unique<PseudoEcg>(g, el);
    ecg_csv_ = std::make_unique<CsvTraceWriter>(join(dir_, "ecg" + from + ".csv"), cols,
                                                ecg_text ? *ecg_text : std::string());
  }
}

std::vector<unsigned char> OutputManager::save_state() const {
  writer_->flush();  // the frames the state lists are on disk
  StateWriter w;
  w.put_string(state_tag);
  w.put<std::uint64_t>(spec_hash(o_));
  w.put<double>(due_.next_field);
  w.put<double>(due_.next_png);
  w.put<double>(due_.next_probe);
  w.put<double>(due_.next_ecg);
  w.put_string(probes_ ? probes_->text() : std::string());
  w.put_string(ecg_csv_ ? ecg_csv_->text() : std::string());
  w.put<std::int32_t>(png_ ? png_->frames() : 0);
  w.put<std::uint8_t>(png_range_.has_value());
  if (png_range_) {
    w.put<double>(png_range_->first);
    w.put<double>(png_range_->second);
  }
  w.put<std::uint64_t>(frames_.size());
  for (const auto& [t, leaf] : frames_) {
    w.put<double>(t);
    w.put_string(leaf);
  }
  if (act_) act_->save(w);
  return w.take();
}

void OutputManager::begin() {
  if (!resumed_) sample(true);
}

void OutputManager::after_step() { sample(false); }

double OutputManager::next_due() const {
  if (act_ && !act_->attached()) return 0;
  double t = INFINITY;
  if (o_.field_interval > 0) t = std::min(t, due_.next_field);
  if (png_) t = std::min(t, due_.next_png);
  if (probes_) t = std::min(t, due_.next_probe);
  if (ecg_) t = std::min(t, due_.next_ecg);
  return t;
}

void OutputManager::sample(bool force_fields) {
  const double t = sim_.time(), eps = 1e-6 * sim_.dt();
  // The maps follow V after every step: here from a copy of V, until the engine takes them
  // over where V lives (the GPU engine does after the first sample; no copy per step then).
  if (act_ && !act_->attached()) {
    sim_.voltage(v_);
    act_->update(t, v_);
    act_->attach(sim_);
  }
  if (o_.field_interval > 0 && (t >= due_.next_field - eps || force_fields)) {
    write_fields(index_at(t, o_.field_interval));
    while (due_.next_field <= t + eps) due_.next_field += o_.field_interval;
  }
  if (png_ && t >= due_.next_png - eps) {
    write_frame(t);
    while (due_.next_png <= t + eps) due_.next_png += o_.png_interval;
  }
  if (probes_ && t >= due_.next_probe - eps) {
    // In float, as the fields are written.
    if (!probe_sink_) probe_sink_ = sim_.attach_probes(probes_->reads());
    std::vector<double> row;
    probe_sink_->read(row);
    for (double& x : row) x = double(float(x));
    probes_->sample(t, row);
    while (due_.next_probe <= t + eps) due_.next_probe += o_.probe_interval;
  }
  if (ecg_ && t >= due_.next_ecg - eps) {
    ecg_csv_->row(t, ecg_->compute(sim_));
    while (due_.next_ecg <= t + eps) due_.next_ecg += o_.probe_interval;
  }
}

// The HDF5 series: a resumed run goes on in the file its checkpoint's frames are in (the
// steps written after the checkpoint are dropped); a new run writes fields.h5, a run
// restarted with other outputs fields_from_<step>.h5.
void OutputManager::open_hdf5(bool continuing) {
  const tissue::Grid& g = sim_.grid();
  if (continuing && !frames_.empty()) {
    const std::string leaf = frames_.back().second;
    const auto keep = std::count_if(frames_.begin(), frames_.end(), [&](const auto& f) { return f.second == leaf; });
    try {
      h5_ = std::make_unique<Hdf5SeriesWriter>(join(dir_, leaf), g, Hdf5SeriesWriter::Continue{int(keep)}, 1);
      return;
    } catch (const Error& e) {
      notes_.push_back(fmt::format("restart: {}; the fields from t = {} ms go to a new file", e.what(), sim_.time()));
    }
  }
  // A resumed run with no frame before its checkpoint starts the series it would have had.
  const bool first_file = sim_.steps_done() == 0 || (continuing && frames_.empty());
  const std::string name = first_file ? "fields.h5" : fmt::format("fields_from_{}.h5", sim_.steps_done());
  h5_ = std::make_unique<Hdf5SeriesWriter>(join(dir_, name), g, mask_, 1);
}

std::string OutputManager::vti_path(long k) const { return join(dir_, fmt::format("fields_{:06d}.vti", k)); }

void OutputManager::write_fields(long k) {
  const double t = sim_.time();
  std::shared_ptr<tissue::Snapshot> snap = sim_.snapshot(o_.variables);
  const std::string path = h5_ ? h5_->h5_path() : vti_path(k);
  frames_.emplace_back(t, fs::path(path).filename().string());
  writer_->submit([this, snap, t, path] {
    std::vector<tissue::Field<float>> f;
    snap->read(f);
    std::vector<NamedField> nf;
    for (std::size_t i = 0; i < o_.variables.size(); ++i) nf.push_back({o_.variables[i], &f[i]});
    if (mesh_out_)
      for (std::size_t i = 0; i < o_.variables.size(); ++i)
        if (o_.variables[i] == "V") mesh_out_->add_frame(f[i], t, o_.field_interval);
    if (h5_) {
      h5_->write(t, nf);
      return;
    }
    write_vti(path, sim_.grid(), nf, mask_);
    pvd_->add(t, path);
  });
}

// As a field frame: a snapshot now, the picture drawn and written on the queue's thread
// (png_ and png_range_ are the queue's from then on).
void OutputManager::write_frame(double t) {
  std::shared_ptr<tissue::Snapshot> snap = sim_.snapshot({o_.png_variable});
  writer_->submit([this, snap, t] {
    std::vector<Field<float>> f;
    snap->read(f);
    if (!png_range_) png_range_ = colour_range(f[0]);
    SnapshotOptions& so = png_->options();
    so.vmin = png_range_->first;
    so.vmax = png_range_->second;
    so.label = sim_.variable_units(o_.png_variable).label();
    png_->write(f[0], fmt::format("t={:.1f} ms", t));
  });
}

// V in mV: −90 … 40; a dimensionless voltage or any other state: the first frame's range.
std::pair<double, double> OutputManager::colour_range(const Field<float>& f) const {
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (std::isfinite(f[i])) lo = std::min<double>(lo, f[i]), hi = std::max<double>(hi, f[i]);
  if (o_.png_variable == "V" && (lo < -20 || hi > 20)) return {-90, 40};
  if (!std::isfinite(lo)) return {0, 1};
  if (hi - lo < 1e-6) return {lo - 1, hi + 1};
  return {std::min(lo, 0.0), hi};
}

std::string OutputManager::write_last_good() {
  writer_->flush();
  std::vector<Field<float>> f;
  sim_.snapshot(o_.variables)->read(f);
  std::vector<NamedField> nf;
  for (std::size_t i = 0; i < o_.variables.size(); ++i) nf.push_back({o_.variables[i], &f[i]});
  const std::string path = join(dir_, "last_good.vti");
  write_vti(path, sim_.grid(), nf, mask_);
  return path;
}

std::vector<std::string> OutputManager::units_of(const std::vector<std::string>& variables) const {
  std::vector<std::string> u;
  for (const auto& v : variables) u.push_back(sim_.variable_units(v).units);
  return u;
}

// probes.png and ecg.png beside their CSV (same stem), from the text written so far.
void OutputManager::write_trace_pictures(std::vector<std::string>& lines) const {
  const auto png_of = [](const std::string& csv) { return fs::path(csv).replace_extension(".png").string(); };
  if (probes_) {
    std::vector<std::string> names;
    for (const auto& p : o_.probes) names.push_back(p.name);
    std::vector<tissue::VariableUnits> vars;
    for (const auto& v : o_.variables) vars.push_back(sim_.variable_units(v));
    write_probes_png(png_of(probes_->path()), probes_->text(), names, vars);
    lines.push_back("probes picture: " + png_of(probes_->path()));
  }
  if (ecg_csv_) {
    std::vector<std::string> names;
    for (const auto& e : o_.electrodes) names.push_back(e.name);
    write_ecg_png(png_of(ecg_csv_->path()), ecg_csv_->text(), names, sim_.variable_units("V"));
    lines.push_back("pseudo-ECG picture: " + png_of(ecg_csv_->path()));
  }
}

std::vector<std::string> OutputManager::finish(bool make_movie) {
  writer_->flush();
  std::vector<std::string> lines;
  if (act_) {
    const auto& act = act_->activation();
    std::vector<NamedField> nf;
    if (o_.activation_map || o_.conduction_velocity) nf.push_back({"activation", &act});
    if (o_.apd_map) nf.push_back({"apd90", &act_->apd90()});
    std::vector<std::tuple<std::string, double, std::string>> rows;
    const auto st = map_stats(act);
    rows.emplace_back("activated_cells", double(act_->activated_cells()), "cells");
    rows.emplace_back("tissue_cells", double(sim_.tissue_cells()), "cells");
    rows.emplace_back("activation_threshold", o_.activation_threshold, sim_.variable_units("V").units);
    rows.emplace_back("activation_min", st.min, "ms");
    rows.emplace_back("activation_max", st.max, "ms");
    lines.push_back(fmt::format("activation: {} cells activated, {:.3f} … {:.3f} ms", act_->activated_cells(),
                                st.min, st.max));
    if (o_.apd_map) {
      const auto a = map_stats(act_->apd90());
      rows.emplace_back("apd90_cells", double(a.count), "cells");
      rows.emplace_back("apd90_min", a.min, "ms");
      rows.emplace_back("apd90_median", a.median, "ms");
      rows.emplace_back("apd90_max", a.max, "ms");
      lines.push_back(fmt::format("APD90: median {:.1f} ms over {} cells", a.median, a.count));
    }
    ConductionVelocity cv;
    if (o_.conduction_velocity) {
      cv = io::conduction_velocity(sim_.grid(), mask_, act);
      cv_ = cv.median;
      rows.emplace_back("cv_median", cv.median, "m/s");
      rows.emplace_back("cv_mean", cv.mean, "m/s");
      rows.emplace_back("cv_cells", double(cv.cells), "cells");
      nf.push_back({"conduction_velocity", &cv.per_cell});
      lines.push_back(fmt::format("conduction velocity: median {:.4f} m/s over {} cells", cv.median, cv.cells));
    }
    const std::string path = join(dir_, "maps.vti");
    write_vti(path, sim_.grid(), nf, mask_);
    write_summary_csv(join(dir_, "maps_summary.csv"), rows);
    if (st.count) write_activation_png(join(dir_, "activation.png"), sim_.grid(), act, mask_);
    lines.push_back("maps: " + path);
  }
  if (mesh_out_) {
    const bool a = act_ && (o_.activation_map || o_.conduction_velocity), d = act_ && o_.apd_map;
    if (!mesh_out_->note().empty()) lines.push_back("restart: " + mesh_out_->note());
    for (auto& l : mesh_out_->finish(a ? &act_->activation() : nullptr, d ? &act_->apd90() : nullptr)) lines.push_back(l);
  }
  if (make_movie && o_.movie && png_) {
    std::string msg;
    // 10 frames per second: a few seconds of movie for a typical run.
    png_->movie(10, &msg);
    lines.push_back(msg + (on_path("ffmpeg") ? "" : "; the frames are in " + dir_));
  }
  if (pvd_) lines.push_back("fields: " + pvd_->path());
  if (h5_) lines.push_back("fields: " + h5_->h5_path() + " (" + h5_->xdmf_path() + ")");
  if (png_) lines.push_back(fmt::format("pictures: {}/{}_*.png", dir_, o_.png_variable));
  write_trace_pictures(lines);
  if (probes_) lines.push_back("probes: " + probes_->path());
  if (ecg_csv_) lines.push_back("pseudo-ECG: " + ecg_csv_->path());
  return lines;
}

}  // namespace hw::io
