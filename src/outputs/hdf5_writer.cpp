// HDF5 + XDMF series writer; see hdf5_writer.hpp for the layout.
#include "outputs/hdf5_writer.hpp"

#include <hdf5.h>

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "parallel/team.hpp"

namespace hw::io {
namespace {

// A chunk through the dataset's filter pipeline, as the library would run it: shuffle (byte
// b of element i to b·n + i, the elements little-endian as stored) then deflate (a zlib
// stream). n: the chunk's elements (an edge chunk padded with zeros); `valid` are data.
std::vector<unsigned char> filtered_chunk(const float* data, std::size_t valid, std::size_t n, int level) {
  std::vector<unsigned char> shuffled(n * sizeof(float), 0);
  const auto* in = reinterpret_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < valid; ++i)
    for (std::size_t b = 0; b < sizeof(float); ++b) shuffled[b * n + i] = in[i * sizeof(float) + b];
  uLongf size = compressBound(uLong(shuffled.size()));
  std::vector<unsigned char> out(size);
  if (compress2(out.data(), &size, shuffled.data(), uLong(shuffled.size()), level) != Z_OK)
    throw Error("HDF5: zlib could not compress a chunk (out of memory?)");
  out.resize(size);
  return out;
}

// Closes an HDF5 handle at scope exit with the right close function.
struct H5Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~H5Handle() {
    if (id >= 0) close(id);
  }
};

void check(herr_t r, const std::string& what) {
  if (r < 0) throw Error("HDF5: " + what + " failed");
}
hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw Error("HDF5: " + what + " failed");
  return id;
}

// Creation property lists for groups and datasets without modification times. Why: HDF5
// stamps every object header with the time it was made by default, so two runs that write
// the same numbers wrote different files; without them the file is a function of the data
// alone, and a split run's series can be compared with one rank's byte for byte.
H5Handle untimed(hid_t cls) {
  const hid_t p = check_id(H5Pcreate(cls), "create a property list");
  if (H5Pset_obj_track_times(p, false) < 0) {
    H5Pclose(p);
    throw Error("HDF5: turning off object times failed");
  }
  return H5Handle{p, H5Pclose};  // a prvalue: never copied, so closed once
}

bool link_exists(hid_t loc, const std::string& name) {
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

// Names of the links in group g, in name order.
std::vector<std::string> link_names(hid_t g) {
  H5G_info_t info;
  check(H5Gget_info(g, &info), "read a group");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                           H5P_DEFAULT);
    if (len < 0) throw Error("HDF5: reading a link name failed");
    std::string s(std::size_t(len) + 1, '\0');
    H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, s.data(), s.size(), H5P_DEFAULT);
    s.resize(std::size_t(len));
    names.push_back(s);
  }
  return names;
}

std::string xdmf_beside(const std::string& h5_path) {
  namespace fs = std::filesystem;
  return (fs::path(h5_path).parent_path() / (fs::path(h5_path).stem().string() + ".xdmf")).string();
}

}  // namespace

std::string Hdf5SeriesWriter::step_name(int step) { return fmt::format("{:06d}", step); }

