// geometry.vti: fibres and ventricular coordinates (see geometry_fields.hpp).
#include "outputs/geometry_fields.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "mesh/geometry.hpp"
#include "outputs/vtk_writer.hpp"

namespace hw::io {

using tissue::Field;

std::string write_geometry_fields(const tissue::TissueCase& c) {
  const auto& want = c.output.geometry_fields;
  auto asked = [&](const char* name) { return std::find(want.begin(), want.end(), name) != want.end(); };
  tissue::MeshSpec spec = c;
  spec.coordinates = asked("transmural") || asked("apex-base");
  const tissue::Geometry geo = tissue::build_geometry(spec);
  const tissue::Grid& g = geo.grid;

  std::vector<Field<float>> store;  // the arrays written, in the order asked
  std::vector<NamedField> fields;
  store.reserve(want.size());
  for (const std::string& name : want) {
    if (std::any_of(fields.begin(), fields.end(), [&](const NamedField& f) { return f.name == name; })) continue;
    if (name == "fibres") {
      if (!geo.fibres)
        throw InputError(c.output.loc, "output.fields: \"fibres\" needs fibres: add a [fibres] table with a kind");
      Field<float>& f = store.emplace_back(g.size() * 3, 0.0f);
      for (std::size_t n = 0; n < g.size(); ++n) {
        if (!tissue::is_tissue(&geo.mask, n)) continue;
        const double x = geo.fibres->f[0][n], y = geo.fibres->f[1][n], z = geo.fibres->f[2][n];
        const double len = std::sqrt(x * x + y * y + z * z);
        if (!(len > 0)) continue;
        f[3 * n] = float(x / len), f[3 * n + 1] = float(y / len), f[3 * n + 2] = float(z / len);
      }
      fields.push_back({name, &f, 3});
    } else {
      store.push_back(name == "transmural" ? geo.transmural : geo.apex_base);
      fields.push_back({name, &store.back(), 1});
    }
  }
  const std::string dir = c.output.directory.empty() ? "." : c.output.directory;
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "geometry.vti").string();
  write_vti(path, g, fields, geo.mask.empty() ? nullptr : &geo.mask);
  return path;
}

}  // namespace hw::io
