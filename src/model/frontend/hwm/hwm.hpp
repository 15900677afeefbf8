// The native model language (.hwm): a small, line-oriented text format for hand-written
// cell models, and the format the CellML→native converter prints. The language itself is
// documented in docs/model-language.md.
//
// parse_hwm guarantees: it never crashes or aborts on any input; every problem in the text
// is an hw::InputError whose diagnostics carry file:line:col; a Model it returns has every
// name resolved, one derivative per state and unique names across kinds.
// write_hwm guarantees: parse_hwm(write_hwm(m)) rebuilds the same states, initial values,
// parameters, algebraics (same names, same order, same expression trees) and ODEs.
#pragma once

#include <string>
#include <string_view>

#include "model/ir/model.hpp"

namespace hw::model {

// Parses .hwm text; `filename` is used in locations only.
Model parse_hwm(std::string_view text, const std::string& filename);

// Reads and parses a .hwm file (an unreadable file is an InputError located at the path).
Model load_hwm(const std::string& path);

// Prints a model as .hwm text that parse_hwm reads back into an equivalent model.
// Throws hw::Error if a name cannot be written (not an identifier, or a reserved word).
std::string write_hwm(const Model& m);

// True when `name` is one of the language's reserved words (and, or, not, xor, if, then,
// else), which cannot name a variable.
bool is_hwm_reserved_word(std::string_view name);

}  // namespace hw::model
