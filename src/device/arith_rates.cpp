// See arith_rates.hpp.
#include "device/arith_rates.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/compile.hpp"
#include "device/device.hpp"

namespace hw::gpu {

namespace {

// Each chain's step x -> f(x), chosen so that x stays in the function's normal range (a
// contraction to a fixed point away from 0, no subnormals, no NaN). Written for T = float or
// double; NAME is replaced by the C function of the precision (expf / exp).
struct Chain {
  const char* name;
  const char* step;  // an expression in x
};
const Chain kChains[] = {
    {"fma", "x * T(0.999) + T(0.001)"},
    {"div", "T(1) / (x + T(1.5))"},
    // By a literal: what the compiler makes of it (a multiplication by the reciprocal where
    // the division need not be correctly rounded, float kernels; a division otherwise).
    {"div_literal", "x / T(1.7) + T(0.3)"},
    {"exp", "exp@(x * T(-0.5))"},
    {"expm1", "expm1@(x * T(-0.5))"},
    {"log", "log@(x + T(2))"},
    {"log10", "log10@(x + T(2))"},
    {"pow", "pow@(x + T(1.5), T(0.7))"},
    {"sqrt", "sqrt@(x + T(1))"},
    {"fmod", "fmod@(x + T(3.3), T(1.7))"},
    {"sin", "sin@(x + T(1))"},
    {"cos", "cos@(x + T(1))"},
    {"tan", "tan@(x * T(0.5) + T(0.1))"},
    {"asin", "asin@(x * T(0.5) + T(0.1))"},
    {"acos", "acos@(x * T(0.3))"},
    {"atan", "atan@(x + T(1))"},
    {"sinh", "sinh@(T(0.5) - x * T(0.5))"},
    {"cosh", "cosh@(x * T(0.5))"},
    {"tanh", "tanh@(x + T(0.5))"},
    {"asinh", "asinh@(x + T(1))"},
    {"acosh", "acosh@(x + T(1.5))"},
    {"atanh", "atanh@(x * T(0.5) + T(0.25))"},
};
constexpr int kChainsPerThread = 8, kIterations = 512, kThreads = 256;

std::string kernel_source(bool f32, const std::vector<const Chain*>& chains) {
  const char* real = f32 ? "float" : "double";
  std::string t = fmt::format("typedef {} T;\n", real);
  for (const Chain* c : chains) {
    std::string step = c->step;
    for (std::size_t p; (p = step.find('@')) != std::string::npos;) step.replace(p, 1, f32 ? "f" : "");
    t += fmt::format(
        "extern \"C\" __global__ void __launch_bounds__({0}) rate_{1}(T* out, int iterations) {{\n"
        "  T v[{2}];\n"
        "#pragma unroll\n"
        "  for (int k = 0; k < {2}; ++k) v[k] = T(0.3) + T(0.01) * T(k) + T(1e-4) * T(threadIdx.x & 31);\n"
        "#pragma unroll 4\n"
        "  for (int i = 0; i < iterations; ++i) {{\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < {2}; ++k) {{ const T x = v[k]; v[k] = {3}; }}\n"
        "  }}\n"
        "  T s = T(0);\n"
        "#pragma unroll\n"
        "  for (int k = 0; k < {2}; ++k) s += v[k];\n"
        "  out[blockIdx.x * blockDim.x + threadIdx.x] = s;\n}}\n",
        kThreads, c->name, kChainsPerThread, step);
  }
  return t;
}

}  // namespace

double ArithmeticRates::flops() const {
  auto it = per_second.find("fma");
  return it == per_second.end() ? 0.0 : 2 * it->second;
}

ArithmeticRates measure_arithmetic_rates(Device& dev, bool f32, const std::vector<std::string>& specials) {
  std::vector<const Chain*> chains;
  auto want = [&](const std::string& name) {
    for (const Chain& c : kChains)
      if (name == c.name) {
        if (std::find(chains.begin(), chains.end(), &c) == chains.end()) chains.push_back(&c);
        return;
      }
    throw Error(fmt::format("measuring the device's arithmetic: no measurement for '{}'", name));
  };
  want("fma");
  want("div");
  want("div_literal");
  for (const auto& s : specials) want(s);
  CudaSource src;
  src.name = "heartwave_arith_rates.cu";
  src.text = kernel_source(f32, chains);
  if (f32) src.options = float_kernel_options();
  const CompiledImage image = compile_cuda(src, dev.info().arch());
  const Module module(dev, image.image);
  const unsigned blocks = unsigned(std::max(1, dev.info().multiprocessors)) * 32;
  DeviceBuffer out(dev, std::size_t(blocks) * kThreads * (f32 ? 4 : 8), "the arithmetic rates' output");
  ArithmeticRates r;
  r.precision = f32 ? "float" : "double";
  const Stream& on = dev.compute();
  Timer timer(on);
  for (const Chain* c : chains) {
    void* fn = module.function(std::string("rate_") + c->name);
    DevicePtr p = out.ptr();
    int iterations = kIterations;
    void* args[] = {&p, &iterations};
    launch(on, fn, {blocks, 1, 1}, {unsigned(kThreads), 1, 1}, args);  // warm-up: clocks up, module loaded
    double best_ms = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      timer.start();
      launch(on, fn, {blocks, 1, 1}, {unsigned(kThreads), 1, 1}, args);
      best_ms = std::min(best_ms, timer.stop_ms());
    }
    const double ops = double(blocks) * kThreads * kChainsPerThread * kIterations;
    r.per_second[c->name] = ops / (best_ms * 1e-3);
  }
  return r;
}

ComputeRoof compute_roof(const model::OpCount& ops, const ArithmeticRates& rates) {
  auto rate = [&](const std::string& name) {
    auto it = rates.per_second.find(name);
    if (it == rates.per_second.end() || !(it->second > 0))
      throw Error(fmt::format("compute roof: no measured rate for '{}'", name));
    return it->second;
  };
  ComputeRoof r;
  auto& s = r.seconds;
  s["flops"] = ops.flops / rates.flops();
  s["select"] = ops.selects / rate("fma");
  if (rates.precision == "float") {
    // One reciprocal per distinct y, x/y = x·(1/y): an upper bound, as a roof must be. The
    // compiled kernel takes one per division (-prec-div=false: scale, MUFU.RCP, multiply);
    // sharing them by printing x·rcp(y) was measured to move float results by up to 60x
    // more than division does (docs/benchmarks.md), so the kernels do not.
    s["div"] = ops.distinct_divisors / rate("div");
    s["flops"] += ops.divisions / rates.flops();
  } else {
    s["div"] = ops.divisions / rate("div");
  }
  s["div by literal"] = ops.constant_divisions / rate("div_literal");
  for (const auto& [name, n] : ops.specials) s[name] = n / rate(name);
  double arithmetic = 0, special = 0;
  for (const auto& [name, t] : s) (name == "flops" || name == "select" || name == "div by literal" ? arithmetic : special) += t;
  r.roof = std::max(arithmetic, special) > 0 ? 1 / std::max(arithmetic, special) : 0;
  r.serial = arithmetic + special > 0 ? 1 / (arithmetic + special) : 0;
  return r;
}

}  // namespace hw::gpu
