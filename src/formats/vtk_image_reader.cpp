// VTK image data readers (.vti XML, legacy .vtk STRUCTURED_POINTS); see the header.
#include "formats/vtk_image_reader.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "formats/xml_nodes.hpp"

#include "core/error.hpp"
#include "formats/text_lines.hpp"

namespace hw::io {

namespace {

constexpr std::size_t max_voxels = std::size_t(1) << 31;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::uint8_t> read_bytes(const std::string& path) { return read_input_bytes(path, SourceLoc{path, 0, 0}); }

void byte_swap(std::vector<std::uint8_t>& b, std::size_t size) {
  if (size <= 1) return;
  for (std::size_t i = 0; i + size <= b.size(); i += size) std::reverse(&b[i], &b[i] + size);
}

bool vti_type(const std::string& s, ScalarType& t) {
  if (s == "UInt8") t = ScalarType::u8;
  else if (s == "Int8") t = ScalarType::i8;
  else if (s == "UInt16") t = ScalarType::u16;
  else if (s == "Int16") t = ScalarType::i16;
  else if (s == "UInt32") t = ScalarType::u32;
  else if (s == "Int32") t = ScalarType::i32;
  else if (s == "Float32") t = ScalarType::f32;
  else if (s == "Float64") t = ScalarType::f64;
  else return false;
  return true;
}

bool legacy_type(const std::string& s, ScalarType& t) {
  const std::string l = lower(s);
  if (l == "unsigned_char") t = ScalarType::u8;
  else if (l == "char") t = ScalarType::i8;
  else if (l == "unsigned_short") t = ScalarType::u16;
  else if (l == "short") t = ScalarType::i16;
  else if (l == "unsigned_int") t = ScalarType::u32;
  else if (l == "int") t = ScalarType::i32;
  else if (l == "float") t = ScalarType::f32;
  else if (l == "double") t = ScalarType::f64;
  else return false;
  return true;
}

// Base64 that tolerates padded blocks in the middle: VTK encodes the header and the data
// of an inline binary array as separate base64 blocks, some writers as one.
bool base64_decode(const std::string& s, std::vector<std::uint8_t>& out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    if (c == '=') return -2;
    return -1;
  };
  int quad[4], nq = 0;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    const int v = val(c);
    if (v == -1) return false;
    quad[nq++] = v;
    if (nq < 4) continue;
    nq = 0;
    if (quad[0] < 0 || quad[1] < 0) return false;
    out.push_back(static_cast<std::uint8_t>((quad[0] << 2) | (quad[1] >> 4)));
    if (quad[2] == -2) continue;
    out.push_back(static_cast<std::uint8_t>(((quad[1] & 15) << 4) | (quad[2] >> 2)));
    if (quad[3] == -2) continue;
    out.push_back(static_cast<std::uint8_t>(((quad[2] & 3) << 6) | quad[3]));
  }
  return nq == 0;
}

using xml::attr;
using xml::child;
using xml::is;

std::vector<double> numbers(const std::string& s, bool& ok) {
  std::vector<double> r;
  const char* p = s.c_str();
  ok = true;
  while (true) {
    while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (!*p) break;
    char* e = nullptr;
    const double d = std::strtod(p, &e);
    if (e == p) { ok = false; break; }
    r.push_back(d);
    p = e;
  }
  return r;
}

std::uint64_t read_uint(const std::uint8_t* p, int size, bool swap) {
  std::uint8_t b[8];
  std::memcpy(b, p, size);
  if (swap) std::reverse(b, b + size);
  if (size == 4) { std::uint32_t x; std::memcpy(&x, b, 4); return x; }
  std::uint64_t x;
  std::memcpy(&x, b, 8);
  return x;
}

}  // namespace

