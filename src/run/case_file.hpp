// TOML case files → hw::tissue::TissueCase (the format is documented in docs/case-files.md).
//
// Why a reader of its own, strict: a case file is what a user edits by hand, and a typo
// must never run a simulation with a default silently swapped in. Every key is known to
// this reader; an unknown key, a wrong type or a value out of range is an error naming the
// key and file:line:col. All problems are collected first and thrown together as one
// hw::InputError, before any work (no model is compiled, no memory is allocated).
//
// Command-line overrides (`--set key.path=value`) are applied to the parsed TOML before
// validation, so they are checked exactly like the file (an unknown key or a bad value in
// --set is reported against "--set key.path=value").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tissue/case.hpp"

namespace hw::io {

// Reads and validates a case file. Relative paths in it (model files, geometry, fibres)
// are resolved against the file's folder; output.directory stays relative to the working
// directory. Throws hw::InputError with every problem found.
tissue::TissueCase read_case_file(const std::string& path,
                                  const std::vector<std::string>& overrides = {});

// The same from text in memory; `filename` is used in messages and as the base for
// relative paths (its folder).
tissue::TissueCase parse_case(std::string_view toml, const std::string& filename,
                              const std::vector<std::string>& overrides = {});

// Checks that every region, probe and initial condition of c lies inside the domain of
// grid g (used by parse_case for boxes and shapes, and again by callers once a geometry
// file has given the real grid). Throws hw::InputError naming the key.
void validate_regions(const tissue::TissueCase& c, const tissue::Grid& g);

// True when the grid comes from a geometry file rather than from [grid].
bool grid_from_file(const tissue::TissueCase& c);

// A few lines for humans: grid, models, time stepping, stimuli, outputs.
std::string describe_case(const tissue::TissueCase& c);

}  // namespace hw::io
