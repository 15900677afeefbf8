// "Did you mean …?": the nearest known names to a misspelt one, for every place a user
// types a name (commands, options, model names, parameters, case keys, states).
//
// Why one helper: the case reader, the .hwm front end, --param and the command line each
// had or wanted their own edit distance with its own idea of "near"; one rule everywhere
// means the same typo gets the same suggestion wherever it is made. The rule: a name that
// differs only in case is the best match (g_ks → g_Ks); otherwise the optimal-string-
// alignment distance (insert, delete, substitute, swap neighbours: each 1), compared
// without case, within about a third of the name's length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hw {

// Optimal-string-alignment distance between a and b; case-sensitive unless fold_case.
std::size_t edit_distance(std::string_view a, std::string_view b, bool fold_case = false);

// The candidates near `name`, best first (at most `limit`): exact matches but for case
// first, then by distance (ties keep the candidates' order). Empty when none is near.
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// " (did you mean 'x'?)" or " (did you mean 'x', 'y' or 'z'?)", or "" when none is near.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates, std::size_t limit = 1);

}  // namespace hw
