// `heartwave run`: a tissue case from a TOML file (or the built-in spiral wave) to outputs.
//
// Why the order below: everything that can be wrong with the input is found before any
// work — the case file is read and validated, the memory it needs is compared with what
// the machine has, the Simulation validates the numerics (stable dt, models, regions) —
// and only then are output folders created and steps taken. A run ends in one of four
// ways: done (exit 0), bad input (1), a NaN (1, after saving the last good state), or
// SIGINT/SIGTERM (130, after a checkpoint from which --restart continues bit-identically).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common.hpp"
#include "core/error.hpp"
#include "default_case.hpp"
#include "io/case_file.hpp"
#include "io/checkpoint.hpp"
#include "io/hdf5_writer.hpp"
#include "io/maps.hpp"
#include "io/png_writer.hpp"
#include "io/probes.hpp"
#include "io/vtk_writer.hpp"
#include "progress.hpp"
#include "tissue/reaction.hpp"
#include "tissue/simulation.hpp"

namespace hw::cli {

namespace fs = std::filesystem;
using namespace hw::tissue;

namespace {

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;  // unknown
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) b /= 1000, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.1f} {}", b, units[u]);
}

std::uint64_t case_identity(const std::string& text, const std::vector<std::string>& sets) {
  // What a checkpoint must match: the case text and every --set except the end time and
  // the outputs, which a continuation may change.
  std::uint64_t h = io::fnv1a64(text);
  for (const auto& s : sets) {
    if (s.rfind("time.t_end", 0) == 0 || s.rfind("output.", 0) == 0) continue;
    h = io::fnv1a64(s.data(), s.size(), h ^ 0x9e3779b97f4a7c15ull);
  }
  return h;
}

struct RunFlags {
  std::string file;
  std::vector<std::string> sets;
  std::string backend = "auto";
  int threads = 0;
  std::string restart;
  bool quiet = false;
  bool check = false;
};

// The outputs a case asks for, fed after every step.
class RunOutputs {
 public:
  RunOutputs(const TissueCase& c, const Simulation& sim, bool restarted) : c_(c), sim_(sim) {
    const auto& o = c.output;
    dir_ = o.directory;
    const Grid& g = sim.grid();
    mask_ = sim.mask().empty() ? nullptr : &sim.mask();
    // Every requested variable must exist somewhere before the run starts.
    Field<float> probe_field;
    for (const auto& v : o.variables)
      if (!sim.field(v, probe_field))
        throw InputError(o.loc, "output.fields: no model in this case has a state '" + v + "'");
    if (o.png_interval > 0 && !sim.field(o.png_variable, probe_field))
      throw InputError(o.loc, "output.png_variable: no model in this case has a state '" + o.png_variable + "'");
    fs::create_directories(dir_);
    fields_.resize(o.variables.size());
    if (o.field_interval > 0) {
      if (o.format == OutputSpec::Format::hdf5) {
        const std::string name = restarted ? fmt::format("fields_from_{}.h5", sim.steps_done()) : "fields.h5";
        h5_ = std::make_unique<io::Hdf5SeriesWriter>((fs::path(dir_) / name).string(), g, mask_, 1);
      } else {
        pvd_ = std::make_unique<io::PvdWriter>((fs::path(dir_) / "fields.pvd").string());
        // After a restart the earlier frames are still there: keep them in the series.
        const long k0 = index_at(sim.time(), o.field_interval);
        for (long k = 0; restarted && k < k0; ++k)
          if (fs::exists(vti_path(k))) pvd_->add(k * o.field_interval, vti_path(k));
      }
      next_field_ = next_after(sim.time(), o.field_interval, !restarted);
    }
    if (o.png_interval > 0) {
      slice_.axis = g.n[2] == 1 ? 2 : o.png_slice_axis;
      slice_.position = o.png_slice_position;
      next_png_ = next_after(sim.time(), o.png_interval, !restarted);
      png_index_ = index_at(sim.time(), o.png_interval) + (restarted ? 1 : 0);
    }
    if (!o.probes.empty()) {
      std::vector<io::ProbePoint> pts;
      for (const auto& p : o.probes) pts.push_back({p.name, p.position});
      const std::string name = restarted ? fmt::format("probes_from_{}.csv", sim.steps_done()) : "probes.csv";
      probes_ = std::make_unique<io::ProbeWriter>((fs::path(dir_) / name).string(), g, mask_, pts,
                                                  o.variables, o.loc);
      next_probe_ = next_after(sim.time(), o.probe_interval, true);
    }
    if (o.activation_map || o.apd_map || o.conduction_velocity)
      act_ = std::make_unique<io::ActivationTracker>(g, mask_, o.activation_threshold, o.apd_map);
    if (!o.electrodes.empty()) {
      // The pseudo-ECG needs the run's diffusion operator; build the same one here.
      setup_ = std::make_unique<SimSetup>(make_sim_setup(c));
      DiffusionSetup ds{setup_->geo.grid, setup_->sigma, setup_->geo.mask, setup_->order};
      op_ = make_diffusion_operator(ds, Backend::cpu);
      std::vector<io::ElectrodePoint> el;
      for (const auto& e : o.electrodes) el.push_back({e.name, e.position});
      ecg_ = std::make_unique<io::PseudoEcg>(*op_, el);
      std::vector<std::string> cols;
      for (const auto& e : o.electrodes) cols.push_back(e.name);
      const std::string name = restarted ? fmt::format("ecg_from_{}.csv", sim.steps_done()) : "ecg.csv";
      ecg_csv_ = std::make_unique<io::CsvTraceWriter>((fs::path(dir_) / name).string(), cols);
    }
  }

