// Cell-model step cost: a program that prints a table, never a test.
//
//   build/bench/bench_cell                       # everything
//   build/bench/bench_cell --benchmark_filter=Population
//
// BM_CellStep: one cell advanced by dt = 0.01 ms, per model × integrator × kernel
//   (generated C++ compiled at build time vs the IR interpreter); ns per step.
// BM_Population: 10^6 cells in structure-of-arrays, split across OpenMP threads; cell-steps/s.
// The model is paced at its resting state, then run from a mid-upstroke state so that the
// work is representative (no shortcut through a quiescent cell).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cell_kernel.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"

namespace {

using hw::cell::Batch;
using hw::cell::CellKernel;
using hw::cell::Integrator;

struct Prepared {
  hw::model::LoadedModel loaded;
  std::unique_ptr<CellKernel> kernel;
  std::string how;
};

// Models are loaded and kernels built once per (model, kernel kind).
Prepared& prepared(const std::string& model, hw::model::KernelChoice choice) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<Prepared>> cache;
  auto key = std::make_pair(model, static_cast<int>(choice));
  auto& slot = cache[key];
  if (!slot) {
    slot = std::make_unique<Prepared>();
    slot->loaded = hw::model::load_model(model);
    slot->kernel = hw::model::make_kernel(slot->loaded.analysed, choice, &slot->how);
  }
  return *slot;
}

std::vector<double> initial_states(const hw::model::Model& m) {
  std::vector<double> y;
  for (const auto& s : m.states) y.push_back(s.initial);
  return y;
}

std::vector<double> default_params(const hw::model::Model& m) {
  std::vector<double> p;
  for (const auto& q : m.parameters) p.push_back(q.value);
  return p;
}

const char* const kModels[] = {"tentusscher_2006_epi", "ohara_rudy_2011_endo"};

void BM_CellStep(benchmark::State& state, std::string model, Integrator method,
                 hw::model::KernelChoice choice) {
  Prepared& pr = prepared(model, choice);
  const auto& m = pr.loaded.analysed;
  std::vector<double> y = initial_states(m), p = default_params(m);
  Batch<double> b;
  b.n = 1;
  b.stride = 1;
  b.y = y.data();
  b.p = p.data();
  const double dt = 0.01 / m.roles.time_to_ms;
  const int steps = 100;
  double t = 0;
  for (auto _ : state) {
    pr.kernel->step(method, t, dt, steps, b);
    t += steps * dt;
    if (t > 400 / m.roles.time_to_ms) {  // stay within one action potential's dynamics
      const std::vector<double> y0 = initial_states(m);
      std::copy(y0.begin(), y0.end(), y.begin());  // in place: b.y points into y
      t = 0;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * steps);
  state.counters["ns/step"] = benchmark::Counter(
      static_cast<double>(state.iterations() * steps),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(pr.how);
}

// 10^6 independent cells, uniform parameters, RL2 at 0.01 ms, float or double; the
// batch is cut into one contiguous chunk per thread (SoA with a common stride).
template <class Real>
void BM_Population(benchmark::State& state, std::string model) {
  Prepared& pr = prepared(model, hw::model::KernelChoice::automatic);
  const auto& m = pr.loaded.analysed;
  const std::size_t n = 1'000'000;
  const int ns = static_cast<int>(m.states.size());
  std::vector<Real> y(static_cast<std::size_t>(ns) * n);
  std::vector<Real> p;
  for (double v : default_params(m)) p.push_back(static_cast<Real>(v));
  std::vector<double> y0 = initial_states(m);
  for (int k = 0; k < ns; ++k)
    for (std::size_t i = 0; i < n; ++i) y[k * n + i] = static_cast<Real>(y0[k]);
  const Real dt = static_cast<Real>(0.01 / m.roles.time_to_ms);
  const int steps = 10;
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    {
      const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::size_t lo = n * tid / nt, hi = n * (tid + 1) / nt;
      Batch<Real> b;
      b.n = hi - lo;
      b.stride = n;
      b.y = y.data() + lo;
      b.p = p.data();
      pr.kernel->step(Integrator::rl2, Real(0), dt, steps, b);
    }
  }
  state.counters["cell-steps/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * n * steps, benchmark::Counter::kIsRate);
  state.SetLabel(pr.how);
}

const bool registered = [] {
  using hw::model::KernelChoice;
  const std::pair<const char*, KernelChoice> kinds[] = {{"compiled", KernelChoice::automatic},
                                                        {"interpreter", KernelChoice::interpreter}};
  for (const char* model : kModels)
    for (int i = 0; i < hw::cell::kIntegratorCount; ++i)
      for (const auto& [kind, choice] : kinds) {
        const auto method = static_cast<Integrator>(i);
        const std::string name = std::string("BM_CellStep/") + model + "/" +
                                 hw::cell::integrator_name(method) + "/" + kind;
        benchmark::RegisterBenchmark(name.c_str(), BM_CellStep, std::string(model), method,
                                     choice)
            ->MinTime(0.2);
      }
  for (const char* model : kModels) {
    benchmark::RegisterBenchmark((std::string("BM_Population/") + model + "/double").c_str(),
                                 BM_Population<double>, std::string(model))
        ->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
    benchmark::RegisterBenchmark((std::string("BM_Population/") + model + "/float").c_str(),
                                 BM_Population<float>, std::string(model))
        ->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
