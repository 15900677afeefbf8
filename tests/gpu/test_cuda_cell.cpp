// The printed CUDA cell step, run on the GPU, against the IR interpreter (the oracle, which
// shares no code with the printers), for every built-in model and every CellML model in
// ../shared/models/cellml, every integrator, in double and in float: one step from many
// states (each state jittered around the model's initial values, V swept across -90..40 mV,
// or its range in a dimensionless model)
// must agree to 1e-12 (double) or 1e-5 (float) of each state's scale.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "cell/cell_setup.hpp"
#include "device/compile.hpp"
#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "model/load.hpp"

namespace fs = std::filesystem;

using hw::gpu_testing::shared_dir;
using hw::gpu_testing::test_data_dir;

namespace {

constexpr int kCells = 256;

// Built-ins, the shared CellML models, four of the stiff set with Markov chains (the
// implicit block path of grl1/grl2; Iyer 2004's chains have up to 13 states; Decker 2009
// has values a float kernel computes in double, passes/widen_for_float), Faber-Rudy 2000
// (state thresholds, passes/thresholds), the small Markov-chain test model and the window
// test model, whose every cell crosses a threshold inside the step.
std::vector<std::string> all_models() {
  std::vector<std::string> m = hw::model::builtin_model_names();
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(shared_dir()) / "models" / "cellml", ec))
    if (e.path().extension() == ".cellml") files.push_back(e.path().string());
  const fs::path data = fs::path(test_data_dir()) / "data";
  for (const char* stiff : {"bondarenko_szigeti_bett_kim_rasmusson_2004_apical", "decker_2009",
                            "faber_rudy_2000", "grandi_pasqualini_bers_2010_epi", "iyer_mazhari_winslow_2004"})
    files.push_back((data / "stiff" / (std::string(stiff) + ".cellml")).string());
  files.push_back((data / "hwm" / "markov_channel.hwm").string());
  files.push_back((data / "hwm" / "window_switch.hwm").string());
  std::sort(files.begin(), files.end());
  m.insert(m.end(), files.begin(), files.end());
  return m;
}

// States of kCells cells, SoA (state k of cell i at y[k·n + i]).
std::vector<double> start_states(const hw::cell::CellSetup& s, unsigned seed) {
  const int ns = int(s.initial_states.size());
  std::vector<double> y(std::size_t(ns) * kCells);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  for (int i = 0; i < kCells; ++i)
    for (int k = 0; k < ns; ++k) {
      double v = s.initial_states[k] * (1 + u(rng));
      if (k == s.voltage) {
        const double x = double(i) / (kCells - 1);
        const double v0 = s.initial_states[k];
        // mV models: -90..40 mV; dimensionless ones (|V| < 5, no unit): V0 − 0.2 … V0 + 1.2.
        v = s.voltage_to_mV != 1 || std::fabs(v0) >= 5 ? (-90.0 + 130.0 * x) / s.voltage_to_mV
                                                        : v0 - 0.2 + 1.4 * x;
      }
      y[std::size_t(k) * kCells + i] = v;
    }
  return y;
}

template <class Real>
struct Outcome {
  double worst = 0;           // max |gpu − ref| / scale over states, cells
  std::size_t compared = 0;   // finite reference values compared
  std::string where;
};

// The GPU these tests run on (one Device for the whole test binary).
hw::gpu::Device& mod_device() {
  static const std::shared_ptr<hw::gpu::Device> dev = hw::gpu::Device::open(0);
  return *dev;
}

