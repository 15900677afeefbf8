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

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common.hpp"
#include "core/error.hpp"
#include "default_case.hpp"
#include "run/case_check.hpp"
#include "run/case_file.hpp"
#include "progress.hpp"
#include "run/output_folder.hpp"
#include "run/run.hpp"
#include "outputs/checkpoint.hpp"
#include "cli_restart.hpp"
#include "comm/world.hpp"
#include "ranks.hpp"
#include "cmd_live.hpp"
#include "tissue/simulation.hpp"

namespace hw::cli {

using namespace hw::tissue;

namespace {

struct RunFlags {
  std::string file;
  std::vector<std::string> sets;
  std::string backend = "auto";
  int threads = 0;
  int device = 0;
  std::string restart;
  bool quiet = false;
  bool check = false;
  bool overwrite = false;
  int ranks = 0;  // --ranks: split over this many MPI ranks, mpirun started here
  int gpus = 0;   // --gpus: as --ranks, one GPU each (the cuda backend)
  bool live = false;   // --live (or `heartwave live`): serve the live view while stepping
  LiveFlags live_flags;
  std::string replay;  // --replay LOG: a live run's controls, again
};

// --check: every problem a run would meet, listed (exit 1), or the report (exit 0).
int check_only(const TissueCase& c, const RunFlags& f) {
  run::CheckOptions o;
  o.backend = f.backend;
  o.device = f.device;
  o.threads = f.threads;
  const run::CaseCheck r = run::check_case(c, o);
  if (!f.quiet)
    for (const auto& l : r.lines) std::cout << l << "\n";
  std::cout << std::flush;
  if (!r.ok()) {
    for (const auto& d : r.problems) std::cerr << d.str() << "\n";
    std::cerr << fmt::format("check: {} problem{}; the run would not start\n", r.problems.size(),
                             r.problems.size() > 1 ? "s" : "");
    return 1;
  }
  if (!f.quiet) std::cout << "check: the case is valid (--check: not run)\n";
  return 0;
}

int run_case(const RunFlags& flags) {
  // --ranks N: this command again under mpirun, N ranks (apps/heartwave/ranks.cpp); inside
  // a launcher's run the ranks are already there.
  if (flags.ranks > 1 && comm::world().size() == 1 && comm::launcher_ranks() == 0) return launch_ranks(flags.ranks);
  // 0. A restart continues its checkpoint's run: that case and those overrides
  // (cli_restart.cpp), unless the command line says otherwise where it may.
  RunFlags f = flags;
  std::string resume_run_id;
  if (!f.restart.empty()) resume_run_id = resolve_restart(f.restart, f.file, f.sets, kDefaultCaseToml, f.quiet);

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
    text = read_text(f.file);
    c = io::read_case_file(f.file, f.sets);
  }
  if (!f.quiet) std::cout << io::describe_case(c);
  // The output folder, before any work: a file, unwritable, or another run's (run.json).
  // Split: rank 0's folder alone (the others write into scratch folders, run/run.cpp); a
  // refusal there ends every rank. A live run or a replay checks its folder itself.
  if (!f.check && !f.live && f.replay.empty() && comm::world().rank() == 0)
    run::check_output_folder(c.output.directory, c.output.loc, {f.overwrite, resume_run_id, f.restart});

  if (f.check) return check_only(c, f);
  if (f.live || !f.replay.empty()) {
    // Only the plan's checks: a live run writes its log and checkpoints, not the run's outputs.
    const run::Plan plan = run::plan(c, f.backend, f.device);
    if (!f.quiet)
      for (const auto& l : plan.describe()) std::cout << l << "\n";
    SimulationOptions so;
    so.backend = plan.backend;
    so.threads = f.threads;
    so.device = f.device;
    if (!f.replay.empty()) return replay_case(c, f.replay, so, f.quiet);
    return live_case(c, f.live_flags, so, f.quiet);
  }
  // 2. Memory, stability and the backend, before anything is allocated.
  const run::Plan plan = run::plan(c, f.backend, f.device);
  if (!f.quiet)
    for (const auto& l : plan.describe()) std::cout << l << "\n";

