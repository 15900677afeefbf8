// What the printers may put in place of a model's own maths (time.cell_maths, --cell-maths;
// docs/cell-maths.md). Each is an approximation with a bound that CI checks on every shared
// model and the stiff set:
//   - tables: functions of V alone from lookup tables (model/passes/tabulate.hpp);
//   - fast: in float kernels, exp, log, log10 and pow by the GPU's fast intrinsics (__expf,
//     __logf, __log10f, __powf) and division by __fdividef; the C++ printer evaluates the same
//     approximations (their argument rounding) so that the CPU checks what the GPU runs.
//     Double kernels and the values a float kernel computes in double keep their maths.
// The default, exact, is the model's own maths.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hw::model {

struct CellMaths {
  bool tables = false;
  bool fast = false;

  bool exact() const { return !tables && !fast; }
  bool operator==(const CellMaths&) const = default;
};

// "exact", "tables", "fast", "tables+fast" (or "fast+tables"); nullopt for anything else.
std::optional<CellMaths> parse_cell_maths(std::string_view text);
// The canonical spelling: "exact", "tables", "fast" or "tables+fast".
std::string to_string(CellMaths m);
// The choices, for messages and --help.
inline constexpr const char* kCellMathsChoices = "exact, tables, fast or tables+fast";

}  // namespace hw::model
