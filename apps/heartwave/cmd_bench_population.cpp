// `heartwave bench population`: a population of cells on the GPU against a compute roof.
//
// Why its own roof: a population moves little memory (each cell's state stays in registers
// for a whole launch of up to thousands of steps), so the copy roof of the tissue benchmarks
// says nothing about it. What bounds it is arithmetic: the operations of one cell-step,
// counted from the printed kernel (`model inspect`), at the device's rates for each, measured
// in the same run (device/arith_rates.hpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cell/population.hpp"
#include "cell/population_gpu.hpp"
#include "common.hpp"
#include "device/arith_rates.hpp"
#include "device/device.hpp"
#include "model/emit/op_count.hpp"
#include "model/passes/specialise.hpp"
#include "run/cell_run.hpp"

namespace hw::cli {

namespace {

struct BenchPopulationFlags {
  std::string model = "ohara_rudy_2011_endo";
  std::size_t cells = 1000000;
  std::string integrator = "rl1";
  double dt = 0.01, bcl = 400;
  int beats = 1;
  std::string precision = "float";
  std::string cell_maths = "exact";
  std::vector<std::string> vary{"GKr_b=0.5:1.5"};
};

int run_bench_population(const BenchPopulationFlags& f) {
  const gpu::GpuStatus& g = gpu::gpu_status();
  if (!g.usable) throw Error("heartwave bench population runs on the GPU: " + g.why);
  const model::LoadedModel lm = model::load_model(f.model);
  const cell::CellSetup setup = cell::make_cell_setup(lm.analysed, lm.stimulus);
  const cell::StimulusTrain train =
      cell::StimulusTrain::periodic(f.bcl, f.beats, lm.stimulus.default_duration_ms.value_or(1.0));
  std::vector<cell::ParameterRange> ranges;
  for (const auto& v : f.vary) ranges.push_back(cell::parse_range(v, false));
  const cell::PopulationDesign design = cell::random_design(ranges, f.cells, 1, true);
  cell::PopulationOptions o;
  o.solver.method = run::parse_integrator(f.integrator);
  o.solver.dt_ms = f.dt;
  o.solver.single_precision = f.precision == "float";
  o.solver.cell_maths = cell_maths_of(f.cell_maths);
  if (o.solver.cell_maths.fast && !o.solver.single_precision)
    throw InputError(SourceLoc{}, "--cell-maths " + f.cell_maths + " with --precision double: the fast intrinsics are float only");

  // The operations of the kernel as compiled: the model with its fixed parameters folded in.
  const model::Model specialised =
      model::specialise_parameters(lm.analysed, cell::population_fixed_parameters(setup, design));
  const model::OpCount ops = model::count_operations(specialised, o.solver.method);
  std::vector<std::string> specials;
  for (const auto& [name, n] : ops.specials) specials.push_back(name);
  const gpu::ArithmeticRates rates = gpu::measure_arithmetic_rates(*gpu::Device::open(0), o.solver.single_precision, specials);
  const gpu::ComputeRoof roof = gpu::compute_roof(ops, rates);

  std::cout << fmt::format("population: {} cells of {} ({} states), {} {}, dt {} ms, {} beat(s) of {} ms, on {} ({})\n",
                           f.cells, lm.analysed.name, lm.analysed.states.size(), f.integrator, f.precision, f.dt,
                           f.beats, f.bcl, g.device.name, g.device.arch());
  std::cout << std::flush;
  cell::GpuPopulationInfo info;
  const cell::PopulationResult r = cell::run_population_gpu(lm.analysed, setup, design, train, o, &info);
  const double steps = f.beats * f.bcl / f.dt;
  const double cell_steps = steps * double(f.cells);
  const double achieved = cell_steps / (info.device_ms * 1e-3);
  std::size_t finite = 0;
  for (const auto& b : r.last_beat) finite += std::isfinite(b.apd90);

  std::cout << fmt::format("kernel: {}\n", info.kernel);
  std::cout << fmt::format("operations per cell-step (the kernel's model, fixed parameters folded): {}\n", ops.str());
  if (!o.solver.cell_maths.exact())
    std::cout << "  (these are the exact maths' operations: the kernel computes " << f.cell_maths
              << " maths instead, so the roof below is the exact kernel's)\n";
  std::cout << fmt::format("device rates ({}, measured now; per second): {:.3g} flops (2 per FMA)", rates.precision,
                           rates.flops());
  for (const auto& [name, v] : rates.per_second)
    if (name != "fma") std::cout << fmt::format(", {} {:.3g}", name, v);
  std::cout << "\ntime per cell-step at those rates, ps:";
  for (const auto& [name, t] : roof.seconds)
    if (t > 0) std::cout << fmt::format(" {} {:.1f}", name, t * 1e12);
  std::cout << fmt::format("\ncompute roof {:.4g} cell-steps/s (arithmetic and special functions overlapped; "
                           "{:.4g} one after the other)\n", roof.roof, roof.serial);
  std::cout << fmt::format("{:<20} {:>10} {:>12} {:>14} {:>14} {:>10}\n", "case", "cells", "device s", "cell-steps/s",
                           "roof", "ach/roof");
  std::cout << fmt::format("{:<20} {:>10} {:>12.3f} {:>14.4g} {:>14.4g} {:>10.3f}\n",
                           fmt::format("population-{}", f.model), f.cells, info.device_ms * 1e-3, achieved, roof.roof,
                           roof.roof > 0 ? achieved / roof.roof : 0.0);
  std::cout << fmt::format("{} of {} cells have a finite APD90 in the last beat\n", finite, f.cells);
  if (info.nonfinite > 0) {
    // The kernel has no NaN policy: such cells run on in NaN arithmetic, so the time above
    // is not this model's, and the ratio to its roof means nothing.
    std::cout << fmt::format(
        "error: {} of {} cells went non-finite (NaN or inf) with {} at dt {} ms: the time above was spent on NaN "
        "arithmetic, not on the model's maths, so it is no measure against the roof; try -i grl1 (or rl2, grl2) or "
        "a smaller --dt\n",
        info.nonfinite, f.cells, f.integrator, f.dt);
    return 1;
  }
  return 0;
}

}  // namespace

void add_population_bench_subcommand(CLI::App* bench, Action& action) {
  auto* cmd = bench->add_subcommand("population", "A population of cells on the GPU against a compute roof");
  auto f = std::make_shared<BenchPopulationFlags>();
  cmd->add_option("model", f->model, "built-in model or model file")->capture_default_str();
  cmd->add_option("--cells", f->cells, "cells")->check(CLI::Range(std::size_t(1), std::size_t(1) << 31))
      ->capture_default_str();
  cmd->add_option("--integrator,-i", f->integrator, "fixed-step integrator")->capture_default_str();
  cmd->add_option("--dt", f->dt, "time step, ms")->check(kPositive)->capture_default_str();
  cmd->add_option("--bcl", f->bcl, "pacing cycle length, ms")->check(kPositive)->capture_default_str();
  cmd->add_option("--beats", f->beats, "beats")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--precision", f->precision, "float or double")
      ->check(CLI::IsMember({"float", "double"}))->capture_default_str();
  add_cell_maths_option(cmd, f->cell_maths, "the population's kernel");
  cmd->add_option("--vary", f->vary, "NAME=LO:HI scale factors, Latin hypercube (repeatable)")->capture_default_str();
  cmd->footer(
      "Runs the population with `heartwave sweep`'s GPU kernel, timed on the device, and compares it\n"
      "with a compute roof: the operations of one cell-step (as `model inspect` counts them, on the\n"
      "model with the parameters no cell varies folded in) at the device's rates for FMA, division\n"
      "and each special function, measured in the same run. A run in which any cell's state goes\n"
      "non-finite (an integrator or dt the model does not hold) says so and exits with status 1.\n"
      "Example:\n  heartwave bench population ohara_rudy_2011_endo --cells 1000000 --vary GKr_b=0.5:1.5");
  cmd->callback([f, &action] {
    action = [f]() { return run_bench_population(*f); };
  });
}

}  // namespace hw::cli
