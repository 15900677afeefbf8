// Tissue step throughput on the cpu backend against a memory-bandwidth roof: a program that
// prints a table, never a test.
//
//   build/bench/bench_tissue                                  # every case, 2 threads
//   build/bench/bench_tissue --benchmark_filter=karma2d
//   HW_BENCH_THREADS=1 build/bench/bench_tissue
//
// BM_Roof: STREAM-style copy bandwidth (measure_copy_bandwidth_gbs), GB/s counter.
// BM_Tissue/<case>: the named cases of src/tissue/benchmarks.hpp, one Google Benchmark
//   iteration = one run_tissue_benchmark call of ~2 s; counters cell-steps/s, B/cell-step,
//   GB/s and achieved/roof (roof measured once per process). `heartwave bench` prints the
//   same numbers; docs/benchmarks.md "Tissue (CPU)" has the table.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "tissue/benchmarks.hpp"

namespace {

int threads() {
  const char* e = std::getenv("HW_BENCH_THREADS");
  return e ? std::atoi(e) : 2;
}

double roof() {
  static const double r = hw::tissue::measure_copy_bandwidth_gbs(threads());
  return r;
}

void BM_Roof(benchmark::State& state) {
  double gbs = 0;
  for (auto _ : state) gbs = hw::tissue::measure_copy_bandwidth_gbs(threads());
  state.counters["GB/s"] = gbs;
  state.counters["threads"] = threads();
}

void BM_Tissue(benchmark::State& state, const std::string& name) {
  hw::tissue::BenchResult r;
  const double rf = roof();
  for (auto _ : state) r = hw::tissue::run_tissue_benchmark(name, {.threads = threads(), .seconds = 2.0, .roof_gbs = rf});
  state.counters["cells"] = double(r.cells);
  state.counters["cell-steps/s"] = r.cell_steps_per_s;
  state.counters["B/cell-step"] = r.bytes_per_cell_step;
  state.counters["GB/s"] = r.achieved_gbs;
  state.counters["roof GB/s"] = r.roof_gbs;
  state.counters["achieved/roof"] = r.roof_gbs > 0 ? r.achieved_gbs / r.roof_gbs : 0;
  state.SetLabel(r.notes);
}

const int registered = [] {
  benchmark::RegisterBenchmark("BM_Roof", BM_Roof)->Iterations(1)->Unit(benchmark::kMillisecond);
  for (const std::string& n : hw::tissue::tissue_benchmark_names())
    benchmark::RegisterBenchmark(("BM_Tissue/" + n).c_str(), BM_Tissue, n)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
