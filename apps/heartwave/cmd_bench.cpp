// `heartwave bench niederer`: the N-version benchmark (Niederer et al. 2011) at one (dx, dt).
//
// Why a command: the verification table (docs/verification.md) and the performance
// comparison with other solvers must come from exactly this code path, runnable by anyone:
// it prints the activation time at each of the nine points and the speed, and writes them
// as CSV for the script that assembles the table.
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common.hpp"
#include "core/error.hpp"
#include "progress.hpp"
#include "tissue/niederer.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"

namespace hw::cli {

namespace {

struct BenchNiedererFlags {
  double dx = 0.5, dt = 0.05;
  std::string backend = "auto";
  std::string diffusion = "auto";
  std::string precision = "f32";
  std::string cell_maths = "exact";
  int threads = 0;
  std::string output;
  bool quiet = false;
};

int run_bench_niederer(const BenchNiedererFlags& f) {
  using namespace hw::tissue;
  SimulationOptions opt;
  opt.threads = f.threads;
  TissueCase c = niederer_case(f.dx, f.dt);
  c.time.precision = f.precision == "f64" ? Precision::f64 : Precision::f32;
  c.time.cell_maths = cell_maths_of(f.cell_maths);
  if (c.time.cell_maths.fast && c.time.precision == Precision::f64)
    throw InputError(SourceLoc{}, "--cell-maths " + f.cell_maths + " with --precision f64: the fast intrinsics are float only");
  c.time.diffusion = f.diffusion == "explicit"         ? DiffusionScheme::forward_euler
                     : f.diffusion == "backward-euler" ? DiffusionScheme::backward_euler
                     : f.diffusion == "crank-nicolson" ? DiffusionScheme::crank_nicolson
                                                       : niederer_auto_scheme(c);
  std::string backend_note;
  opt.backend = choose_backend(f.backend, &backend_note);
  const char* scheme = c.time.diffusion == DiffusionScheme::forward_euler    ? "explicit"
                       : c.time.diffusion == DiffusionScheme::backward_euler ? "backward-euler"
                                                                             : "crank-nicolson";
  if (!f.quiet)
    std::cout << fmt::format("N-version benchmark: {}, dt = {} ms, {} cells, {}, {} diffusion, {}{}\n",
                             c.grid.str(), f.dt, c.grid.size(), backend_note, scheme, f.precision,
                             c.time.cell_maths.exact() ? "" : ", cell maths " + f.cell_maths);
  std::cout << std::flush;
  // The run stops once the nine points have activated, well before t_end on a fine grid.
  Progress progress(0, c.time.t_end, stderr, ::isatty(2) != 0, f.quiet, true);
  const NiedererResult r = run_niederer(c, opt, [&](double t, bool warming) { progress.update(t, warming); });
  progress.interrupt();
  std::cout << fmt::format("{:>8} {:>8} {:>8} {:>16}\n", "x_mm", "y_mm", "z_mm", "activation_ms");
  for (const auto& [p, t] : r.activation)
    std::cout << fmt::format("{:8.3f} {:8.3f} {:8.3f} {:16.4f}\n", p[0], p[1], p[2], t);
  std::cout << fmt::format("wall time {:.3f} s, {:.4g} cell-steps/s{}\n", r.wall_seconds, r.cell_steps_per_second,
                           r.cg_iterations > 0 ? fmt::format(", {:.1f} CG iterations per step", r.cg_iterations) : "");
  if (!f.output.empty()) {
    std::ofstream out(f.output);
    if (!out) throw InputError(SourceLoc{f.output, 0, 0}, "cannot write the CSV file");
    out << "x_mm,y_mm,z_mm,activation_ms,dx_mm,dt_ms,diffusion,precision,wall_s,cell_steps_per_s\n";
    for (const auto& [p, t] : r.activation)
      out << fmt::format("{},{},{},{:.6f},{},{},{},{},{:.3f},{:.4g}\n", p[0], p[1], p[2], t, f.dx, f.dt, scheme,
                         f.precision, r.wall_seconds, r.cell_steps_per_second);
    if (!out) throw Error("writing " + f.output + " failed");
    if (!f.quiet) std::cout << "written: " << f.output << "\n";
  }
  for (const auto& [p, t] : r.activation)
    if (!std::isfinite(t)) {
      std::cerr << "heartwave bench niederer: some points never activated within 150 ms\n";
      return 1;
    }
  return 0;
}

}  // namespace

// cmd_bench_tissue.cpp: karma2d, karma3d, tt06-3d, niederer-0.2, roof, all.
void add_tissue_bench_subcommands(CLI::App* bench, Action& action);
// cmd_bench_population.cpp: a GPU population against a compute roof.
void add_population_bench_subcommand(CLI::App* bench, Action& action);

void add_bench_command(CLI::App& app, Action& action) {
  auto* bench = app.add_subcommand("bench", "Benchmark cases that print a table (docs/benchmarks.md)");
  bench->footer("Examples:\n  heartwave bench roof\n  heartwave bench karma2d --seconds 1\n"
                "  heartwave bench niederer --dx 0.5 --dt 0.05 -o activation.csv\n"
                "Run `heartwave bench COMMAND --help` for each command's options. Docs: docs/benchmarks.md");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand("niederer", "The N-version benchmark slab: activation times at 9 points, speed");
  auto f = std::make_shared<BenchNiedererFlags>();
  cmd->add_option("--dx", f->dx, "grid spacing, mm (all axes)")->check(kPositive)->capture_default_str();
  cmd->add_option("--dt", f->dt, "PDE time step, ms")->check(kPositive)->capture_default_str();
  cmd->add_option("--backend", f->backend, "auto (the GPU where one is found and the case runs there, else cpu), reference, cpu, cuda")
      ->check(CLI::IsMember({"auto", "reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "OpenMP threads (0 = default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--diffusion", f->diffusion,
                  "auto (explicit where dt is stable, else crank-nicolson), explicit, backward-euler, crank-nicolson")
      ->check(CLI::IsMember({"auto", "explicit", "backward-euler", "crank-nicolson"}))
      ->capture_default_str();
  cmd->add_option("--precision", f->precision, "f32 or f64 state")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  add_cell_maths_option(cmd, f->cell_maths, "the tissue kernel (time.cell_maths)");
  cmd->add_option("--output,-o", f->output, "also write the activation times as CSV");
  cmd->add_flag("--quiet,-q", f->quiet, "no header and no progress");
  cmd->footer(
      "Slab 20 × 7 × 3 mm, ten Tusscher 2006 epi, σl 0.1334 / σt 0.0176 S/m, χ 1400 /cm,\n"
      "Cm 1 µF/cm², 50 000 µA/cm³ for 2 ms in the 1.5 mm corner cube (Niederer et al. 2011).\n"
      "Example:\n  heartwave bench niederer --dx 0.5 --dt 0.05 -o activation.csv\n"
      "The verification table: python3 tools/run_niederer.py (docs/verification.md §5).");
  cmd->callback([f, &action] {
    action = [f]() { return run_bench_niederer(*f); };
  });
  add_tissue_bench_subcommands(bench, action);
  add_population_bench_subcommand(bench, action);
}

}  // namespace hw::cli
