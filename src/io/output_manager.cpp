// Scheduling and naming of a run's outputs; see output_manager.hpp.
#include "io/output_manager.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/checkpoint.hpp"
#include "tissue/geometry.hpp"

namespace hw::io {
namespace {

std::string join(const std::string& dir, const std::string& leaf) {
  return (std::filesystem::path(dir) / leaf).string();
}

// The run's conductivity for the pseudo-ECG's ∇·σ∇V: isotropic σ_l without fibres, else
// the fibre tensor σ_t I + (σ_l − σ_t) f fᵀ from the case's fibre field. (The phase-field
// scaling of σ near smooth walls is not applied: the ECG is a far-field quantity.)
tissue::Conductivity ecg_sigma(const tissue::TissueCase& c, const tissue::Mask& mask) {
  const auto& k = c.conductivity;
  if (c.fibres.kind == tissue::FibreSpec::Kind::none) return tissue::Conductivity::isotropic(k.sigma_l);
  tissue::Geometry geo = tissue::build_geometry(c);
  if (!geo.fibres) return tissue::Conductivity::isotropic(k.sigma_l);
  return tissue::Conductivity::from_fibres(geo.grid, *geo.fibres,
                                           {k.sigma_l, k.sigma_t, k.sigma_n},
                                           mask.empty() ? nullptr : &mask);
}

}  // namespace

bool OutputManager::Due::check(double t, double tol) {
  if (!(interval > 0) || t + tol < next) return false;
  // Next multiple of the interval strictly after t (restarts land anywhere).
  next = (std::floor((t + tol) / interval) + 1) * interval;
  return true;
}

OutputManager::OutputManager(const tissue::Simulation& sim, const tissue::OutputSpec& spec)
    : sim_(sim), spec_(spec), dir_(spec.directory.empty() ? "." : spec.directory) {
  const tissue::Grid& g = sim.grid();
  mask_ = sim.mask().empty() ? nullptr : &sim.mask();
  const SourceLoc& loc = spec.loc;
  // Every requested variable must exist before any work.
  std::vector<std::string> wanted = spec.variables;
  wanted.push_back(spec.png_variable);
  for (const auto& v : wanted) {
    if (v == "V") continue;
    tissue::Field<float> probe_field;
    if (!sim.field(v, probe_field))
      throw InputError(loc, fmt::format("output: no cell model has a state named '{}'", v));
  }
  ensure_directory(dir_);
  fields_due_.interval = spec.field_interval;
  probe_due_.interval = spec.probe_interval;
  png_due_.interval = spec.png_interval;
  ckpt_due_.interval = spec.checkpoint_interval;
  const double t0 = sim.time();
  for (Due* d : {&fields_due_, &probe_due_, &png_due_}) d->next = t0;
  ckpt_due_.next = t0 + spec.checkpoint_interval;
  if (spec.field_interval > 0) {
    if (spec.format == tissue::OutputSpec::Format::hdf5)
      h5_ = std::make_unique<Hdf5SeriesWriter>(join(dir_, "fields.h5"), g, mask_, 4);
    else
      vtk_ = std::make_unique<VtkSeriesWriter>(dir_, "fields", g, mask_);
  }
  if (!spec.probes.empty()) {
    std::vector<ProbePoint> pts;
    for (const auto& p : spec.probes) pts.push_back({p.name, p.position});
    probes_ = std::make_unique<ProbeWriter>(join(dir_, "probes.csv"), g, mask_, pts,
                                            spec.variables, loc);
  }
  if (!spec.electrodes.empty()) {
    tissue::DiffusionSetup ds;
    ds.grid = g;
    ds.mask = sim.mask();
    ds.sigma = ecg_sigma(sim.tissue_case(), sim.mask());
    ecg_op_ = tissue::make_diffusion_operator(std::move(ds), tissue::Backend::cpu);
    std::vector<ElectrodePoint> el;
    std::vector<std::string> names;
    for (const auto& e : spec.electrodes) el.push_back({e.name, e.position}), names.push_back(e.name);
    ecg_ = std::make_unique<PseudoEcg>(*ecg_op_, el);
    ecg_csv_ = std::make_unique<CsvTraceWriter>(join(dir_, "ecg.csv"), names);
  }
  if (spec.png_interval > 0) {
    SnapshotOptions o;
    if (spec.png_variable != "V") o.label = "", o.vmin = 0, o.vmax = 1;
    png_ = std::make_unique<PngSeriesWriter>(join(dir_, "png"), spec.png_variable, g, mask_,
                                             SliceSpec{spec.png_slice_axis,
                                                       spec.png_slice_position},
                                             o);
  }
  if (spec.activation_map || spec.apd_map || spec.conduction_velocity)
    tracker_ = std::make_unique<ActivationTracker>(g, mask_, spec.activation_threshold,
                                                   spec.apd_map);
}

OutputManager::~OutputManager() = default;

const tissue::Field<float>& OutputManager::var(const std::string& name) {
  for (auto& [n, f] : cache_)
    if (n == name) return f;
  cache_.emplace_back(name, tissue::Field<float>(sim_.grid()));
  auto& f = cache_.back().second;
  if (name == "V") sim_.voltage(f);
  else sim_.field(name, f);
  return f;
}

void OutputManager::begin() { sample_fields(sim_.time()); }

void OutputManager::after_step() { sample_fields(sim_.time()); }

void OutputManager::sample_fields(double t) {
  cache_.clear();
  const double tol = 1e-3 * sim_.dt();
  if (tracker_) tracker_->update(t, var("V"));
  if (fields_due_.check(t, tol)) {
    std::vector<NamedField> nf;
    for (const auto& v : spec_.variables) nf.push_back({v, &var(v)});
    if (vtk_) vtk_->write(t, nf);
    if (h5_) h5_->write(t, nf);
  }
  if (probe_due_.check(t, tol)) {
    if (probes_) {
      std::vector<const tissue::Field<float>*> fs;
      for (const auto& v : spec_.variables) fs.push_back(&var(v));
      probes_->sample(t, fs);
    }
    if (ecg_) ecg_csv_->row(t, ecg_->compute(var("V")));
  }
  if (png_ && png_due_.check(t, tol)) png_->write(var(spec_.png_variable), fmt::format("t={:g} ms", t));
}

std::vector<std::string> OutputManager::finish() {
  std::vector<std::string> lines;
  if (vtk_) lines.push_back("fields: " + vtk_->pvd_path());
  if (h5_) lines.push_back("fields: " + h5_->h5_path() + " (" + h5_->xdmf_path() + ")");
  if (probes_) lines.push_back("probes: " + probes_->path());
  if (ecg_csv_) lines.push_back("pseudo-ECG: " + ecg_csv_->path());
  if (tracker_) {
    std::vector<NamedField> maps;
    std::vector<std::tuple<std::string, double, std::string>> rows;
    const auto& act = tracker_->activation();
    const MapStats sa = map_stats(act);
    rows.emplace_back("activated_cells", double(sa.count), "cells");
    rows.emplace_back("tissue_cells", double(sim_.tissue_cells()), "cells");
    rows.emplace_back("activation_threshold", spec_.activation_threshold, "mV");
    rows.emplace_back("activation_first", sa.min, "ms");
    rows.emplace_back("activation_last", sa.max, "ms");
    maps.push_back({"activation_time", &act});
    if (spec_.apd_map) {
      const MapStats s = map_stats(tracker_->apd90());
      rows.emplace_back("apd90_cells", double(s.count), "cells");
      rows.emplace_back("apd90_min", s.min, "ms");
      rows.emplace_back("apd90_median", s.median, "ms");
      rows.emplace_back("apd90_max", s.max, "ms");
      maps.push_back({"apd90", &tracker_->apd90()});
    }
    ConductionVelocity cv;
    if (spec_.conduction_velocity) {
      cv = io::conduction_velocity(sim_.grid(), mask_, act);
      cv_ = cv.median;
      rows.emplace_back("cv_median", cv.median, "m/s");
      rows.emplace_back("cv_mean", cv.mean, "m/s");
      rows.emplace_back("cv_cells", double(cv.cells), "cells");
      maps.push_back({"conduction_velocity", &cv.per_cell});
      lines.push_back(fmt::format("conduction velocity: {:.4g} m/s (median of {} cells)",
                                  cv.median, cv.cells));
    }
    write_vti(join(dir_, "maps.vti"), sim_.grid(), maps, mask_);
    write_summary_csv(join(dir_, "maps.csv"), rows);
    lines.push_back("maps: " + join(dir_, "maps.vti") + ", " + join(dir_, "maps.csv"));
    if (sa.count > 0 && sa.max > sa.min) {
      SnapshotOptions o;
      o.vmin = sa.min;
      o.vmax = sa.max;
      o.label = "ms";
      write_png(join(dir_, "activation.png"),
                render_snapshot(sim_.grid(), act, mask_,
                                {spec_.png_slice_axis, spec_.png_slice_position}, o));
    }
  }
  if (png_) {
    lines.push_back(fmt::format("png: {} frames in {}", png_->frames(), join(dir_, "png")));
    if (spec_.movie) {
      std::string msg;
      // 10 frames per second: a few seconds of movie for a typical run.
      png_->movie(10, &msg);
      lines.push_back(msg);
    }
  }
  return lines;
}

bool OutputManager::checkpoint_due() {
  return ckpt_due_.check(sim_.time(), 1e-3 * sim_.dt());
}

void OutputManager::write_checkpoint(const std::string& path, std::uint64_t case_hash) const {
  const auto bytes = sim_.save_state();
  io::write_checkpoint(path, bytes.data(), bytes.size(),
                       {case_hash, sim_.time(), static_cast<std::int64_t>(sim_.steps_done())});
}

}  // namespace hw::io