  // After each step (and once before the first): writes whatever is due at sim.time().
  void sample(bool force_fields = false) {
    const double t = sim_.time(), eps = 1e-6 * sim_.dt();
    const auto& o = c_.output;
    if (act_ || ecg_) {
      sim_.voltage(v_);
      if (act_) act_->update(t, v_);
    }
    if (o.field_interval > 0 && (t >= next_field_ - eps || force_fields)) {
      write_fields(index_at(t, o.field_interval));
      while (next_field_ <= t + eps) next_field_ += o.field_interval;
    }
    if (o.png_interval > 0 && t >= next_png_ - eps) {
      write_png(t);
      while (next_png_ <= t + eps) next_png_ += o.png_interval;
    }
    if (probes_ && t >= next_probe_ - eps) {
      std::vector<const Field<float>*> ptr;
      for (std::size_t i = 0; i < o.variables.size(); ++i) {
        sim_.field(o.variables[i], fields_[i]);
        ptr.push_back(&fields_[i]);
      }
      probes_->sample(t, ptr);
      while (next_probe_ <= t + eps) next_probe_ += o.probe_interval;
    }
    if (ecg_ && t >= next_ecg_ - eps) {
      ecg_csv_->row(t, ecg_->compute(v_));
      while (next_ecg_ <= t + eps) next_ecg_ += o.probe_interval;
    }
  }

  // The last good state after a NaN: V (and the other fields) as one .vti.
  std::string write_last_good() {
    std::vector<io::NamedField> nf;
    for (std::size_t i = 0; i < c_.output.variables.size(); ++i) {
      sim_.field(c_.output.variables[i], fields_[i]);
      nf.push_back({c_.output.variables[i], &fields_[i]});
    }
    const std::string path = (fs::path(dir_) / "last_good.vti").string();
    io::write_vti(path, sim_.grid(), nf, mask_);
    return path;
  }

