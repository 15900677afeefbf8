// "Did you mean …?" for the command line: after CLI11 refuses an argument (an unknown
// command such as `celll`, an unknown option such as `--sett`), the nearest commands or
// options of the command the user was in (core/suggest.hpp's rule).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace hw::cli {

// The hint lines for argv, "" when every word is known or nothing is near.
std::string command_line_hint(CLI::App& app, int argc, char** argv);

}  // namespace hw::cli
