// Probe traces and the CSV trace writer; see probes.hpp.
#include "outputs/probes.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hw::io {

std::size_t nearest_tissue_cell(const tissue::Grid& g, const tissue::Mask* mask,
                                const std::array<double, 3>& p, const std::string& what,
                                const SourceLoc& loc) {
  std::array<int, 3> c{};
  for (int a = 0; a < 3; ++a) {
    const double len = g.n[a] * g.h[a];
    // An inactive axis (one cell) accepts any coordinate: a 2D sheet has no thickness to miss.
    if (g.n[a] > 1 && !(p[a] >= -0.5 * g.h[a] && p[a] <= len + 0.5 * g.h[a]))
      throw InputError(loc, fmt::format("{} at ({}, {}, {}) mm lies outside the grid "
                                        "[0, {}] × [0, {}] × [0, {}] mm",
                                        what, p[0], p[1], p[2], g.n[0] * g.h[0], g.n[1] * g.h[1],
                                        g.n[2] * g.h[2]));
    c[a] = std::clamp(static_cast<int>(std::floor(p[a] / g.h[a])), 0, g.n[a] - 1);
  }
  const std::size_t idx = g.index(c[0], c[1], c[2]);
  if (tissue::is_tissue(mask, idx)) return idx;
  // Nearest tissue cell centre by brute force: done once per probe, before the run.
  double best = std::numeric_limits<double>::infinity();
  std::size_t best_idx = g.size();
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t m = g.index(i, j, k);
        if (!tissue::is_tissue(mask, m)) continue;
        const double dx = g.centre(0, i) - p[0], dy = g.centre(1, j) - p[1],
                     dz = g.centre(2, k) - p[2];
        const double d = dx * dx + dy * dy + dz * dz;
        if (d < best) best = d, best_idx = m;
      }
  if (best_idx == g.size()) throw InputError(loc, what + ": the grid has no tissue cell");
  return best_idx;
}

CsvTraceWriter::CsvTraceWriter(const std::string& path, const std::vector<std::string>& columns,
                               const std::string& resume_text)
    : path_(path), columns_(columns.size()) {
  namespace fs = std::filesystem;
  std::string h = "t_ms";
  for (const auto& c : columns) h += "," + c;
  h += "\n";
  if (!resume_text.empty() && resume_text.compare(0, h.size(), h) != 0)
    throw Error(fmt::format("{}: the saved trace has other columns than {}", path, h.substr(0, h.size() - 1)));
  if (fs::path(path).has_parent_path()) ensure_directory(fs::path(path).parent_path());
  f_ = std::fopen(path.c_str(), "w");
  if (f_ == nullptr) throw Error(fmt::format("cannot create {}", path));
  append(resume_text.empty() ? h : resume_text);
}

void CsvTraceWriter::append(const std::string& s) {
  if (std::fputs(s.c_str(), f_) < 0 || std::fflush(f_) != 0)
    throw Error(fmt::format("cannot write {}", path_));
  text_ += s;
}

CsvTraceWriter::~CsvTraceWriter() {
  if (f_) std::fclose(f_);
}

void CsvTraceWriter::row(double t, const std::vector<double>& values) {
  if (values.size() != columns_)
    throw Error(fmt::format("{}: {} values for {} columns", path_, values.size(), columns_));
  std::string line = fmt::format("{:.10g}", t);
  for (double v : values) line += fmt::format(",{:.9g}", v);
  line += "\n";
  append(line);
}

std::vector<std::string> ProbeWriter::columns(const std::vector<ProbePoint>& p,
                                              const std::vector<std::string>& vars,
                                              const std::vector<std::string>& units) {
  std::vector<std::string> c;
  const bool only_v = vars.size() == 1 && vars[0] == "V";
  for (std::size_t v = 0; v < vars.size(); ++v) {
    const std::string unit = v < units.size() && !units[v].empty() ? "_" + units[v] : "";
    for (const auto& q : p) c.push_back((only_v ? q.name : q.name + "." + vars[v]) + unit);
  }
  return c;
}

ProbeWriter::ProbeWriter(const std::string& path, const tissue::Grid& g, const tissue::Mask* mask,
                         std::vector<ProbePoint> probes, std::vector<std::string> variables,
                         const SourceLoc& loc, const std::string& resume_text,
                         const std::vector<std::string>& units)
    : probes_(std::move(probes)),
      vars_(std::move(variables)),
      csv_(path, columns(probes_, vars_, units), resume_text) {
  std::set<std::string> seen;
  for (const auto& p : probes_) {
    if (p.name.empty() || p.name.find_first_of(",\"\n") != std::string::npos)
      throw InputError(loc, fmt::format("probe name '{}' must be non-empty, without commas or "
                                        "quotes", p.name));
    if (!seen.insert(p.name).second)
      throw InputError(loc, fmt::format("probe name '{}' is used twice", p.name));
    cells_.push_back(nearest_tissue_cell(g, mask, p.position, "probe '" + p.name + "'", loc));
  }
}

void ProbeWriter::sample(double t, const std::function<double(std::size_t, std::size_t)>& value) {
  std::vector<double> row;
  row.reserve(vars_.size() * cells_.size());
  for (std::size_t v = 0; v < vars_.size(); ++v)
    for (std::size_t c : cells_) row.push_back(value(v, c));
  csv_.row(t, row);
}

void ProbeWriter::sample(double t, const std::vector<double>& row) {
  if (row.size() != vars_.size() * cells_.size())
    throw Error(fmt::format("probes: {} values for {} columns", row.size(), vars_.size() * cells_.size()));
  csv_.row(t, row);
}

std::vector<std::pair<std::string, std::size_t>> ProbeWriter::reads() const {
  std::vector<std::pair<std::string, std::size_t>> r;
  for (const std::string& v : vars_)
    for (std::size_t c : cells_) r.emplace_back(v, c);
  return r;
}

}  // namespace hw::io