ImageVolume read_vti(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  auto at = [&](xmlNode* n) { return SourceLoc{path, n ? static_cast<int>(xmlGetLineNo(n)) : 0, 0}; };
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError(SourceLoc{path, 0, 0}, "file too large for the XML reader");
  const xml::Doc doc = xml::parse(reinterpret_cast<const char*>(bytes.data()), bytes.size(), path);
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!root || !is(root, "VTKFile"))
    throw InputError(at(root), "not a VTK XML file (root element must be <VTKFile>)");
  if (attr(root, "type") != "ImageData")
    throw InputError(at(root), fmt::format("VTKFile type '{}' is not ImageData", attr(root, "type")));
  const std::string order = attr(root, "byte_order");
  const bool big = order == "BigEndian";
  if (!order.empty() && order != "LittleEndian" && order != "BigEndian")
    throw InputError(at(root), fmt::format("byte_order '{}' must be LittleEndian or BigEndian", order));
  const std::string htype = attr(root, "header_type");
  int hsize = 4;
  if (htype == "UInt64") hsize = 8;
  else if (!htype.empty() && htype != "UInt32")
    throw InputError(at(root), fmt::format("header_type '{}' must be UInt32 or UInt64", htype));
  const std::string compressor = attr(root, "compressor");
  if (!compressor.empty() && compressor != "vtkZLibDataCompressor")
    throw InputError(at(root), fmt::format("compressor '{}' is not supported (only vtkZLibDataCompressor)", compressor));
  if (child(root, "AppendedData"))
    throw InputError(at(child(root, "AppendedData")),
                     "appended data is not supported: write the .vti with inline ascii or binary data");

  xmlNode* image = child(root, "ImageData");
  if (!image) throw InputError(at(root), "no <ImageData> element");
  bool ok = true;
  const auto ext = numbers(attr(image, "WholeExtent"), ok);
  if (!ok || ext.size() != 6)
    throw InputError(at(image), fmt::format("WholeExtent '{}' must be 6 integers", attr(image, "WholeExtent")));
  ImageVolume img;
  img.source = path;
  if (!attr(image, "Spacing").empty()) {
    const auto sp = numbers(attr(image, "Spacing"), ok);
    if (!ok || sp.size() != 3)
      throw InputError(at(image), fmt::format("Spacing '{}' must be 3 numbers", attr(image, "Spacing")));
    for (int a = 0; a < 3; ++a) {
      if (!(sp[a] > 0) || !std::isfinite(sp[a]))
        throw InputError(at(image), fmt::format("Spacing '{}' must be positive", attr(image, "Spacing")));
      img.spacing[a] = sp[a];
    }
  }
  if (!attr(image, "Origin").empty()) {
    const auto o = numbers(attr(image, "Origin"), ok);
    if (!ok || o.size() != 3 || !std::isfinite(o[0]) || !std::isfinite(o[1]) || !std::isfinite(o[2]))
      throw InputError(at(image), fmt::format("Origin '{}' must be 3 finite numbers", attr(image, "Origin")));
    for (int a = 0; a < 3; ++a) img.origin[a] = o[a];
  }
  xmlNode* piece = child(image, "Piece");
  if (!piece) throw InputError(at(image), "no <Piece> in <ImageData>");
  xmlNode* pd = child(piece, "PointData");
  bool cell_data = false;
  xmlNode* array = pd ? child(pd, "DataArray") : nullptr;
  if (!array) {
    xmlNode* cd = child(piece, "CellData");
    array = cd ? child(cd, "DataArray") : nullptr;
    cell_data = array != nullptr;
  }
  if (!array) throw InputError(at(piece), "no <DataArray> in <PointData> or <CellData>");
  std::size_t total = 1;
  for (int a = 0; a < 3; ++a) {
    const double lo = ext[2 * a], hi = ext[2 * a + 1];
    if (lo != std::floor(lo) || hi != std::floor(hi) || hi < lo || hi - lo > 1e9)
      throw InputError(at(image), fmt::format("WholeExtent '{}' is not a valid extent", attr(image, "WholeExtent")));
    const long n = static_cast<long>(hi - lo) + (cell_data ? 0 : 1);
    img.sizes[a] = static_cast<int>(std::max(1L, n));
    total *= std::size_t(img.sizes[a]);
    if (total > max_voxels)
      throw InputError(at(image), fmt::format("WholeExtent '{}' is too large", attr(image, "WholeExtent")));
  }
  if (!vti_type(attr(array, "type"), img.type))
    throw InputError(at(array), fmt::format("DataArray type '{}' is not supported (UInt8…Int32, Float32, Float64)",
                                            attr(array, "type")));
  const std::string nc = attr(array, "NumberOfComponents");
  img.components = nc.empty() ? 1 : std::atoi(nc.c_str());
  if (img.components != 1 && img.components != 3)
    throw InputError(at(array), fmt::format("NumberOfComponents '{}' must be 1 or 3", nc));
  const std::string format = attr(array, "format");
  xmlChar* content = xmlNodeGetContent(array);
  std::string text = content ? reinterpret_cast<const char*>(content) : "";
  if (content) xmlFree(content);
  const std::size_t values = img.voxels() * std::size_t(img.components);
  const std::size_t tsize = scalar_size(img.type);
  if (format == "ascii") {
    const auto v = numbers(text, ok);
    if (!ok) throw InputError(at(array), "ascii DataArray holds something that is not a number");
    if (v.size() != values)
      throw InputError(at(array), fmt::format("ascii DataArray has {} values, the extent needs {}", v.size(), values));
    if (const std::size_t k = first_value_out_of_range(img.type, v); k < v.size())
      throw InputError(at(array), fmt::format("ascii DataArray value {} ({}) does not fit its type {}", k + 1, v[k],
                                              scalar_name(img.type)));
    img.set_values(img.type, v);
    return img;
  }
  if (format != "binary")
    throw InputError(at(array), fmt::format("DataArray format '{}' is not supported (ascii or binary)", format));
  std::vector<std::uint8_t> dec;
  if (!base64_decode(text, dec)) throw InputError(at(array), "binary DataArray is not valid base64");
  const bool swap = big != (std::endian::native == std::endian::big);
  std::vector<std::uint8_t> data;
  if (compressor.empty()) {
    if (dec.size() < std::size_t(hsize)) throw InputError(at(array), "binary DataArray is shorter than its header");
    const std::uint64_t nbytes = read_uint(dec.data(), hsize, swap);
    if (nbytes != values * tsize || dec.size() - hsize < nbytes)
      throw InputError(at(array), fmt::format("binary DataArray holds {} bytes (header says {}), the extent needs {}",
                                              dec.size() - hsize, nbytes, values * tsize));
    data.assign(dec.begin() + hsize, dec.begin() + hsize + static_cast<std::ptrdiff_t>(nbytes));
  } else {
    // [nblocks, block size, last block size, compressed sizes…] then the zlib blocks.
    if (dec.size() < std::size_t(3 * hsize)) throw InputError(at(array), "compressed DataArray header is truncated");
    const std::uint64_t nb = read_uint(dec.data(), hsize, swap);
    if (nb > (dec.size() / hsize)) throw InputError(at(array), "compressed DataArray header is corrupt");
    std::size_t off = std::size_t(hsize) * (3 + nb);
    if (dec.size() < off) throw InputError(at(array), "compressed DataArray header is truncated");
    for (std::uint64_t b = 0; b < nb; ++b) {
      const std::uint64_t cs = read_uint(dec.data() + hsize * (3 + b), hsize, swap);
      if (cs > dec.size() - off) throw InputError(at(array), "compressed DataArray block passes the end");
      try {
        const auto blk = gzip_inflate(dec.data() + off, cs, path);
        data.insert(data.end(), blk.begin(), blk.end());
      } catch (const Error& e) {
        throw InputError(at(array), e.what());
      }
      off += cs;
    }
    if (data.size() != values * tsize)
      throw InputError(at(array), fmt::format("compressed DataArray inflates to {} bytes, the extent needs {}",
                                              data.size(), values * tsize));
  }
  if (swap) byte_swap(data, tsize);
  img.bytes = std::move(data);
  return img;
}

