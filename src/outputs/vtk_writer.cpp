// VTK XML ImageData and .pvd writers; see vtk_writer.hpp for the format choices.
#include "outputs/vtk_writer.hpp"

#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "formats/base64.hpp"

namespace hw::io {
namespace {

// XML attribute/entity escaping for names chosen by users (variable and file names).
std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += c;
    }
  }
  return o;
}

// One binary inline DataArray: base64(UInt64 byte count) then base64(data).
void append_array(std::string& x, const char* type, const std::string& name, const void* data,
                  std::size_t bytes, int components = 1) {
  const std::string comps = components > 1 ? fmt::format(" NumberOfComponents=\"{}\"", components) : "";
  x += fmt::format("        <DataArray type=\"{}\" Name=\"{}\"{} format=\"binary\">\n          ",
                   type, xml_escape(name), comps);
  const std::uint64_t header = bytes;
  base64_encode(&header, sizeof header, x);
  base64_encode(data, bytes, x);
  x += "\n        </DataArray>\n";
}

}  // namespace

void write_vti(const std::string& path, const tissue::Grid& g,
               const std::vector<NamedField>& fields, const tissue::Mask* mask) {
  const std::size_t n = g.size();
  for (const auto& f : fields) {
    if (f.data == nullptr || f.components < 1 || f.data->size() != n * std::size_t(f.components))
      throw Error(fmt::format("write_vti {}: field '{}' has {} values, the grid {} cells × {}", path,
                              f.name, f.data ? f.data->size() : 0, n, f.components));
  }
  const bool with_mask = mask != nullptr && !mask->empty();
  if (with_mask && mask->size() != n)
    throw Error(fmt::format("write_vti {}: mask has {} values, the grid {} cells", path,
                            mask->size(), n));
  // Extents count points: a grid of n cells along an axis spans points 0..n.
  const std::string extent =
      fmt::format("0 {} 0 {} 0 {}", g.n[0], g.n[1], g.n[2]);
  std::string x;
  x.reserve(n * 4 * (fields.size() + 1) * 4 / 3 + 1024);
  x += "<?xml version=\"1.0\"?>\n";
  x += "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
       "header_type=\"UInt64\">\n";
  x += fmt::format(
      "  <ImageData WholeExtent=\"{}\" Origin=\"{:.17g} {:.17g} {:.17g}\" "
      "Spacing=\"{:.17g} {:.17g} {:.17g}\">\n",
      extent, g.origin[0], g.origin[1], g.origin[2], g.h[0], g.h[1], g.h[2]);
  x += fmt::format("    <Piece Extent=\"{}\">\n", extent);
  x += "      <PointData>\n      </PointData>\n";
  x += fields.empty() ? "      <CellData>\n"
                      : fmt::format("      <CellData Scalars=\"{}\">\n",
                                    xml_escape(fields.front().name));
  for (const auto& f : fields)
    append_array(x, "Float32", f.name, f.data->data(), n * f.components * sizeof(float), f.components);
  if (with_mask) append_array(x, "UInt8", "tissue", mask->data(), n);
  x += "      </CellData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n";
  write_file_atomic(path, x, /*durable=*/false);
}

PvdWriter::PvdWriter(std::string pvd_path) : path_(std::move(pvd_path)) {}

void PvdWriter::add(double time_ms, const std::string& vti_path) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(path_).parent_path();
  std::string rel = fs::path(vti_path).lexically_relative(base.empty() ? "." : base).string();
  if (rel.empty()) rel = vti_path;
  entries_.emplace_back(time_ms, rel);
  rewrite();
}

void PvdWriter::rewrite() const {
  std::string x = "<?xml version=\"1.0\"?>\n";
  x += "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n";
  x += "  <Collection>\n";
  for (const auto& [t, file] : entries_)
    x += fmt::format("    <DataSet timestep=\"{:.17g}\" group=\"\" part=\"0\" file=\"{}\"/>\n", t,
                     xml_escape(file));
  x += "  </Collection>\n</VTKFile>\n";
  write_file_atomic(path_, x, /*durable=*/false);
}

}  // namespace hw::io
