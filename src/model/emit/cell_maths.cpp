#include "model/emit/cell_maths.hpp"

namespace hw::model {

std::optional<CellMaths> parse_cell_maths(std::string_view text) {
  if (text == "exact") return CellMaths{};
  if (text == "tables") return CellMaths{.tables = true};
  if (text == "fast") return CellMaths{.fast = true};
  if (text == "tables+fast" || text == "fast+tables") return CellMaths{.tables = true, .fast = true};
  return std::nullopt;
}

std::string to_string(CellMaths m) {
  if (m.tables && m.fast) return "tables+fast";
  if (m.tables) return "tables";
  if (m.fast) return "fast";
  return "exact";
}

}  // namespace hw::model
