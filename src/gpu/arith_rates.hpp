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
// Throws hw::Error for a function it has no chain for, or without a usable GPU.
ArithmeticRates measure_arithmetic_rates(bool f32, const std::vector<std::string>& specials);

// The compute roof of a cell-step in cell-steps per second: the time of its operations at
// the measured rates, added (flops paired into FMAs, every select as one instruction, each
// division and special-function call at its own rate). An upper bound on speed for a
// kernel that did nothing but its arithmetic; `shares` (optional) gets each class's part.
double compute_roof(const model::OpCount& ops, const ArithmeticRates& rates,
                    std::map<std::string, double>* shares = nullptr);

}  // namespace hw::gpu