  // Maps and the movie at the end. Returns lines to print.
  std::vector<std::string> finish(bool make_movie) {
    std::vector<std::string> lines;
    const auto& o = c_.output;
    if (act_) {
      std::vector<io::NamedField> nf;
      if (o.activation_map || o.conduction_velocity) nf.push_back({"activation", &act_->activation()});
      if (o.apd_map) nf.push_back({"apd90", &act_->apd90()});
      const std::string path = (fs::path(dir_) / "maps.vti").string();
      io::write_vti(path, sim_.grid(), nf, mask_);
      std::vector<std::tuple<std::string, double, std::string>> rows;
      const auto st = io::map_stats(act_->activation());
      rows.push_back({"activated_cells", double(act_->activated_cells()), "cells"});
      rows.push_back({"activation_min", st.count ? st.min : NAN, "ms"});
      rows.push_back({"activation_max", st.count ? st.max : NAN, "ms"});
      lines.push_back(fmt::format("activation: {} cells activated, {:.3f} … {:.3f} ms", act_->activated_cells(),
                                  st.count ? st.min : NAN, st.count ? st.max : NAN));
      if (o.apd_map) {
        const auto a = io::map_stats(act_->apd90());
        rows.push_back({"apd90_median", a.count ? a.median : NAN, "ms"});
        lines.push_back(fmt::format("APD90: median {:.1f} ms over {} cells", a.count ? a.median : NAN, a.count));
      }
      if (o.conduction_velocity) {
        const auto cv = io::conduction_velocity(sim_.grid(), mask_, act_->activation());
        rows.push_back({"cv_median", cv.median, "m/s"});
        rows.push_back({"cv_mean", cv.mean, "m/s"});
        lines.push_back(fmt::format("conduction velocity: median {:.4f} m/s over {} cells", cv.median, cv.cells));
      }
      io::write_summary_csv((fs::path(dir_) / "maps_summary.csv").string(), rows);
      if (sim_.grid().n[2] == 1 && st.count) {
        io::SnapshotOptions so;
        so.vmin = 0;
        so.vmax = std::max(st.max, 1.0);
        so.label = "ms";
        io::write_png((fs::path(dir_) / "activation.png").string(),
                      io::render_snapshot(sim_.grid(), act_->activation(), mask_, slice_, so));
      }
      lines.push_back("maps: " + path);
    }
    if (make_movie && o.movie && png_index_ > 0) {
      if (io::on_path("ffmpeg")) {
        const std::string cmd = fmt::format(
            "ffmpeg -y -loglevel error -framerate 10 -i '{}/{}_%05d.png' -pix_fmt yuv420p "
            "-vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' '{}/{}.mp4' </dev/null",
            dir_, o.png_variable, dir_, o.png_variable);
        lines.push_back(std::system(cmd.c_str()) == 0 ? "movie: " + dir_ + "/" + o.png_variable + ".mp4"
                                                      : "movie: ffmpeg failed");
      } else {
        lines.push_back("movie: ffmpeg is not on the PATH; frames are in " + dir_);
      }
    }
    if (pvd_) lines.push_back("fields: " + pvd_->path());
    if (h5_) lines.push_back("fields: " + h5_->h5_path() + " (" + h5_->xdmf_path() + ")");
    if (o.png_interval > 0) lines.push_back(fmt::format("pictures: {}/{}_*.png", dir_, o.png_variable));
    if (probes_) lines.push_back("probes: " + probes_->path());
    return lines;
  }

 private:
  static long index_at(double t, double interval) { return std::lround(t / interval); }
  // The first output time ≥ t (inclusive = t itself counts).
  static double next_after(double t, double interval, bool inclusive) {
    double k = std::floor(t / interval + 1e-9);
    double next = k * interval;
    if (next < t - 1e-9 * interval || !inclusive) next += interval;
    if (!inclusive && next <= t + 1e-9 * interval) next += interval;
    return next;
  }
  std::string vti_path(long k) const { return (fs::path(dir_) / fmt::format("fields_{:06d}.vti", k)).string(); }

  void write_fields(long k) {
    std::vector<io::NamedField> nf;
    for (std::size_t i = 0; i < c_.output.variables.size(); ++i) {
      sim_.field(c_.output.variables[i], fields_[i]);
      nf.push_back({c_.output.variables[i], &fields_[i]});
    }
    if (h5_) {
      h5_->write(sim_.time(), nf);
    } else {
      io::write_vti(vti_path(k), sim_.grid(), nf, mask_);
      pvd_->add(sim_.time(), vti_path(k));
    }
  }

  void write_png(double t) {
    Field<float>& f = png_field_;
    sim_.field(c_.output.png_variable, f);
    if (!png_range_) png_range_ = colour_range(f);
    io::SnapshotOptions so;
    so.vmin = png_range_->first;
    so.vmax = png_range_->second;
    so.label = c_.output.png_variable == "V" && so.vmin < -20 ? "mV" : c_.output.png_variable;
    so.title = fmt::format("t={:.1f} ms", t);
    const std::string path = (fs::path(dir_) / fmt::format("{}_{:05d}.png", c_.output.png_variable, png_index_++)).string();
    io::write_png(path, io::render_snapshot(sim_.grid(), f, mask_, slice_, so));
  }

