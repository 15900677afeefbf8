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
#include "tissue/benchmarks.hpp"

namespace hw::cli {

namespace {

struct TissueBenchFlags {
  int threads = 2;
  double seconds = 3;
};

int run_tissue_bench(const std::string& what, const TissueBenchFlags& f) {
  using namespace hw::tissue;
  const double roof = measure_copy_bandwidth_gbs(f.threads);
  std::cout << fmt::format("copy roof: {:.2f} GB/s on {} thread(s) (2 x 512 MiB float arrays)\n", roof,
                           f.threads);
  if (what == "roof") return 0;
  std::vector<std::string> names = what == "all" ? tissue_benchmark_names() : std::vector<std::string>{what};
  std::cout << fmt::format("{:<14} {:>10} {:>7} {:>8} {:>14} {:>12} {:>8} {:>9} {:>13}\n", "name", "cells",
                           "steps", "s", "cell-steps/s", "B/cell-step", "GB/s", "roof GB/s", "achieved/roof");
  std::vector<std::string> notes;
  for (const std::string& n : names) {
    const BenchResult r = run_tissue_benchmark(n, f.threads, f.seconds, 0, roof);
    std::cout << fmt::format("{:<14} {:>10} {:>7} {:>8.3f} {:>14.4g} {:>12.0f} {:>8.3f} {:>9.2f} {:>13.3f}\n",
                             r.name, r.cells, r.steps, r.seconds, r.cell_steps_per_s, r.bytes_per_cell_step,
                             r.achieved_gbs, r.roof_gbs, r.roof_gbs > 0 ? r.achieved_gbs / r.roof_gbs : 0.0)
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
  names.push_back("roof");
  names.push_back("all");
  for (const std::string& n : names) {
    const std::string help = n == "roof"  ? "Copy bandwidth of this machine (the memory roof), GB/s"
                             : n == "all" ? "The roof and every tissue case, as a table"
                                          : "Tissue case " + n + " on the cpu backend: cell-steps/s vs the roof";
    auto* cmd = bench->add_subcommand(n, help);
    auto f = std::make_shared<TissueBenchFlags>();
    cmd->add_option("--threads", f->threads, "OpenMP threads")->check(CLI::Range(1, 4096))->capture_default_str();
    cmd->add_option("--seconds", f->seconds, "timed seconds per case")->check(kPositive)->capture_default_str();
    cmd->footer("Cases and the traffic model: docs/benchmarks.md, \"Tissue (CPU)\".");
    cmd->callback([f, n, &action] { action = [f, n]() { return run_tissue_bench(n, *f); }; });
  }
}

}  // namespace hw::cli
