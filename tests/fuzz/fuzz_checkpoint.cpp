// libFuzzer target for checkpoints, the file `heartwave run --restart` trusts: the frame
// reader, the run's origin in it, and the two states a restart loads (the simulation's and
// the outputs' accumulators).
//
// An input is a checkpoint file. One that starts with the byte 'F' has its frame mended
// after that byte is dropped: the payload size, the payload checksum and the header
// checksum are set to match what follows, so the fuzzer also reaches what lies behind the
// checksums (a file written by a faulty or other program, not one damaged on the way).
// What read_checkpoint accepts is loaded into a small simulation of the reference engine
// (8×4 cells of the Bueno-Orovio model, the maps, probes and a pseudo-ECG electrode) and
// its output manager, which then take two steps. Every problem must be an hw::Error;
// anything else (a sanitizer report, another exception, a timeout) is a finding.
//
// HW_FUZZ_CHECKPOINT_SEED=PATH: before fuzzing, writes a real checkpoint of that case at
// 1 ms to PATH (the seed in tests/fuzz/corpus/checkpoint was made so).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_files.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/output_manager.hpp"
#include "run/case_file.hpp"
#include "tissue/simulation.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path& dir() {
  static const fs::path d = hw_fuzz::scratch_dir("hw_fuzz_checkpoint");
  return d;
}

const char* kCase = R"(name = "fuzz_checkpoint"
[grid]
size = [8, 4, 1]
spacing = 0.25
[[model]]
name = "bueno_orovio_2008_epi"
[conductivity]
sigma_l = 0.1334
[[stimulus]]
region = { kind = "box", lo = [0, 0, 0], hi = [0.5, 1, 0.25] }
start = 0
duration = 1
amplitude_uA_per_cm3 = 100000
[time]
dt = 0.05
t_end = 3
integrator = "rl2"
[output]
directory = "out"
fields = []
activation_map = true
apd_map = true
probes = [ { name = "p", position = [1.0, 0.5, 0.1] } ]
probe_interval = 0.1
electrodes = [ { name = "e", position = [3.0, 0.5, 0.1] } ]
)";

const hw::tissue::TissueCase& the_case() {
  static const hw::tissue::TissueCase c = [] {
    hw::tissue::TissueCase t = hw::io::parse_case(kCase, (dir() / "case.toml").string());
    t.output.directory = (dir() / "out").string();
    return t;
  }();
  return c;
}

hw::tissue::SimulationOptions options() {
  hw::tissue::SimulationOptions o;
  o.backend = hw::tissue::Backend::reference;
  o.threads = 1;
  o.adapt_threads = false;
  return o;
}

void put_u64(std::string& s, std::size_t at, std::uint64_t v) { std::memcpy(s.data() + at, &v, 8); }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seed = std::getenv("HW_FUZZ_CHECKPOINT_SEED")) {
    hw::tissue::Simulation sim(the_case(), options());
    hw::io::OutputManager out(the_case(), sim);
    out.begin();
    sim.run_until(1.0, [&](const hw::tissue::Simulation&) { out.after_step(); });
    hw::io::write_checkpoint(seed, sim.save_state(), {hw::io::fnv1a64(kCase), sim.time(), sim.steps_done()},
                             out.save_state());
    std::fprintf(stderr, "fuzz_checkpoint: wrote the seed %s\n", seed);
  }
  (void)the_case();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  if (!file.empty() && file[0] == 'F') {
    file.erase(0, 1);
    if (file.size() >= 72) {
      put_u64(file, 40, file.size() - 72);
      put_u64(file, 48, hw::io::fnv1a64(file.data() + 72, file.size() - 72));
      put_u64(file, 64, hw::io::fnv1a64(file.data(), 64));
    }
  }
  const std::string path = (dir() / "run.ckpt").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
  hw::io::Checkpoint ck;
  try {
    (void)hw::io::read_checkpoint_origin(path);
    ck = hw::io::read_checkpoint(path);
  } catch (const hw::Error&) {
    return 0;
  }
  try {
    hw::tissue::Simulation sim(the_case(), options());
    sim.load_state(ck.bytes);
    hw::io::OutputManager out(the_case(), sim, &ck.outputs);
    out.begin();
    sim.run_until(sim.time() + 2 * sim.dt(), [&](const hw::tissue::Simulation&) { out.after_step(); });
  } catch (const hw::Error&) {
    // damaged states, NaN in the loaded state: located errors, not findings
  }
  return 0;
}