  // V in mV: −90 … 40; a dimensionless voltage or any other state: the first frame's range.
  std::pair<double, double> colour_range(const Field<float>& f) const {
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (std::isfinite(f[i])) lo = std::min<double>(lo, f[i]), hi = std::max<double>(hi, f[i]);
    if (c_.output.png_variable == "V" && (lo < -20 || hi > 20)) return {-90, 40};
    if (!std::isfinite(lo)) return {0, 1};
    if (hi - lo < 1e-6) return {lo - 1, hi + 1};
    return {std::min(lo, 0.0), hi};
  }

  const TissueCase& c_;
  const Simulation& sim_;
  std::string dir_;
  const Mask* mask_ = nullptr;
  std::vector<Field<float>> fields_;
  Field<float> v_, png_field_;
  std::unique_ptr<io::PvdWriter> pvd_;
  std::unique_ptr<io::Hdf5SeriesWriter> h5_;
  std::unique_ptr<io::ProbeWriter> probes_;
  std::unique_ptr<io::ActivationTracker> act_;
  std::unique_ptr<SimSetup> setup_;
  std::unique_ptr<DiffusionOperator> op_;
  std::unique_ptr<io::PseudoEcg> ecg_;
  std::unique_ptr<io::CsvTraceWriter> ecg_csv_;
  io::SliceSpec slice_;
  std::optional<std::pair<double, double>> png_range_;
  double next_field_ = 0, next_png_ = 0, next_probe_ = 0, next_ecg_ = 0;
  long png_index_ = 0;
};

