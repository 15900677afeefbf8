// See mesh_outputs.hpp.
#include "outputs/mesh_outputs.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::io {

namespace {
std::string join(const std::string& dir, const std::string& leaf) { return (std::filesystem::path(dir) / leaf).string(); }
}  // namespace

MeshOutputs::MeshOutputs(std::string dir, std::shared_ptr<const UnstructuredMesh> mesh, const tissue::Grid& g,
                         const tissue::Mask* mask)
    : dir_(std::move(dir)), mesh_(std::move(mesh)),
      sampler_(g, mask ? *mask : tissue::Mask(), mesh_->points) {
  header_.nodes = mesh_->points.size();
}

MeshOutputs::~MeshOutputs() {
  try {
    close_igb();
  } catch (...) {
    // a destructor does not throw; finish() reports write errors
  }
}

void MeshOutputs::add_frame(const tissue::Field<float>& v, double t, double dt) {
  if (!igb_) {
    const std::string path = join(dir_, "V_mesh.igb");
    igb_ = std::fopen(path.c_str(), "wb");
    if (!igb_) throw Error(fmt::format("cannot write '{}'", path));
    header_.t0 = t;
    header_.dt = dt;
    const std::string h = igb_header_text(header_);  // rewritten with the frame count at the end
    std::fwrite(h.data(), 1, h.size(), igb_);
  }
  const std::vector<double> on_nodes = sampler_.sample(v.data());
  std::vector<float> f(on_nodes.begin(), on_nodes.end());
  if (std::fwrite(f.data(), sizeof(float), f.size(), igb_) != f.size())
    throw Error(fmt::format("cannot write '{}' (disk full?)", join(dir_, "V_mesh.igb")));
  ++header_.frames;
}

void MeshOutputs::close_igb() {
  if (!igb_) return;
  const std::string h = igb_header_text(header_);
  std::fseek(igb_, 0, SEEK_SET);
  const bool ok = std::fwrite(h.data(), 1, h.size(), igb_) == h.size();
  std::fclose(igb_);
  igb_ = nullptr;
  if (!ok) throw Error(fmt::format("cannot write the header of '{}'", join(dir_, "V_mesh.igb")));
}

std::vector<std::string> MeshOutputs::finish(const tissue::Field<float>* activation, const tissue::Field<float>* apd90) {
  std::vector<std::string> lines;
  if (igb_) {
    close_igb();
    lines.push_back(fmt::format("V on the mesh: {} ({} frames × {} nodes)", join(dir_, "V_mesh.igb"), header_.frames,
                                header_.nodes));
  }
  std::vector<PointArray> arrays;
  if (activation) {
    PointArray a{"activation", 1, sampler_.sample(activation->data())};
    write_dat(join(dir_, "activation.dat"), a.values);
    arrays.push_back(std::move(a));
  }
  if (apd90) {
    PointArray a{"apd90", 1, sampler_.sample(apd90->data())};
    write_dat(join(dir_, "apd90.dat"), a.values);
    arrays.push_back(std::move(a));
  }
  if (!arrays.empty()) {
    write_vtu(join(dir_, "maps_mesh.vtu"), *mesh_, arrays);
    lines.push_back(fmt::format("maps on the mesh: {} and {}{} ({} nodes{})", join(dir_, "maps_mesh.vtu"),
                                join(dir_, "activation.dat"), apd90 ? ", apd90.dat" : "", mesh_->points.size(),
                                sampler_.unreached() ? fmt::format(", {} with no tissue voxel within 2 voxels: -1",
                                                                   sampler_.unreached())
                                                     : std::string()));
  }
  return lines;
}

}  // namespace hw::io
