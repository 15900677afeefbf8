// `heartwave bench karma2d|karma3d|tt06-3d|niederer-0.2|roof|all [--threads N] [--seconds S]`:
// tissue step throughput against the machine's copy bandwidth, measured in the same run.
//
// Why a command and not only bench/bench_tissue: docs/benchmarks.md's table must be
// reproducible by anyone with the installed binary. The cases and the roof live in
// src/tissue/benchmarks.hpp; this file only prints them.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common.hpp"
#include "core/error.hpp"
#include "gpu/driver.hpp"
#include "tissue/benchmarks.hpp"
#include "tissue/engine.hpp"

namespace hw::cli {

namespace {

struct TissueBenchFlags {
  int threads = 2;
  double seconds = 3;
  std::string backend = "auto";
};

int run_tissue_bench(const std::string& what, const TissueBenchFlags& f) {
  using namespace hw::tissue;
  std::string note;
  const Backend backend = choose_backend(f.backend, nullptr, &note);
  std::cout << note << "\n";
  const bool gpu = backend == Backend::cuda;
  const double roof = gpu ? gpu::measure_copy_roof() / 1e9 : measure_copy_bandwidth_gbs(f.threads);
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
      r = run_tissue_benchmark(n, f.threads, f.seconds, 0, roof, backend);
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
    notes.push_back(r.name + ": " + r.notes);
  }
  for (const auto& s : notes) std::cout << s << "\n";
  return 0;
}

}  // namespace

// Called by add_bench_command (cmd_bench.cpp) with its `bench` command.
void add_tissue_bench_subcommands(CLI::App* bench, Action& action) {
  std::vector<std::string> names = hw::tissue::tissue_benchmark_names();
  for (const auto& n : hw::tissue::gpu_benchmark_names()) names.push_back(n);
  names.push_back("roof");
  names.push_back("all");
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
    cmd->footer("Cases and the traffic model: docs/benchmarks.md. On the GPU, `all` adds the large cases\n"
                "karma3d-256, karma3d-512, tt06-3d-256 and niederer-0.05, and the roof is a\n"
                "device-to-device copy measured in the same run.");
    cmd->callback([f, n, &action] { action = [f, n]() { return run_tissue_bench(n, *f); }; });
  }
}

}  // namespace hw::cli
