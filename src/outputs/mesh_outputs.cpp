// See mesh_outputs.hpp.
#include "outputs/mesh_outputs.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::io {

namespace {
std::string join(const std::string& dir, const std::string& leaf) { return (std::filesystem::path(dir) / leaf).string(); }
}  // namespace

MeshOutputs::MeshOutputs(std::string dir, std::shared_ptr<const UnstructuredMesh> mesh, const tissue::Grid& g,
                         const tissue::Mask* mask, double resumed_at)
    : dir_(std::move(dir)), mesh_(std::move(mesh)),
      sampler_(g, mask ? *mask : tissue::Mask(), mesh_->points), resumed_at_(resumed_at) {
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
  if (!igb_ && !std::isnan(resumed_at_) && continue_igb(join(dir_, "V_mesh.igb"), t, dt)) {
    // continued: igb_ is open at the end of the frames kept
  } else if (!igb_) {
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

bool MeshOutputs::continue_igb(const std::string& path, double t, double dt) {
  namespace fs = std::filesystem;
  IgbHeader old;
  try {
    old = read_igb_header(path);
  } catch (const InputError& e) {
    note_ = fmt::format("V_mesh.igb written afresh from {} ms: the file to continue is unreadable ({})", t, e.what());
    return false;
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const std::size_t frame_bytes = header_.nodes * sizeof(float);
  // A run killed before it closed the file left the header's frame count at 0: the frames
  // on disk are counted from its size. Those after the checkpoint are dropped.
  if (ec || old.nodes != header_.nodes || std::fabs(old.dt - dt) > 1e-9 * dt || size < 1024) {
    note_ = fmt::format("V_mesh.igb written afresh from {} ms: the file there is of other nodes or frame interval", t);
    return false;
  }
  const std::size_t on_disk = (size - 1024) / frame_bytes;
  const double last_kept = std::floor((resumed_at_ - old.t0) / dt + 1e-6);
  const std::size_t keep = last_kept < 0 ? 0 : std::min(on_disk, std::size_t(last_kept) + 1);
  if (std::fabs(old.t0 + double(keep) * dt - t) > 1e-6 * dt) {
    note_ = fmt::format("V_mesh.igb written afresh from {} ms: its frames up to the checkpoint ({} ms) are not all "
                        "there (found {}, from {} ms)", t, resumed_at_, on_disk, old.t0);
    return false;
  }
  fs::resize_file(path, 1024 + keep * frame_bytes, ec);
  if (ec) throw Error(fmt::format("cannot cut '{}' back to its frames before the checkpoint: {}", path, ec.message()));
  igb_ = std::fopen(path.c_str(), "r+b");
  if (!igb_ || std::fseek(igb_, 0, SEEK_END) != 0) throw Error(fmt::format("cannot continue '{}'", path));
  header_.t0 = old.t0;
  header_.dt = dt;
  header_.frames = keep;
  note_ = fmt::format("V_mesh.igb continues after its {} frames up to {} ms", keep, resumed_at_);
  return true;
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
