// `heartwave bench karma2d|karma3d|tt06-3d|niederer-0.2|roof|all [--threads N] [--seconds S]`:
// tissue step throughput against the machine's copy bandwidth, measured in the same run.
//
// Why a command and not only bench/bench_tissue: docs/benchmarks.md's table must be
// reproducible by anyone with the installed binary. The cases and the roof live in
// src/tissue/benchmarks.hpp; this file only prints them.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "comm/world.hpp"
#include "common.hpp"
#include "ranks.hpp"
#include "core/error.hpp"
#include "device/device.hpp"
#include "parallel/competing_load.hpp"
#include "parallel/team.hpp"
#include "run/run.hpp"
#include "tissue/benchmarks.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"

namespace hw::cli {

namespace {

// A case larger than the host's free memory (karma3d-1024 on a workstation: about 47 GB on
// the host for each rank at its peak) would be killed by the kernel part-way through its
// set-up: refused here, with what it needs, as `heartwave run` refuses one.
void check_host_memory(const std::string& name) {
  const std::size_t available = run::available_memory_bytes();
  if (available == 0) return;
  const std::size_t ranks = std::size_t(std::max(1, comm::world().local_size()));
  const std::size_t need = tissue::estimate_memory(tissue::tissue_benchmark_case(name, 0)).peak() * ranks;
  if (need > available)
    throw InputError(SourceLoc{}, fmt::format("benchmark {} needs {:.1f} GB of host memory ({} rank(s) on this host, "
                                              "each holding the whole grid) but {:.1f} GB is available (MemAvailable): "
                                              "run it on a larger machine",
                                              name, double(need) / 1e9, ranks, double(available) / 1e9));
}

struct TissueBenchFlags {
  int threads = 2;
  double seconds = 3;
  std::string backend = "auto";
  int ranks = 0;  // --ranks / --gpus: one run split over this many ranks (mpirun started here)
  std::string cell_maths = "exact";
};

int run_tissue_bench(const std::string& what, const TissueBenchFlags& f) {
  using namespace hw::tissue;
  // Split (docs/parallel.md): this command again under mpirun; each case then runs split
  // over the ranks, one GPU each with cuda, and rank 0 prints.
  if (f.ranks > 1 && comm::world().size() == 1 && comm::launcher_ranks() == 0) return launch_ranks(f.ranks);
  const comm::Communicator& world = comm::world();
  if (world.rank() != 0) std::cout.setstate(std::ios::failbit);
  std::string note;
  const Backend backend = choose_backend(f.backend, &note);
  std::cout << note << "\n";
  if (world.size() > 1) std::cout << fmt::format("split over {} ranks ({})\n", world.size(), world.describe());
  const bool gpu = backend == Backend::cuda;
  const double roof = gpu ? gpu::measure_copy_roof(*gpu::Device::open(world.local_rank())) / 1e9
                          : measure_copy_bandwidth_gbs(f.threads);
  std::cout << (gpu ? fmt::format("copy roof: {:.2f} GB/s (device-to-device copy of 1 GiB, read + write, median of 20)\n", roof)
                    : fmt::format("copy roof: {:.2f} GB/s on {} thread(s) (2 x 512 MiB float arrays)\n", roof,
                                  f.threads));
  if (what == "roof") return 0;
  std::vector<std::string> names = {what};
  if (what == "all") {
    names = tissue_benchmark_names();
    if (gpu)
      for (const auto& n : gpu_benchmark_names()) names.push_back(n);
  }
  std::cout << fmt::format("{:<14} {:>10} {:>7} {:>8} {:>14} {:>10} {:>10} {:>6} {:>9} {:>9} {:>8}\n", "name",
                           "cells", "steps", "s", "cell-steps/s", "steps/s", "wall/sim-s", "B/c-s", "GB/s",
                           "roof GB/s", "ach/roof");
  std::vector<std::string> notes;
  for (const std::string& n : names) {
    BenchResult r;
    try {
      check_host_memory(n);
      r = run_tissue_benchmark(n, {.backend = backend, .threads = f.threads, .seconds = f.seconds, .roof_gbs = roof,
                                   .cell_maths = cell_maths_of(f.cell_maths)});
    } catch (const InputError& e) {
      if (what != "all") throw;
      std::cout << fmt::format("{:<14} skipped: {}\n", n, e.diagnostics().empty() ? e.what() : e.diagnostics()[0].message);
      continue;
    }
    std::cout << fmt::format("{:<14} {:>10} {:>7} {:>8.3f} {:>14.4g} {:>10.4g} {:>10.4g} {:>6.0f} {:>9.1f} {:>9.1f} {:>8.3f}\n",
                             r.name, r.cells, r.steps, r.seconds, r.cell_steps_per_s, r.steps_per_s,
                             r.wall_per_simulated_s, r.bytes_per_cell_step, r.achieved_gbs, r.roof_gbs,
                             r.roof_gbs > 0 ? r.achieved_gbs / r.roof_gbs : 0.0)
              << std::flush;
    std::string team;
    if (!gpu)  // what the adaptive team did: a row beside a busy program is read with it
      team = fmt::format("; mean team {:.2f} thread(s) of {}, stepping thread moved {} time(s)", r.threads,
                         f.threads, r.thread_moves);
    notes.push_back(r.name + ": " + r.notes + team);
  }
  for (const auto& s : notes) std::cout << s << "\n";
  return 0;
}

struct LoadBenchFlags {
  int threads = 0;
  double seconds = 10;  // runs of minutes are what a busy machine slows: long rows, 2 s warm-up
  std::vector<std::string> cases = {"karma2d", "tt06-3d"};
  std::vector<int> competitors = {0, 1, 2};
  bool pin = false;
};

// `bench load`: each case with 1 thread, N fixed and N adaptive threads, on a quiet machine
// and beside busy processes this command starts (docs/benchmarks.md, "A busy machine").
int run_load_bench(const LoadBenchFlags& f) {
  using namespace hw::tissue;
  const int n = f.threads > 0 ? f.threads : par::usable_cores();
  std::cout << fmt::format("load benchmark on the cpu backend: {} usable core(s), up to {} threads, {} s per row;\n"
                           "competing processes spin on one core each{}, started by this command\n",
                           par::usable_cores(), n, f.seconds, f.pin ? " (pinned, the last CPU first)" : "");
  struct Config {
    int threads;
    bool adapt;
    std::string label;
  };
  std::vector<Config> configs = {{1, false, "1"}};
  if (n > 1) {
    configs.push_back({n, false, fmt::format("{} fixed", n)});
    configs.push_back({n, true, fmt::format("{} adaptive", n)});
  }
  std::cout << fmt::format("{:<10} {:>9} {:>12} {:>14} {:>10} {:>12} {:>6}\n", "case", "competing", "threads",
                           "cell-steps/s", "mean team", "vs quiet " + std::to_string(n), "moved");
  for (const std::string& name : f.cases) {
    double quiet_n = 0;
    for (const int busy : f.competitors) {
      // Bounded by time even if this process were stopped before it ends them.
      const par::CompetingLoad load(busy, (f.seconds + 30) * double(configs.size()) + 60, f.pin);
      double one = 0, adaptive = 0;
      for (const Config& c : configs) {
        const BenchResult r = run_tissue_benchmark(name, {.threads = c.threads,
                                                                    .adapt_threads = c.adapt,
                                                                    .seconds = f.seconds,
                                                                    .warmup_seconds = 2.0,
                                                                    .roof_gbs = 0});
        if (c.threads == 1) one = r.cell_steps_per_s;
        if (busy == 0 && c.threads == n && !c.adapt) quiet_n = r.cell_steps_per_s;
        if (c.adapt) adaptive = r.cell_steps_per_s;
        std::cout << fmt::format("{:<10} {:>9} {:>12} {:>14.4g} {:>10.2f} {:>12.2f} {:>6}\n", name, busy, c.label,
                                 r.cell_steps_per_s, r.threads, quiet_n > 0 ? r.cell_steps_per_s / quiet_n : 0.0,
                                 r.thread_moves)
                  << std::flush;
      }
      if (busy > 0 && n > 1 && quiet_n > 0)
        std::cout << fmt::format("{:<10} {:>9} {:>12} adaptive {:.2f}x quiet {}-thread (target >= 0.45), "
                                 "{:.2f}x 1 thread under the same load (target >= 1)\n",
                                 name, busy, "", adaptive / quiet_n, n, one > 0 ? adaptive / one : 0.0);
    }
  }
  return 0;
}

}  // namespace

// Called by add_bench_command (cmd_bench.cpp) with its `bench` command.
void add_tissue_bench_subcommands(CLI::App* bench, Action& action) {
  std::vector<std::string> names = hw::tissue::tissue_benchmark_names();
  auto gpu_names = hw::tissue::gpu_benchmark_names();
  for (const auto& n : hw::tissue::large_gpu_benchmark_names()) gpu_names.push_back(n);
  for (const auto& n : gpu_names) names.push_back(n);
  // The GPU sizes take minutes on a cpu: their examples ask for the GPU.
  const auto gpu_case = [gpu_names](const std::string& n) {
    return std::find(gpu_names.begin(), gpu_names.end(), n) != gpu_names.end();
  };
  names.push_back("roof");
  names.push_back("all");
  {
    auto* cmd = bench->add_subcommand("load", "Tissue speed with 1 and N threads beside busy processes it starts");
    auto f = std::make_shared<LoadBenchFlags>();
    cmd->add_option("--threads", f->threads, "threads N to compare with 1 (0: the cores this process may use)")
        ->check(CLI::Range(0, 4096))
        ->capture_default_str();
    cmd->add_option("--seconds", f->seconds, "timed seconds per row")->check(kPositive)->capture_default_str();
    cmd->add_option("--cases", f->cases, "tissue benchmark cases")->delimiter(',')->capture_default_str();
    cmd->add_option("--competing", f->competitors, "numbers of busy processes to run beside")
        ->delimiter(',')
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    cmd->add_flag("--pin", f->pin,
                  "pin each busy process to one of this process's CPUs (the last first), as a user's program "
                  "started with taskset is");
    cmd->footer("Each case runs with 1 thread, N threads fixed and N threads adaptive (the default of `run`:\n"
                "fewer threads while that is faster), first on its own, then beside 1 and 2 processes that\n"
                "each keep a core busy. Cpu backend only. Results: docs/benchmarks.md, \"A busy machine\".\n"
                "Example:\n  heartwave bench load --seconds 0.5 --cases karma2d --competing 0,1");
    cmd->callback([f, &action] { action = [f]() { return run_load_bench(*f); }; });
  }
  for (const std::string& n : names) {
    const std::string help = n == "roof"  ? "Copy bandwidth of this machine (the memory roof), GB/s"
                             : n == "all" ? "The roof and every tissue case, as a table"
                                          : "Tissue case " + n + ": cell-steps/s vs the roof";
    auto* cmd = bench->add_subcommand(n, help);
    auto f = std::make_shared<TissueBenchFlags>();
    cmd->add_option("--threads", f->threads, "OpenMP threads")->check(CLI::Range(1, 4096))->capture_default_str();
    cmd->add_option("--seconds", f->seconds, "timed seconds per case")->check(kPositive)->capture_default_str();
    cmd->add_option("--backend", f->backend, "auto (the GPU where one is found, else cpu), cpu, cuda, reference")
        ->check(CLI::IsMember({"auto", "reference", "cpu", "cuda"}))
        ->capture_default_str();
    cmd->add_option("--ranks", f->ranks, "each case as one run split over N MPI ranks (starts mpirun)")
        ->check(CLI::Range(1, 65536))
        ->type_name("N");
    auto* gpus = cmd->add_option("--gpus", "each case as one run split over N GPUs of this machine (--ranks N, "
                                           "--backend cuda)")
                     ->check(CLI::Range(1, 1024))
                     ->type_name("N");
    add_cell_maths_option(cmd, f->cell_maths, "each case's tissue kernel (time.cell_maths)");
    cmd->footer("Cases and the traffic model: docs/benchmarks.md. On the GPU, `all` adds the large cases\n"
                "karma3d-256, karma3d-512, tt06-3d-256 and niederer-0.05, and the roof is a\n"
                "device-to-device copy measured in the same run.\n"
                "Example:\n  heartwave bench " + n + (gpu_case(n) ? " --backend cuda" : n == "roof" ? "" : " --seconds 0.5"));
    cmd->callback([f, n, gpus, &action] {
      if (gpus->count()) {
        f->ranks = gpus->as<int>();
        f->backend = "cuda";
      }
      action = [f, n]() { return run_tissue_bench(n, *f); };
    });
  }
}

}  // namespace hw::cli