int run_case(const RunFlags& f) {
  // 1. The case, validated.
  std::string text;
  TissueCase c;
  const bool builtin = f.file.empty();
  if (builtin) {
    text = kDefaultCaseToml;
    c = io::parse_case(text, "<built-in spiral2d.toml>", f.sets);
    if (!f.quiet)
      std::cout << "heartwave run: no CASE given; running the built-in default case (examples/spiral2d.toml)\n";
  } else {
    std::ifstream in(f.file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    c = io::read_case_file(f.file, f.sets);
  }
  if (!f.quiet) std::cout << io::describe_case(c);

  // 2. Memory, before anything is allocated.
  const std::size_t need = estimate_memory(c);
  const std::size_t have = available_memory_bytes();
  if (!f.quiet)
    std::cout << fmt::format("  memory    {} ({} bytes) needed, {} available\n", format_bytes(double(need)), need,
                             have ? format_bytes(double(have)) : std::string("unknown"));
  if (have > 0 && need > have)
    throw InputError(SourceLoc{c.source_file, 0, 0},
                     fmt::format("the case needs {} ({} bytes) but only {} ({} bytes) of memory is available "
                                 "(MemAvailable in /proc/meminfo): use a coarser grid or a smaller domain",
                                 format_bytes(double(need)), need, format_bytes(double(have)), have));
  if (c.time.diffusion == DiffusionScheme::forward_euler && !io::grid_from_file(c)) {
    // The Simulation checks this too; here it also covers --check, before any model loads.
    const double lim = stable_dt_limit(c);
    if (std::isfinite(lim) && c.time.dt > lim)
      throw InputError(c.time.loc, fmt::format("time.dt = {} ms is above the stability limit of explicit diffusion, "
                                               "dt ≤ {:.4g} ms for this grid and conductivity: use a smaller "
                                               "time.dt or time.diffusion = \"crank-nicolson\"", c.time.dt, lim));
    if (std::isfinite(lim) && !f.quiet)
      std::cout << fmt::format("  stability explicit diffusion needs dt ≤ {:.4g} ms\n", lim);
  }
  if (f.check) {
    if (!f.quiet) std::cout << "check: the case is valid (--check: not run)\n";
    return 0;
  }

  // 3. The simulation (loads models, validates the numerics) and the restart state.
  SimulationOptions opt;
  opt.backend = f.backend == "reference" ? Backend::reference : f.backend == "cuda" ? Backend::cuda : Backend::cpu;
  opt.threads = f.threads;
  Simulation sim(c, opt);
  if (io::grid_from_file(c)) io::validate_regions(c, sim.grid());
  const std::uint64_t identity = case_identity(text, f.sets);
  if (!f.restart.empty()) {
    io::Checkpoint ck = io::read_checkpoint(f.restart, identity);
    try {
      sim.load_state(ck.bytes);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      throw InputError(SourceLoc{f.restart, 0, 0}, std::string("cannot restart from this checkpoint: ") + e.what());
    }
    if (!f.quiet) std::cout << fmt::format("restart: continuing from t = {} ms (step {})\n", sim.time(), sim.steps_done());
  }
  if (!f.quiet) std::cout << "  engine    " << sim.describe() << "\n";

  // 4. Outputs and the loop.
  RunOutputs out(c, sim, !f.restart.empty());
  const std::string ckpt = (fs::path(c.output.directory) / "checkpoint.hwck").string();
  auto checkpoint = [&] {
    io::write_checkpoint(ckpt, sim.save_state(), io::CheckpointMeta{identity, sim.time(), sim.steps_done()});
  };
  out.sample(true);
  std::cout << std::flush;
  io::StopSignalGuard guard;
  Progress progress(sim.time(), c.time.t_end, stderr, ::isatty(2) != 0, f.quiet);
  const double eps = 1e-3 * sim.dt();
  double next_ckpt = c.output.checkpoint_interval > 0
                         ? (std::floor(sim.time() / c.output.checkpoint_interval + 1e-9) + 1) * c.output.checkpoint_interval
                         : INFINITY;
  while (sim.time() < c.time.t_end - eps) {
    try {
      sim.step();
    } catch (const NumericalError& e) {
      progress.interrupt();
      checkpoint();
      const std::string last = out.write_last_good();
      std::cerr << fmt::format(
          "heartwave run: error: the solution blew up at t = {} ms in cell ({}, {}, {}), variable {}: {}\n"
          "  the last good state (t = {} ms) is in {} and {} (--restart continues from it)\n"
          "  usual causes: dt too large for the model (try a smaller time.dt or more time.ode_substeps), "
          "a stimulus far too strong, or a parameter out of range\n",
          e.time, e.cell[0], e.cell[1], e.cell[2], e.variable, e.what(), sim.time(), last, ckpt);
      return 1;
    }
    out.sample();
    if (sim.time() >= next_ckpt - eps) {
      checkpoint();
      while (next_ckpt <= sim.time() + eps) next_ckpt += c.output.checkpoint_interval;
    }
    progress.update(sim.time());
    if (io::stop_requested()) {
      progress.interrupt();
      checkpoint();
      std::cerr << fmt::format("heartwave run: stopped by signal {} at t = {} ms; checkpoint {}\n"
                               "  continue with: heartwave run {}--restart {}\n",
                               io::stop_signal(), sim.time(), ckpt, builtin ? "" : f.file + " ", ckpt);
      return 130;
    }
  }
  progress.finish(sim.time());
  checkpoint();
  for (const auto& l : out.finish(true))
    if (!f.quiet) std::cout << l << "\n";
  if (!f.quiet) std::cout << "checkpoint: " << ckpt << "\n";
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("run", "Run a tissue case (TOML); with no CASE, the built-in 2D spiral wave");
  auto f = std::make_shared<RunFlags>();
  cmd->add_option("case", f->file, "case file (TOML, docs/case-files.md); none = the built-in spiral wave")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", f->sets, "override a case key before validation: --set time.dt=0.01 (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  cmd->add_option("--backend", f->backend, "engine: auto (= cpu), reference (plain double loops), cpu, cuda")
      ->check(CLI::IsMember({"auto", "reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "OpenMP threads (0 = default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--restart", f->restart, "continue bit-identically from a checkpoint of this case");
  cmd->add_flag("--quiet,-q", f->quiet, "no summary and no progress");
  cmd->add_flag("--check", f->check, "validate the case, print its summary and memory, and stop");
  cmd->footer(
      "Exit codes: 0 done, 1 bad input or a failed run (NaN: the last good state is saved),\n"
      "2 bad command line, 130 stopped by SIGINT/SIGTERM after writing a checkpoint.\n\n"
      "Examples:\n"
      "  heartwave run                                   # built-in spiral wave, pictures in out/\n"
      "  heartwave run examples/scroll3d.toml --threads 2\n"
      "  heartwave run case.toml --set time.t_end=1000 --set output.directory=long\n"
      "  heartwave run case.toml --restart out/checkpoint.hwck --set time.t_end=2000\n"
      "  heartwave run examples/karma3d.toml --check    # summary and memory only");
  cmd->callback([f, &action] {
    action = [f]() { return run_case(*f); };
  });
}

}  // namespace hw::cli