  // 3. The run: models loaded and checked, the restart state, the outputs opened.
  run::Options opt;
  opt.sim.backend = plan.backend;
  opt.sim.threads = f.threads;
  opt.sim.device = run::split_device(f.device);
  opt.restart = f.restart;
  opt.identity = run::case_identity(text, f.sets);
  opt.setup = plan.setup;  // the geometry, models and checks of the plan, not done again
  opt.case_path = builtin ? "" : std::filesystem::absolute(f.file).lexically_normal().string();
  opt.case_text_hash = io::fnv1a64(text);
  opt.overrides = f.sets;
  opt.overwrite = f.overwrite;
  run::Run r(c, opt);
  const Simulation& sim = r.simulation();
  if (!f.quiet && !r.cleared().empty())
    std::cout << fmt::format("overwrite: removed {} files of the earlier run from {}\n", r.cleared().size(),
                             c.output.directory.empty() ? "." : c.output.directory);
  if (!f.quiet) {
    if (!f.restart.empty())
      std::cout << fmt::format("restart: continuing from t = {} ms (step {})\n", format_ms(sim.time(), sim.dt()),
                               sim.steps_done());
    std::cout << "  engine    " << sim.describe() << "\n";
    for (const auto& l : r.notes()) std::cout << l << "\n";
  }
  std::cout << std::flush;

  // 4. The loop, with a progress bar.
  Progress progress(sim.time(), c.time.t_end, stderr, ::isatty(2) != 0, f.quiet);
  const run::Result res = r.advance(c.time.t_end, [&](double t) { progress.update(t, sim.warming_up()); });
  g_agreed_exit = true;  // the ranks of a split run agreed on the outcome (run/run.cpp)
  switch (res.outcome) {
    case run::Result::Outcome::failed:
      progress.interrupt();
      std::cerr << fmt::format(
          "heartwave run: error: the solution blew up at t = {} ms in cell ({}, {}, {}), variable {}: {}\n"
          "  the last good state (t = {} ms) is in {} and {} (--restart continues from it)\n"
          "  usual causes: dt too large for the model (try a smaller time.dt or more time.ode_substeps), "
          "a stimulus far too strong, or a parameter out of range\n",
          format_ms(res.failed_at_ms, sim.dt()), res.cell[0], res.cell[1], res.cell[2], res.variable, res.message,
          format_ms(res.t_ms, sim.dt()), res.last_good, res.checkpoint);
      return 1;
    case run::Result::Outcome::stopped:
      progress.interrupt();
      std::cerr << fmt::format("heartwave run: stopped by signal {} at t = {} ms; checkpoint {}\n"
                               "  continue with: {}\n",
                               res.signal, format_ms(res.t_ms, sim.dt()), res.checkpoint,
                               continue_command(flags.file, res.checkpoint, f.backend, f.threads, f.device));
      return 130;
    case run::Result::Outcome::finished: break;
  }
  progress.finish(sim.time());
  if (!f.quiet) {
    for (const auto& l : res.summary) std::cout << l << "\n";
    std::cout << "checkpoint: " << res.checkpoint << "\n";
  }
  return 0;
}

}  // namespace

namespace {

void add_live_options(CLI::App* cmd, RunFlags& f) {
  cmd->add_option("--live-host", f.live_flags.host,
                  "the address the live view listens on (default 127.0.0.1: this machine only; 0.0.0.0 opens it "
                  "to the network, the token still required)")
      ->capture_default_str();
  cmd->add_option("--live-port", f.live_flags.port, "the live view's port (0: one the system picks, printed)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--live-fps", f.live_flags.fps, "frames per second at most while a page watches")
      ->check(CLI::Range(1.0, 60.0))
      ->capture_default_str();
}

}  // namespace

void add_live_command(CLI::App& app, Action& action);