ImageVolume read_legacy_vtk(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  std::size_t pos = 0;
  int line_no = 0;
  auto at = [&](int l) { return SourceLoc{path, l, 0}; };
  auto next_line = [&](std::string& line) -> bool {
    if (pos >= bytes.size()) return false;
    std::size_t e = pos;
    while (e < bytes.size() && bytes[e] != '\n') ++e;
    line.assign(reinterpret_cast<const char*>(bytes.data()) + pos, e - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos = e < bytes.size() ? e + 1 : e;
    ++line_no;
    return true;
  };
  // Next non-blank line, split into words.
  auto next_words = [&](std::vector<std::string>& w) -> bool {
    std::string line;
    while (next_line(line)) {
      std::istringstream in(line);
      w.clear();
      std::string x;
      while (in >> x) w.push_back(x);
      if (!w.empty()) return true;
    }
    return false;
  };
  std::string line;
  if (!next_line(line) || line.rfind("# vtk DataFile", 0) != 0)
    throw InputError(at(1), "not a legacy VTK file (first line must start with '# vtk DataFile')");
  next_line(line);  // title
  std::vector<std::string> w;
  if (!next_words(w) || (w[0] != "ASCII" && w[0] != "BINARY"))
    throw InputError(at(line_no), "third line must be ASCII or BINARY");
  const bool binary = w[0] == "BINARY";
  if (!next_words(w) || w.size() != 2 || lower(w[0]) != "dataset" || lower(w[1]) != "structured_points")
    throw InputError(at(line_no), "only 'DATASET STRUCTURED_POINTS' is supported");
  ImageVolume img;
  img.source = path;
  bool have_dims = false, cell_data = false;
  int dims_line = 0;
  std::array<int, 3> dims{1, 1, 1};
  std::size_t declared = 0;
  while (true) {
    if (!next_words(w)) throw InputError(at(line_no), "no SCALARS or VECTORS data in the file");
    const std::string key = lower(w[0]);
    auto three = [&](auto& out, bool integer) {
      if (w.size() != 4) throw InputError(at(line_no), fmt::format("{} needs 3 numbers", w[0]));
      for (int a = 0; a < 3; ++a) {
        char* e = nullptr;
        const double d = std::strtod(w[a + 1].c_str(), &e);
        if (*e || !std::isfinite(d) || (integer && (d != std::floor(d) || d < 1 || d > 1e9)))
          throw InputError(at(line_no), fmt::format("{} value '{}' is not valid", w[0], w[a + 1]));
        out[a] = static_cast<std::remove_reference_t<decltype(out[a])>>(d);
      }
    };
    if (key == "dimensions") {
      three(dims, true);
      have_dims = true;
      dims_line = line_no;
    } else if (key == "spacing" || key == "aspect_ratio") {
      three(img.spacing, false);
      for (double s : img.spacing)
        if (!(s > 0)) throw InputError(at(line_no), fmt::format("{} must be positive", w[0]));
    } else if (key == "origin") {
      three(img.origin, false);
    } else if (key == "point_data" || key == "cell_data") {
      if (w.size() != 2) throw InputError(at(line_no), fmt::format("{} needs a count", w[0]));
      cell_data = key == "cell_data";
      declared = std::strtoull(w[1].c_str(), nullptr, 10);
    } else if (key == "scalars" || key == "vectors") {
      if (!have_dims) throw InputError(at(line_no), "data before DIMENSIONS");
      if (w.size() < 3 || !legacy_type(w[2], img.type))
        throw InputError(at(line_no), fmt::format("{}: missing or unsupported data type", w[0]));
      img.components = key == "vectors" ? 3 : 1;
      if (key == "scalars" && w.size() >= 4) {
        img.components = std::atoi(w[3].c_str());
        if (img.components != 1 && img.components != 3)
          throw InputError(at(line_no), fmt::format("SCALARS components '{}' must be 1 or 3", w[3]));
      }
      if (key == "scalars") {
        // The LOOKUP_TABLE line is optional in some writers' output.
        const std::size_t save_pos = pos;
        const int save_line = line_no;
        std::vector<std::string> lt;
        if (!(next_words(lt) && lower(lt[0]) == "lookup_table")) {
          pos = save_pos;
          line_no = save_line;
        }
      }
      break;
    } else {
      throw InputError(at(line_no), fmt::format("unexpected keyword '{}'", w[0]));
    }
  }
  std::size_t total = 1;
  for (int a = 0; a < 3; ++a) {
    img.sizes[a] = cell_data ? std::max(1, dims[a] - 1) : dims[a];
    total *= std::size_t(img.sizes[a]);
    if (total > max_voxels) throw InputError(at(dims_line), "DIMENSIONS are too large");
  }
  if (declared != 0 && declared != total)
    throw InputError(at(line_no), fmt::format("data count {} does not match DIMENSIONS ({} {})", declared, total,
                                              cell_data ? "cells" : "points"));
  const std::size_t values = total * std::size_t(img.components);
  const std::size_t tsize = scalar_size(img.type);
  if (binary) {
    if (bytes.size() - pos < values * tsize)
      throw InputError(at(line_no), fmt::format("binary data has {} bytes, {} are needed", bytes.size() - pos,
                                                values * tsize));
    img.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                     bytes.begin() + static_cast<std::ptrdiff_t>(pos + values * tsize));
    if (std::endian::native != std::endian::big) byte_swap(img.bytes, tsize);  // legacy binary is big-endian
    return img;
  }
  std::vector<double> v;
  v.reserve(values);
  const std::string text(reinterpret_cast<const char*>(bytes.data()) + pos, bytes.size() - pos);
  const char* p = text.c_str();
  while (v.size() < values) {
    while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (!*p) break;
    char* e = nullptr;
    const double d = std::strtod(p, &e);
    if (e == p) throw InputError(at(line_no), "ASCII data holds something that is not a number");
    v.push_back(d);
    p = e;
  }
  if (v.size() != values)
    throw InputError(at(line_no), fmt::format("ASCII data has {} values, {} are needed", v.size(), values));
  if (const std::size_t k = first_value_out_of_range(img.type, v); k < v.size())
    throw InputError(at(line_no), fmt::format("ASCII data value {} ({}) does not fit the type {}", k + 1, v[k],
                                              scalar_name(img.type)));
  img.set_values(img.type, v);
  return img;
}

ImageVolume read_image(const std::string& path) {
  std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".nrrd" || ext == ".nhdr") return read_nrrd(path);
  if (ext == ".vti") return read_vti(path);
  if (ext == ".vtk") return read_legacy_vtk(path);
  throw InputError(SourceLoc{path, 0, 0},
                   fmt::format("unknown image format '{}' (use .nrrd, .nhdr, .vti or legacy .vtk)", ext));
}

}  // namespace hw::io