template <class Real>
Outcome<Real> compare_one(const hw::model::Model& m, const hw::cell::CellSetup& setup,
                          const hw::cell::CellKernel& interp, const hw::gpu::Module& mod, int method,
                          const std::vector<double>& y0) {
  const int ns = int(setup.initial_states.size());
  const double dt = 0.01 / setup.time_to_ms, t = 1.0 / setup.time_to_ms;
  std::vector<Real> ref(y0.begin(), y0.end()), dev(y0.begin(), y0.end());
  std::vector<Real> p(setup.params.begin(), setup.params.end());
  hw::cell::Batch<Real> b{std::size_t(kCells), std::size_t(kCells), ref.data(), p.data(), false};
  interp.step(static_cast<hw::cell::Integrator>(method), Real(t), Real(dt), 1, b);
  hw::gpu::Device& gpu = mod_device();
  hw::gpu::DeviceBuffer Y = hw::gpu::DeviceBuffer::from(gpu, dev, "states"), P = hw::gpu::DeviceBuffer::from(gpu, p, "params");
  int n = kCells, steps = 1;
  Real tr = Real(t), dtr = Real(dt);
  auto yp = Y.ptr();
  auto pp = P.ptr();
  void* args[] = {&n, &steps, &method, &tr, &dtr, &yp, &pp};
  hw::gpu::launch(gpu.compute(), mod.function("hw_cell_demo_step"), {unsigned(kCells + 127) / 128, 1, 1}, {128, 1, 1}, args);
  gpu.compute().synchronize();
  Y.download(dev.data(), dev.size() * sizeof(Real));
  Outcome<Real> o;
  for (int k = 0; k < ns; ++k) {
    double scale = 0;
    for (int i = 0; i < kCells; ++i)
      if (std::isfinite(double(ref[k * kCells + i]))) scale = std::max(scale, std::fabs(double(ref[k * kCells + i])));
    if (scale == 0) scale = 1;
    for (int i = 0; i < kCells; ++i) {
      const double r = ref[k * kCells + i], d = dev[k * kCells + i];
      if (!std::isfinite(r)) continue;
      ++o.compared;
      const double e = std::isfinite(d) ? std::fabs(d - r) / scale : INFINITY;
      if (e > o.worst) {
        o.worst = e;
        o.where = setup.state_names[k] + " of cell " + std::to_string(i);
      }
    }
  }
  (void)m;
  return o;
}

template <class Real>
void check_model(const std::string& name, double tol) {
  const auto lm = hw::model::load_model(name);
  const hw::cell::CellSetup setup = hw::cell::make_cell_setup(lm.analysed, lm.stimulus);
  const auto interp = hw::model::make_interpreter(lm.analysed);
  hw::model::CudaOptions co;
  co.use_float = sizeof(Real) == 4;
  co.function_prefix = "hw_cell";
  co.force_inline = false;  // each function compiled once: the demo kernel calls every step
  hw::gpu::CudaSource src;
  src.text = hw::model::print_cuda(lm.analysed, co);
  const auto img = hw::gpu::compile_cuda(src, hw::gpu::gpu_status().device.arch());
  hw::gpu::Module mod(mod_device(), img.image);
  const std::vector<double> y0 = start_states(setup, 7);
  const std::string label = fs::path(name).stem().string();
  for (int method = 0; method < hw::cell::kIntegratorCount; ++method) {
    const auto o = compare_one<Real>(lm.analysed, setup, *interp, mod, method, y0);
    const char* integ = hw::cell::integrator_name(static_cast<hw::cell::Integrator>(method));
    std::printf("[measured] cuda cell step vs interpreter, %s %s %s: %.3g of scale (%zu values; worst %s)\n",
                label.c_str(), integ, sizeof(Real) == 4 ? "float" : "double", o.worst, o.compared, o.where.c_str());
    // Explicit steps from far-off states can overflow (then the reference is not finite
    // either and the value is not compared); most must be compared.
    EXPECT_GT(o.compared, std::size_t(setup.initial_states.size()) * kCells / 2) << label << " " << integ;
    EXPECT_LE(o.worst, tol) << label << " " << integ << ", worst " << o.where;
  }
}

// One test per model and precision, so that gpu-check can shard them over processes: each
// model's NVRTC compile is seconds of one CPU core, and the device has sixteen.
struct CellCase {
  std::string model;
  bool single;
};

void PrintTo(const CellCase& c, std::ostream* os) { *os << c.model << (c.single ? " in float" : " in double"); }

std::vector<CellCase> all_cases() {
  std::vector<CellCase> c;
  for (const std::string& m : all_models()) {
    c.push_back({m, false});
    c.push_back({m, true});
  }
  return c;
}

std::string case_name(const testing::TestParamInfo<CellCase>& info) {
  // A built-in and a shared CellML file can share a stem: a file's extension stays in its name.
  const fs::path p(info.param.model);
  std::string s = p.stem().string() + (p.has_extension() ? "_" + p.extension().string().substr(1) : "") +
                  (info.param.single ? "_float" : "_double");
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

}  // namespace

class CudaCell : public testing::TestWithParam<CellCase> {};

TEST_P(CudaCell, PrintedStepMatchesInterpreter) {
  HW_REQUIRE_GPU();
  if (GetParam().single)
    check_model<float>(GetParam().model, 1e-5);
  else
    check_model<double>(GetParam().model, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Models, CudaCell, testing::ValuesIn(all_cases()), case_name);
