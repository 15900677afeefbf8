// Ctrl-C on `cell`, `sweep` and `restitution`: what was finished is kept, and a sweep or
// an S1-S2 restitution can be resumed from its output.
//
// Why: these studies run for minutes to hours; SIGINT used to kill them with nothing
// written. As `heartwave run` does (outputs/checkpoint.hpp's StopSignalGuard), the first
// SIGINT/SIGTERM only sets a flag; the runners poll it (cell::StopCheck) and return the
// beats, cells or rows done; the command writes those atomically (never a half-written
// file), says how many of how many on stderr, and exits 130. --resume FILE reads such a
// file back and runs only the cells or coupling intervals missing from it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cell/cell_setup.hpp"
#include "cell/population.hpp"
#include "cell/single_cell.hpp"
#include "outputs/checkpoint.hpp"

namespace hw::cli {

// Catches SIGINT/SIGTERM while it lives (a second signal kills, as always).
class StudyStop {
 public:
  cell::StopCheck check() const;
  bool stopped() const;
  // "heartwave CMD: stopped by signal N after DONE of TOTAL UNIT; WHERE" on stderr, and a
  // hint how to go on (empty: none). Returns 130, the exit code.
  int report(const std::string& cmd, std::size_t done, std::size_t total, const std::string& unit,
             const std::string& where, const std::string& go_on) const;

 private:
  io::StopSignalGuard guard_;
};

// `text` atomically into `path`, or on stdout when path is empty.
void emit(const std::string& path, const std::string& text);

// The data lines of a CSV written earlier by the same study (--resume): its first line
// must be `header`. InputError at the file otherwise.
std::vector<std::string> read_resume_rows(const std::string& path, const std::string& header);

// The first comma-separated field of a line.
std::string first_field(const std::string& line);

// --- sweep ---------------------------------------------------------------------------------

// The rows of an earlier run of this sweep, by cell: each must name a cell of the design
// with the design's parameter values (else InputError: another sweep's file).
std::map<std::size_t, std::string> read_sweep_rows(const std::string& path, const cell::CellSetup& setup,
                                                   const cell::PopulationDesign& design);
// The design's cells that are not in `done`, in order, and the design of just those.
std::vector<std::size_t> cells_left(const cell::PopulationDesign& design, const std::map<std::size_t, std::string>& done);
cell::PopulationDesign subset(const cell::PopulationDesign& design, const std::vector<std::size_t>& cells);

}  // namespace hw::cli