Hdf5SeriesWriter::Hdf5SeriesWriter(std::string h5_path, tissue::Grid grid, Continue c,
                                   int compression)
    : h5_path_(std::move(h5_path)), grid_(grid), compression_(std::clamp(compression, 0, 9)) {
  xdmf_path_ = xdmf_beside(h5_path_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (compression_ > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) compression_ = 0;
  file_ = H5Fopen(h5_path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file_ < 0) throw Error(fmt::format("HDF5: cannot open {} to continue its series", h5_path_));
  try {
    resume(c.keep);
  } catch (...) {
    H5Fclose(file_);  // a throwing constructor runs no destructor
    file_ = -1;
    throw;
  }
}

void Hdf5SeriesWriter::resume(int keep) {
  const auto bad = [&](const std::string& why) {
    return Error(fmt::format("HDF5 {}: cannot continue the series: {}", h5_path_, why));
  };
  if (!link_exists(file_, "/fields")) throw bad("no /fields group");
  if (link_exists(file_, "/time")) {
    H5Handle ds{check_id(H5Dopen2(file_, "/time", H5P_DEFAULT), "open /time"), H5Dclose};
    H5Handle sp{H5Dget_space(ds.id), H5Sclose};
    const hssize_t n = H5Sget_simple_extent_npoints(sp.id);
    if (n < 0) throw bad("unreadable /time");
    times_.resize(std::size_t(n));
    if (n > 0)
      check(H5Dread(ds.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, times_.data()),
            "read /time");
  }
  if (keep < 0 || std::size_t(keep) > times_.size())
    throw bad(fmt::format("it holds {} steps, the checkpoint needs {}", times_.size(), keep));
  {
    H5Handle fields{check_id(H5Gopen2(file_, "/fields", H5P_DEFAULT), "open /fields"), H5Gclose};
    names_ = link_names(fields.id);
  }
  const hsize_t want[3] = {hsize_t(grid_.n[2]), hsize_t(grid_.n[1]), hsize_t(grid_.n[0])};
  for (const auto& name : names_) {
    if (keep > 0) {
      const std::string first = "/fields/" + name + "/" + step_name(0);
      if (!link_exists(file_, first)) throw bad("no dataset " + first);
      H5Handle ds{check_id(H5Dopen2(file_, first.c_str(), H5P_DEFAULT), "open " + first), H5Dclose};
      H5Handle sp{H5Dget_space(ds.id), H5Sclose};
      hsize_t dims[3] = {0, 0, 0};
      if (H5Sget_simple_extent_ndims(sp.id) != 3 || H5Sget_simple_extent_dims(sp.id, dims, nullptr) != 3 ||
          dims[0] != want[0] || dims[1] != want[1] || dims[2] != want[2])
        throw bad("its fields have another grid");
    }
    // Steps written after the checkpoint go: the resumed run writes them again.
    for (int s = keep;; ++s) {
      const std::string ds = "/fields/" + name + "/" + step_name(s);
      if (!link_exists(file_, ds)) break;
      check(H5Ldelete(file_, ds.c_str(), H5P_DEFAULT), "delete " + ds);
    }
  }
  times_.resize(std::size_t(keep));
  if (keep == 0) names_.clear();
  write_time();
  write_xdmf();
}

Hdf5SeriesWriter::Hdf5SeriesWriter(std::string h5_path, tissue::Grid grid,
                                   const tissue::Mask* mask, int compression)
    : h5_path_(std::move(h5_path)), grid_(grid), compression_(std::clamp(compression, 0, 9)) {
  namespace fs = std::filesystem;
  xdmf_path_ = xdmf_beside(h5_path_);
  if (fs::path(h5_path_).has_parent_path()) ensure_directory(fs::path(h5_path_).parent_path());
  // We report failures ourselves; HDF5's own stack dumps on stderr would only confuse.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (compression_ > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) compression_ = 0;
  file_ = H5Fcreate(h5_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) throw Error(fmt::format("HDF5: cannot create {}", h5_path_));
  const H5Handle gcpl = untimed(H5P_GROUP_CREATE);
  H5Handle fields{check_id(H5Gcreate2(file_, "/fields", H5P_DEFAULT, gcpl.id, H5P_DEFAULT),
                           "create /fields"),
                  H5Gclose};
  if (mask != nullptr && !mask->empty()) {
    if (mask->size() != grid_.size())
      throw Error(fmt::format("HDF5 {}: mask has {} values, the grid {} cells", h5_path_,
                              mask->size(), grid_.size()));
    const hsize_t dims[3] = {hsize_t(grid_.n[2]), hsize_t(grid_.n[1]), hsize_t(grid_.n[0])};
    H5Handle space{H5Screate_simple(3, dims, nullptr), H5Sclose};
    const H5Handle dcpl = untimed(H5P_DATASET_CREATE);
    H5Handle ds{check_id(H5Dcreate2(file_, "/mask", H5T_STD_U8LE, space.id, H5P_DEFAULT,
                                    dcpl.id, H5P_DEFAULT),
                         "create /mask"),
                H5Dclose};
    check(H5Dwrite(ds.id, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, mask->data()),
          "write /mask");
  }
  // Where the grid lies, x y z in mm (h5py: f.attrs["origin"]), as the .xdmf says.
  for (const auto& [name, v] : {std::pair{"origin", grid_.origin}, std::pair{"spacing", grid_.h}}) {
    const hsize_t three = 3;
    H5Handle as{H5Screate_simple(1, &three, nullptr), H5Sclose};
    H5Handle at{check_id(H5Acreate2(file_, name, H5T_IEEE_F64LE, as.id, H5P_DEFAULT, H5P_DEFAULT),
                         std::string("create attribute ") + name),
                H5Aclose};
    check(H5Awrite(at.id, H5T_NATIVE_DOUBLE, v.data()), std::string("write attribute ") + name);
  }
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush");
  write_xdmf();
}

Hdf5SeriesWriter::~Hdf5SeriesWriter() {
  if (file_ >= 0) H5Fclose(file_);
}

void Hdf5SeriesWriter::write(double time_ms, const std::vector<NamedField>& fields) {
  const std::size_t n = grid_.size();
  std::vector<std::string> names;
  for (const auto& f : fields) {
    if (f.data == nullptr || f.data->size() != n)
      throw Error(fmt::format("HDF5 {}: field '{}' has {} values, the grid {} cells", h5_path_,
                              f.name, f.data ? f.data->size() : 0, n));
    if (f.name.empty() || f.name.find('/') != std::string::npos)
      throw Error(fmt::format("HDF5 {}: field name '{}' cannot be a dataset name", h5_path_,
                              f.name));
    names.push_back(f.name);
  }
  if (!times_.empty()) {
    std::vector<std::string> a = names, b = names_;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) throw Error(fmt::format("HDF5 {}: every step must write the same variables", h5_path_));
  }
  names_ = names;
  const int step = steps();
  const hsize_t dims[3] = {hsize_t(grid_.n[2]), hsize_t(grid_.n[1]), hsize_t(grid_.n[0])};
  // Chunks of whole x-y planes, as many planes as fit in ~1 MB (at least one).
  const hsize_t plane = dims[1] * dims[2];
  const hsize_t planes = std::clamp<hsize_t>((1u << 20) / (4 * plane), 1, dims[0]);
  const hsize_t chunk[3] = {planes, dims[1], dims[2]};
  H5Handle space{H5Screate_simple(3, dims, nullptr), H5Sclose};
  const H5Handle dcpl = untimed(H5P_DATASET_CREATE);
  check(H5Pset_chunk(dcpl.id, 3, chunk), "set chunk");
  if (compression_ > 0) {
    check(H5Pset_shuffle(dcpl.id), "set shuffle");
    check(H5Pset_deflate(dcpl.id, unsigned(compression_)), "set deflate");
  }
  for (const auto& f : fields) {
    const std::string group = "/fields/" + f.name;
    if (!link_exists(file_, group)) {
      const H5Handle gcpl = untimed(H5P_GROUP_CREATE);
      H5Handle g{check_id(H5Gcreate2(file_, group.c_str(), H5P_DEFAULT, gcpl.id,
                                     H5P_DEFAULT),
                          "create " + group),
                 H5Gclose};
    }
    const std::string name = group + "/" + step_name(step);
    H5Handle ds{check_id(H5Dcreate2(file_, name.c_str(), H5T_IEEE_F32LE, space.id, H5P_DEFAULT,
                                    dcpl.id, H5P_DEFAULT),
                         "create " + name),
                H5Dclose};
    if (compression_ > 0 && std::endian::native == std::endian::little) {
      // The library filters chunk after chunk on this thread (0.31 s for a 256³ frame at
      // level 1, longer than a GPU's hundred steps): here every core filters a chunk, and
      // the library stores them as they are.
      const std::size_t per_chunk = std::size_t(planes * plane);
      const std::ptrdiff_t chunks = std::ptrdiff_t((dims[0] + planes - 1) / planes);
      std::vector<std::vector<unsigned char>> bytes(static_cast<std::size_t>(chunks));
      std::exception_ptr error;
#pragma omp parallel for schedule(dynamic) num_threads(par::team())
      for (std::ptrdiff_t c = 0; c < chunks; ++c) {
        const std::size_t z0 = std::size_t(c) * std::size_t(planes);
        const std::size_t valid = std::min<std::size_t>(std::size_t(planes), std::size_t(dims[0]) - z0) * plane;
        try {
          bytes[std::size_t(c)] = filtered_chunk(f.data->data() + z0 * plane, valid, per_chunk, compression_);
        } catch (...) {
#pragma omp critical(hw_hdf5_chunk_error)
          if (!error) error = std::current_exception();
        }
      }
      if (error) std::rethrow_exception(error);
      for (std::ptrdiff_t c = 0; c < chunks; ++c) {
        const hsize_t offset[3] = {hsize_t(c) * planes, 0, 0};
        const auto& b = bytes[std::size_t(c)];
        check(H5Dwrite_chunk(ds.id, H5P_DEFAULT, 0, offset, b.size(), b.data()), "write " + name);
      }
    } else {
      check(H5Dwrite(ds.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.data->data()),
            "write " + name);
    }
    H5Handle as{H5Screate(H5S_SCALAR), H5Sclose};
    H5Handle at{check_id(H5Acreate2(ds.id, "time", H5T_IEEE_F64LE, as.id, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         "create time attribute"),
                H5Aclose};
    check(H5Awrite(at.id, H5T_NATIVE_DOUBLE, &time_ms), "write time attribute");
  }
  times_.push_back(time_ms);
  write_time();
  write_xdmf();
}

void Hdf5SeriesWriter::write_time() {
  // /time is rewritten whole: it is tiny, and a fixed-size dataset needs no chunking.
  if (link_exists(file_, "/time")) check(H5Ldelete(file_, "/time", H5P_DEFAULT), "delete /time");
  if (times_.empty()) {
    check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush");
    return;
  }
  const hsize_t tn = times_.size();
  H5Handle ts{H5Screate_simple(1, &tn, nullptr), H5Sclose};
  const H5Handle tcpl = untimed(H5P_DATASET_CREATE);
  H5Handle td{check_id(H5Dcreate2(file_, "/time", H5T_IEEE_F64LE, ts.id, H5P_DEFAULT,
                                  tcpl.id, H5P_DEFAULT),
                       "create /time"),
              H5Dclose};
  check(H5Dwrite(td.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, times_.data()),
        "write /time");
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush");
}

void Hdf5SeriesWriter::write_xdmf() const {
  namespace fs = std::filesystem;
  const std::string h5_name = fs::path(h5_path_).filename().string();
  const auto& g = grid_;
  // 3DCoRectMesh counts points, slowest axis (z) first; ORIGIN_DXDYDZ is also z, y, x.
  const std::string topo = fmt::format(
      "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{} {} {}\"/>\n"
      "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      "        <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
      "Dimensions=\"3\">{:.17g} {:.17g} {:.17g}</DataItem>\n"
      "        <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
      "Dimensions=\"3\">{:.17g} {:.17g} {:.17g}</DataItem>\n"
      "      </Geometry>\n",
      g.n[2] + 1, g.n[1] + 1, g.n[0] + 1, g.origin[2], g.origin[1], g.origin[0], g.h[2], g.h[1], g.h[0]);
  const std::string dims = fmt::format("{} {} {}", g.n[2], g.n[1], g.n[0]);
  std::string x = "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n";
  x += "    <Grid Name=\"fields\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (std::size_t s = 0; s < times_.size(); ++s) {
    x += fmt::format("    <Grid Name=\"step_{}\" GridType=\"Uniform\">\n",
                     step_name(int(s)));
    x += fmt::format("      <Time Value=\"{:.17g}\"/>\n", times_[s]);
    x += topo;
    for (const auto& name : names_) {
      x += fmt::format(
          "      <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
          "        <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"4\" "
          "Dimensions=\"{}\">{}:/fields/{}/{}</DataItem>\n      </Attribute>\n",
          name, dims, h5_name, name, step_name(int(s)));
    }
    x += "    </Grid>\n";
  }
  x += "    </Grid>\n  </Domain>\n</Xdmf>\n";
  write_file_atomic(xdmf_path_, x, /*durable=*/false);
}

}  // namespace hw::io
