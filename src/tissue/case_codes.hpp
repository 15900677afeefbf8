// The stable codes of problems in a case file (hw::Diagnostic::code), in one table.
//
// Why codes: a message's words may improve from one release to the next; a code does not
// change, so users, scripts and the documentation (docs/case-files.md, "Error codes") can
// name a kind of problem. The case-file reader (run/case_file.cpp) and the set-up
// (tissue/reaction.cpp, run/run.cpp) give every problem one of these. Append new codes at
// the end; never renumber or reuse one.
#pragma once

#include <array>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hw::tissue::case_code {

inline constexpr const char* syntax = "HW-CASE-001";          // not valid TOML
inline constexpr const char* unknown_key = "HW-CASE-002";     // a key the format does not have
inline constexpr const char* wrong_type = "HW-CASE-003";      // a string where a number goes, …
inline constexpr const char* bad_choice = "HW-CASE-004";      // not one of the allowed words
inline constexpr const char* missing = "HW-CASE-005";         // a required key or table is absent
inline constexpr const char* out_of_range = "HW-CASE-006";    // a number outside its range
inline constexpr const char* conflict = "HW-CASE-007";        // keys that exclude each other or do not apply
inline constexpr const char* no_file = "HW-CASE-008";         // a file named by the case is not there
inline constexpr const char* outside = "HW-CASE-009";         // a region or point outside the domain, or empty
inline constexpr const char* unknown_model = "HW-CASE-010";   // neither a built-in model nor a file
inline constexpr const char* model_error = "HW-CASE-011";     // the model file could not be loaded
inline constexpr const char* unstable_dt = "HW-CASE-012";     // dt above the explicit diffusion limit
inline constexpr const char* unknown_name = "HW-CASE-013";    // no model has that parameter or state
inline constexpr const char* no_memory = "HW-CASE-014";       // the case does not fit in memory
inline constexpr const char* bad_override = "HW-CASE-015";    // a --set that cannot be applied
inline constexpr const char* uncovered = "HW-CASE-016";       // tissue in no model region, or no tissue
inline constexpr const char* geometry = "HW-CASE-017";        // the geometry cannot be built from its file or shape

struct CodeInfo {
  const char* code;
  const char* meaning;
};

// Every code with what it means, in order (docs/case-files.md lists the same).
inline constexpr std::array<CodeInfo, 17> all = {{
    {syntax, "the file is not valid TOML"},
    {unknown_key, "unknown key (a typo: the message suggests the nearest known key)"},
    {wrong_type, "a value of the wrong type"},
    {bad_choice, "a word that is not one of the allowed choices"},
    {missing, "a required key or table is missing"},
    {out_of_range, "a number outside its allowed range"},
    {conflict, "keys that exclude each other, or a key that does not apply here"},
    {no_file, "a file named by the case cannot be opened"},
    {outside, "a region or point lies outside the domain or contains no cell"},
    {unknown_model, "a model name that is neither a built-in model nor a file"},
    {model_error, "a model file that could not be loaded"},
    {unstable_dt, "time.dt above the stability limit of explicit diffusion"},
    {unknown_name, "a parameter or state that no model of the case has"},
    {no_memory, "the case needs more memory than the machine (or GPU) has"},
    {bad_override, "a --set override that cannot be applied"},
    {uncovered, "tissue that lies in no model region, or a geometry with no tissue"},
    {geometry, "the geometry cannot be built from its file or shape (the reader's words follow)"},
}};

// A problem in a case: an error at loc whose message ends with its code ("… [HW-CASE-012]",
// so that every printed form shows it) and whose Diagnostic::code is that code.
inline Diagnostic problem(SourceLoc loc, std::string message, const char* code) {
  message += std::string(" [") + code + "]";
  return Diagnostic{Severity::error, std::move(loc), std::move(message), code};
}

// An error from a lower floor (a geometry reader) that has no code of its own, given one.
inline Diagnostic with_code(Diagnostic d, const char* code) {
  if (d.severity != Severity::error || !d.code.empty()) return d;
  return problem(std::move(d.loc), std::move(d.message), code);
}

}  // namespace hw::tissue::case_code
