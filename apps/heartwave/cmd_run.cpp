// `heartwave run`: a tissue case from a TOML file (or the built-in spiral wave) to outputs.
//
// Why the order below: everything that can be wrong with the input is found before any
// work — the case file is read and validated, the memory it needs is compared with what
// the machine has, the Simulation validates the numerics (stable dt, models, regions) —
// and only then are output folders created and steps taken. A run ends in one of four
// ways: done (exit 0), bad input (1), a NaN (1, after saving the last good state), or
// SIGINT/SIGTERM (130, after a checkpoint from which --restart continues bit-identically,
// outputs included: the checkpoint carries the maps' and traces' accumulators).
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
#include "gpu/driver.hpp"
#include "io/case_file.hpp"
#include "io/checkpoint.hpp"
#include "io/output_manager.hpp"
#include "progress.hpp"
#include "tissue/engine.hpp"
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
  const MemoryEstimate mem = estimate_memory(c);
  const std::size_t need = mem.peak();
  const std::size_t have = available_memory_bytes();
  if (!f.quiet) {
    std::cout << fmt::format("  memory    {} ({} bytes) needed, {} available\n", format_bytes(double(need)), need,
                             have ? format_bytes(double(have)) : std::string("unknown"));
    if (mem.setup > 0)
      std::cout << fmt::format("            {} while running; {} of box-sized set-up data is freed "
                               "before the first step\n",
                               format_bytes(double(mem.run)), format_bytes(double(mem.setup)));
  }
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
  // The engine, and on the GPU its memory against the device's free memory.
  SimulationOptions opt;
  std::string backend_note;
  opt.backend = choose_backend(f.backend, &c, &backend_note);
  opt.threads = f.threads;
  if (!f.quiet) std::cout << "  " << backend_note << "\n";
  if (opt.backend == Backend::cuda) {
    const auto [free, total] = gpu::memory_info();
    if (!f.quiet)
      std::cout << fmt::format("  GPU memory {} needed, {} of {} free\n", format_bytes(double(mem.run)),
                               format_bytes(double(free)), format_bytes(double(total)));
    if (mem.run > free)
      throw InputError(SourceLoc{c.source_file, 0, 0},
                       fmt::format("the case needs {} on the GPU but {} is free: run in float (time.precision = "
                                   "\"float\"), on a coarser grid, or with --backend cpu",
                                   format_bytes(double(mem.run)), format_bytes(double(free))));
  }
  if (f.check) {
    if (!f.quiet) std::cout << "check: the case is valid (--check: not run)\n";
    return 0;
  }

  // 3. The simulation (loads models, validates the numerics) and the restart state.
  Simulation sim(c, opt);
  if (io::grid_from_file(c)) io::validate_regions(c, sim.grid());
  const std::uint64_t identity = case_identity(text, f.sets);
  std::optional<io::Checkpoint> ck;
  if (!f.restart.empty()) {
    ck = io::read_checkpoint(f.restart, identity);
    try {
      sim.load_state(ck->bytes);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      throw InputError(SourceLoc{f.restart, 0, 0}, std::string("cannot restart from this checkpoint: ") + e.what());
    }
    if (!f.quiet) std::cout << fmt::format("restart: continuing from t = {} ms (step {})\n", format_ms(sim.time(), sim.dt()), sim.steps_done());
  }
  if (!f.quiet) std::cout << "  engine    " << sim.describe() << "\n";

  // 4. Outputs (a restart continues their maps and traces) and the loop.
  io::OutputManager out(c, sim, ck ? &ck->outputs : nullptr);
  ck.reset();
  if (!f.quiet)
    for (const auto& l : out.notes()) std::cout << l << "\n";
  const std::string ckpt = (fs::path(c.output.directory) / "checkpoint.hwck").string();
  auto checkpoint = [&] {
    io::write_checkpoint(ckpt, sim.save_state(), io::CheckpointMeta{identity, sim.time(), sim.steps_done()},
                         out.save_state());
  };
  out.begin();
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
          format_ms(e.time, sim.dt()), e.cell[0], e.cell[1], e.cell[2], e.variable, e.what(),
          format_ms(sim.time(), sim.dt()), last, ckpt);
      return 1;
    }
    out.after_step();
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
                               io::stop_signal(), format_ms(sim.time(), sim.dt()), ckpt, builtin ? "" : f.file + " ", ckpt);
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
  cmd->add_option("--backend", f->backend, "engine: auto (the GPU where one and its driver are found and the case runs there, else cpu), "
                  "reference (plain double loops), cpu, cuda")
      ->check(CLI::IsMember({"auto", "reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "OpenMP threads (0 = default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--restart", f->restart, "continue bit-identically (state, maps, traces) from a checkpoint of this case");
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
