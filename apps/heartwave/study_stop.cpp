// See study_stop.hpp.
#include "study_stop.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hw::cli {

cell::StopCheck StudyStop::check() const {
  return [] { return io::stop_requested(); };
}

bool StudyStop::stopped() const { return io::stop_requested(); }

int StudyStop::report(const std::string& cmd, std::size_t done, std::size_t total, const std::string& unit,
                      const std::string& where, const std::string& go_on) const {
  std::cerr << fmt::format("heartwave {}: stopped by signal {} after {} of {} {}; {}\n", cmd, io::stop_signal(), done,
                           total, unit, where);
  if (!go_on.empty()) std::cerr << "  " << go_on << "\n";
  return 130;
}

void emit(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  io::write_file_atomic(path, text, /*durable=*/false);
}

std::string first_field(const std::string& line) { return line.substr(0, line.find(',')); }

std::vector<std::string> read_resume_rows(const std::string& path, const std::string& header) {
  std::ifstream in(path);
  const SourceLoc at{path, 0, 0};
  if (!in) throw InputError(at, "--resume: cannot read this file (it must be the output of the interrupted run)");
  std::string first, line;
  std::getline(in, first);
  if (first != header)
    throw InputError(SourceLoc{path, 1, 1}, fmt::format("--resume: the header is not this study's ({}): resume "
                                                        "with the same options as the interrupted run",
                                                        header));
  std::vector<std::string> rows;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(line);
  return rows;
}

std::map<std::size_t, std::string> read_sweep_rows(const std::string& path, const cell::CellSetup& setup,
                                                   const cell::PopulationDesign& design) {
  std::map<std::size_t, std::string> rows;
  int line_no = 1;
  for (const auto& row : read_resume_rows(path, cell::population_csv_header(design))) {
    ++line_no;
    std::size_t cell = 0, used = 0;
    const std::string label = first_field(row);
    try {
      cell = std::stoul(label, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    const SourceLoc at{path, line_no, 1};
    if (used == 0 || used != label.size() || cell >= design.cells())
      throw InputError(at, fmt::format("--resume: '{}' is not a cell of this sweep (0 to {})", label, design.cells() - 1));
    // The label and the parameter values must be this design's for that cell.
    const std::string want = cell::population_csv_row(setup, design, cell, cell::BeatBiomarkers{}, cell);
    std::size_t fields = design.names.size() + 1, end = 0;
    while (fields-- > 0 && end != std::string::npos) end = want.find(',', end + (end ? 1 : 0));
    if (row.compare(0, end, want, 0, end) != 0)
      throw InputError(at, fmt::format("--resume: cell {}'s parameters differ from this sweep's ({}): another "
                                       "sweep's file, or other options",
                                       cell, want.substr(0, end)));
    rows[cell] = row;
  }
  return rows;
}

std::vector<std::size_t> cells_left(const cell::PopulationDesign& design,
                                    const std::map<std::size_t, std::string>& done) {
  std::vector<std::size_t> left;
  for (std::size_t c = 0; c < design.cells(); ++c)
    if (!done.count(c)) left.push_back(c);
  return left;
}

cell::PopulationDesign subset(const cell::PopulationDesign& d, const std::vector<std::size_t>& cells) {
  cell::PopulationDesign s;
  s.names = d.names;
  s.scaling = d.scaling;
  for (std::size_t c : cells)
    s.values.insert(s.values.end(), d.values.begin() + long(c * d.names.size()),
                    d.values.begin() + long((c + 1) * d.names.size()));
  return s;
}

}  // namespace hw::cli
