// Lookup tables for functions of the membrane voltage alone (openCARP's LIMPET tables).
//
// Why: most of a detailed ionic model's transcendental work is in rates, steady states and
// time constants that depend on V and nothing else (TT06: 38 exp of V a step). Tabulated on
// a uniform grid of V and interpolated linearly, each costs two loads and a multiply-add
// where the exact code costs one or more exp, divisions and pow; the index and weight are
// computed once per cell-step for every table of the same spacing.
//
// What is tabulated: the largest subexpressions (seen through the algebraics they read)
// whose only variable is V, that cost at least one special function or division, that are
// used by something that is not itself a function of V alone. A candidate whose table
// misses the tolerance at every spacing down to the finest allowed (a jump: a piecewise
// rate switching at -40 mV) is not tabulated itself; its parts are tried instead (the arms
// of the switch). What is replaced, with its measured error, is reported (model inspect).
//
// Error: for each function f, every interval is checked at its quarter, half and
// three-quarter points against f evaluated exactly (the evaluator of passes/eval.hpp, in
// double): |table − f| ≤ tolerance · max(|f|, floor · median |f| over the range). The spacing
// is the largest h = 0.25 mV / 2^g that meets it (not coarser than 0.25 mV: Iyer 2004's
// sodium-channel rates met 1e-4 at 1 mV yet moved its APD90 by 0.14 ms; at 0.25 mV by
// 0.002 ms). The end-to-end bounds (APD90, RRMS of V,
// activation times) are checked by tests on every shared model (tests/model/tables_*).
//
// Range: V outside it has no table value: the lookup then gives NaN, which the run's NaN
// policy stops with the cell and time (a value at the edge would be silently wrong).
// Models whose voltage is dimensionless (Karma, Aliev-Panfilov) are not tabulated: they
// have no physiological range in mV, and their maths is polynomial.
//
// The tables are a side structure: the Model is unchanged, so the interpreter, the exact
// printers and every analysis still see the exact maths; only a printer given a Tabulation
// substitutes its lookups (printer_common.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

struct TableOptions {
  double tolerance = 1e-4;   // relative, per function (see above)
  double floor = 1e-3;       // of the median |f| over the range: below it the error is absolute
  double v_min_mV = -150;    // the range of V tabulated
  double v_max_mV = 100;
  double coarsest_mV = 0.25; // the first spacing tried
  int max_rows = 32769;      // the finest spacing allowed: rows over the range
};

struct TableGroup {   // functions tabulated at one spacing: one index computation
  double lo = 0;      // V of row 0, in the model's units
  double step = 0;    // spacing, model units
  int rows = 0;
  std::vector<std::uint32_t> functions;  // indices into Tabulation::functions
  std::vector<double> values;            // rows × functions.size(), row-major
  double hi() const { return lo + step * (rows - 1); }
};

struct TabulatedFunction {
  ExprId expr = kNoExpr;  // the node the lookup replaces
  std::string label;      // the algebraic's name, or the expression as the IR dump prints it
  int group = -1;
  int column = -1;        // within the group's rows
  double max_error = 0;   // measured, in the measure of `tolerance`
};

struct Tabulation {
  std::uint32_t voltage = 0;  // the state tabulated over
  double v2mV = 1;            // model voltage unit to mV
  TableOptions options;
  std::vector<TableGroup> groups;
  std::vector<TabulatedFunction> functions;
  std::vector<std::string> left_exact;  // functions of V that keep their exact code, and why
  std::string not_tabulated;            // why the model has no tables at all (or "")

  bool empty() const { return functions.empty(); }
  // Total table entries (each a Real of the kernel).
  std::size_t entries() const;
  // Several lines: the range, the groups, each function with its error.
  std::string report() const;
};

// For an analysed (and, for a kernel, specialised) model. Never throws for a model it cannot
// tabulate: the result is then empty and says why.
Tabulation tabulate_voltage_functions(const Model& analysed, const TableOptions& opt = {});

}  // namespace hw::model