void add_run_command(CLI::App& app, Action& action) {
  add_live_command(app, action);  // `heartwave live`: the same run with --live
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
  cmd->add_option("--device", f->device, "the GPU to run on with the cuda backend (0 = the first; CUDA_VISIBLE_DEVICES also chooses)")
      ->check(CLI::Range(0, 1023))
      ->capture_default_str();
  cmd->add_option("--restart", f->restart,
                  "continue bit-identically (state, maps, traces) from a checkpoint, with its case and --set "
                  "overrides, into its folder (CASE may be left out)");
  cmd->add_flag("--overwrite", f->overwrite,
                "clear the outputs of an earlier run in output.directory first (only files a heartwave run "
                "wrote; others stay)");
  cmd->add_option("--ranks", f->ranks,
                  "split the run over N MPI ranks on this machine (starts mpirun; same results as one rank, "
                  "docs/parallel.md); on a cluster use mpirun/srun heartwave run instead")
      ->check(CLI::Range(1, 65536))
      ->type_name("N");
  cmd->add_option("--gpus", f->gpus,
                  "split the run over N GPUs of this machine: --ranks N with the cuda backend, one GPU per rank "
                  "from --device on, halos GPU to GPU (peer stores over NVLink or PCIe; NCCL for the gathers) (docs/parallel.md)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  cmd->add_flag("--quiet,-q", f->quiet, "no summary and no progress");
  cmd->add_flag("--live", f->live,
                "serve a live view of the run on 127.0.0.1 (a link with a random token is printed): watch V, "
                "click to stimulate, change parameters; every control is logged (docs/live.md)");
  add_live_options(cmd, *f);
  cmd->add_option("--replay", f->replay,
                  "step the case again with the controls of a live run's log (live-actions.jsonl); writes "
                  "replay.hwck and replay-V.vti");
  cmd->add_flag("--check", f->check, "check everything a run would (models, names, geometry, memory, dt, regions) and estimate the wall time; do not run");
  cmd->footer(
      "Exit codes: 0 done, 1 bad input or a failed run (NaN: the last good state is saved),\n"
      "2 bad command line, 130 stopped by SIGINT/SIGTERM after writing a checkpoint.\n"
      "An output folder holding another run's outputs (its run.json) is refused: --overwrite\n"
      "clears them, --restart continues that run (docs/outputs.md).\n\n"
      "Examples:\n"
      "  heartwave run                                   # built-in spiral wave, pictures in out/\n"
      "  heartwave run examples/scroll3d.toml --threads 2\n"
      "  heartwave run examples/spiral2d.toml --set time.t_end=1000 --set output.directory=long\n"
      "  heartwave run examples/spiral2d.toml --restart long/checkpoint.hwck --set time.t_end=2000\n"
      "  heartwave run examples/karma3d.toml --check    # summary and memory only\n"
      "  heartwave run examples/scroll3d.toml --ranks 2 --set time.t_end=5 --set output.directory=split\n"
      "  heartwave run examples/scroll3d.toml --gpus 2 --set output.directory=split-gpus   # two GPUs, one run\n"
      "  heartwave run examples/spiral2d.toml --replay out/live-actions.jsonl   # a live run again");
  cmd->callback([f, &action] {
    if (f->gpus > 0) {
      if (f->ranks > 0 && f->ranks != f->gpus)
        throw CLI::ValidationError("--gpus", fmt::format("--gpus {} and --ranks {} disagree: give one of them",
                                                         f->gpus, f->ranks));
      if (f->backend != "auto" && f->backend != "cuda")
        throw CLI::ValidationError("--gpus", fmt::format("--gpus runs the cuda backend, not {}: leave --backend "
                                                         "out, or split over cpu ranks with --ranks",
                                                         f->backend));
      f->ranks = f->gpus;
      f->backend = "cuda";
    }
    action = [f]() { return run_case(*f); };
  });
}

void add_live_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("live", "Run a tissue case with its live view in the browser (the same as run --live)");
  auto f = std::make_shared<RunFlags>();
  f->live = true;
  cmd->add_option("case", f->file, "case file (TOML, docs/case-files.md); none = the built-in spiral wave")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", f->sets, "override a case key before validation: --set time.dt=0.01 (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  cmd->add_option("--backend", f->backend, "engine: auto, reference, cpu, cuda")
      ->check(CLI::IsMember({"auto", "reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "OpenMP threads (0 = default)")->check(CLI::Range(0, 4096));
  cmd->add_option("--device", f->device, "the GPU to run on with the cuda backend")->check(CLI::Range(0, 1023));
  cmd->add_flag("--quiet,-q", f->quiet, "print only the address");
  cmd->add_flag("--check", f->check, "check everything the run would (as run --check); do not serve");
  add_live_options(cmd, *f);
  cmd->footer(
      "Prints a link http://127.0.0.1:PORT/TOKEN/ to open in a browser; Ctrl-C stops the run.\n"
      "Controls go to OUTPUT/live-actions.jsonl; heartwave run CASE --replay LOG steps them again.\n\n"
      "Examples:\n"
      "  heartwave live examples/spiral2d.toml\n"
      "  heartwave live examples/scroll3d.toml --live-port 8080 --threads 2");
  cmd->callback([f, &action] {
    action = [f]() { return run_case(*f); };
  });
}

}  // namespace hw::cli
