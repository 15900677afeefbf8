// The device's arithmetic rates, measured: the peak a compute roof is made of.
//
// Why measured and not taken from a data sheet: a special function (expf, powf, tanhf) is a
// sequence of instructions whose length depends on the compiler, the flags (our float
// kernels' -ftz and -prec-div=false) and the architecture, and the clock a data sheet
// quotes is not the one a loaded device holds. A kernel of independent chains of one
// operation, at full occupancy, measures each rate as the cell kernels would see it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "model/emit/op_count.hpp"

namespace hw::gpu {

struct ArithmeticRates {
  std::string precision;                  // "float" or "double"
  std::map<std::string, double> per_second;  // "fma" (FMA instructions), "div", "exp", ...: per second
  // Peak flops: two per FMA.
  double flops() const;
};

// Measures the FMA and division rates and those of `specials` (names as OpCount's: exp,
// expm1, log, pow, sqrt, tanh, ...) in float or double, compiled as the cell kernels are.
// Throws hw::Error for a function it has no chain for.
ArithmeticRates measure_arithmetic_rates(Device& dev, bool f32, const std::vector<std::string>& specials);

// The compute roof of a cell-step, from its operations at the measured rates (flops paired
// into FMAs, every select as one instruction, each special-function call at its own rate; in
// float a division is a multiplication by a reciprocal, one reciprocal per distinct divisor).
struct ComputeRoof {
  // Cell-steps per second with the arithmetic (flops, selects) and the special functions
  // (with divisions) overlapped: 1 / max(t_arithmetic, t_special). An upper bound: whatever
  // pipe each special function keeps busy, a cell-step needs at least the larger of the two.
  double roof = 0;
  // The same with nothing overlapped, 1 / (t_arithmetic + t_special): what a kernel that
  // issued one kind at a time would reach. Measured kernels land between the two.
  double serial = 0;
  std::map<std::string, double> seconds;  // per class ("flops", "select", "div", "exp", ...)
};
ComputeRoof compute_roof(const model::OpCount& ops, const ArithmeticRates& rates);

}  // namespace hw::gpu
