// VTK unstructured grids: XML .vtu (ascii, inline base64 binary, appended raw or base64,
// optionally zlib-compressed) and legacy .vtk (ASCII or BINARY; CELLS in the classic and
// the 5.1 OFFSETS/CONNECTIVITY layouts). Tags and fibres come from cell or point data
// arrays found by name (tag_names / fibre_names below).
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "formats/nrrd.hpp"
#include "formats/text_lines.hpp"
#include "formats/unstructured_mesh.hpp"
#include "formats/vtk_mesh_arrays.hpp"
#include "formats/xml_nodes.hpp"

namespace hw::io {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::uint8_t> read_bytes(const std::string& path) { return read_input_bytes(path, SourceLoc{path, 0, 0}); }

// Size in bytes of a VTK XML type name; 0 when unknown.
int xml_type_size(const std::string& t, bool& is_float) {
  is_float = t == "Float32" || t == "Float64";
  if (t == "Int8" || t == "UInt8") return 1;
  if (t == "Int16" || t == "UInt16") return 2;
  if (t == "Int32" || t == "UInt32" || t == "Float32") return 4;
  if (t == "Int64" || t == "UInt64" || t == "Float64") return 8;
  return 0;
}

double load_value(const std::uint8_t* p, const std::string& t) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (t == "Int8") return get(std::int8_t{});
  if (t == "UInt8") return get(std::uint8_t{});
  if (t == "Int16") return get(std::int16_t{});
  if (t == "UInt16") return get(std::uint16_t{});
  if (t == "Int32") return get(std::int32_t{});
  if (t == "UInt32") return get(std::uint32_t{});
  if (t == "Int64") return get(std::int64_t{});
  if (t == "UInt64") return get(std::uint64_t{});
  if (t == "Float32") return get(float{});
  return get(double{});
}

// Base64 of one or several padded blocks in a row (VTK pads the header and the data
// separately); false on a character outside the alphabet.
bool decode_base64_blocks(std::string_view s, std::vector<std::uint8_t>& out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {  // end of a block: drop the partial bits
      acc = 0;
      bits = 0;
      continue;
    }
    const int v = val(c);
    if (v < 0) return false;
    acc = (acc << 6) | std::uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

std::uint64_t read_uint(const std::uint8_t* p, int size, bool swap) {
  std::uint8_t b[8];
  std::memcpy(b, p, size);
  if (swap) std::reverse(b, b + size);
  if (size == 4) {
    std::uint32_t x;
    std::memcpy(&x, b, 4);
    return x;
  }
  std::uint64_t x;
  std::memcpy(&x, b, 8);
  return x;
}

using xml::attr;
using xml::child;
using xml::is;

// The XML file and its appended block, and how to decode one DataArray of it.
struct VtuFile {
  std::string path;
  bool swap = false;
  int hsize = 4;
  bool compressed = false;
  bool appended_raw = true;
  const std::uint8_t* appended = nullptr;  // first byte after '_'
  std::size_t appended_size = 0;
  std::vector<std::size_t> offsets;  // of every appended array, sorted (base64 ends)

  SourceLoc at(xmlNode* n) const { return SourceLoc{path, n ? static_cast<int>(xmlGetLineNo(n)) : 0, 0}; }

  // Header [bytes] (or [blocks, block size, last size, sizes…] when compressed) then data,
  // from `p`; returns the payload bytes, checking each size against `expected`.
  std::vector<std::uint8_t> payload(xmlNode* n, const std::uint8_t* p, std::size_t avail,
                                    std::size_t expected) const {
    if (!compressed) {
      if (avail < std::size_t(hsize)) throw InputError(at(n), "binary DataArray is shorter than its header (truncated?)");
      const std::uint64_t nbytes = read_uint(p, hsize, swap);
      if (nbytes != expected)
        throw InputError(at(n), fmt::format("DataArray header says {} bytes, its size needs {}", nbytes, expected));
      if (avail - hsize < nbytes)
        throw InputError(at(n), fmt::format("DataArray holds {} bytes, its header says {} (truncated file?)",
                                            avail - hsize, nbytes));
      return std::vector<std::uint8_t>(p + hsize, p + hsize + nbytes);
    }
    if (avail < std::size_t(3 * hsize)) throw InputError(at(n), "compressed DataArray header is truncated");
    const std::uint64_t nb = read_uint(p, hsize, swap);
    const std::uint64_t bs = read_uint(p + hsize, hsize, swap);
    const std::uint64_t last = read_uint(p + 2 * hsize, hsize, swap);
    if (nb > avail / hsize) throw InputError(at(n), "compressed DataArray header is corrupt (block count)");
    const std::uint64_t total = nb == 0 ? 0 : (nb - 1) * bs + (last ? last : bs);
    if (total != expected)
      throw InputError(at(n), fmt::format("compressed DataArray inflates to {} bytes by its header, its size needs {}",
                                          total, expected));
    std::size_t off = std::size_t(hsize) * (3 + nb);
    if (avail < off) throw InputError(at(n), "compressed DataArray header is truncated");
    // zlib expands at most ~1032:1: a size beyond that is a corrupt header, refused before allocating.
    if (expected / 1100 > avail)
      throw InputError(at(n), fmt::format("compressed DataArray claims {} bytes from {} compressed: a corrupt header",
                                          expected, avail));
    std::vector<std::uint8_t> data;
    data.reserve(expected);
    for (std::uint64_t b = 0; b < nb; ++b) {
      const std::uint64_t cs = read_uint(p + hsize * (3 + b), hsize, swap);
      if (cs > avail - off) throw InputError(at(n), "compressed DataArray block passes the end of the data (truncated?)");
      try {
        const auto blk = gzip_inflate(p + off, cs, path);
        if (data.size() + blk.size() > expected) throw InputError(at(n), "compressed DataArray inflates past its size");
        data.insert(data.end(), blk.begin(), blk.end());
      } catch (const InputError&) {
        throw;
      } catch (const Error& e) {
        throw InputError(at(n), e.what());
      }
      off += cs;
    }
    if (data.size() != expected)
      throw InputError(at(n), fmt::format("compressed DataArray inflates to {} bytes, its size needs {}", data.size(),
                                          expected));
    return data;
  }

  // The values of a DataArray of `tuples` × its components (checked when `components` > 0).
  VtkArray array(xmlNode* n, std::size_t tuples, int components) const {
    VtkArray a;
    a.name = attr(n, "Name");
    const std::string type = attr(n, "type");
    bool is_float = false;
    const int ts = xml_type_size(type, is_float);
    if (!ts) throw InputError(at(n), fmt::format("DataArray '{}': type '{}' is not a VTK number type", a.name, type));
    const std::string nc = attr(n, "NumberOfComponents");
    a.components = nc.empty() ? 1 : std::atoi(nc.c_str());
    if (a.components < 1 || a.components > 9)
      throw InputError(at(n), fmt::format("DataArray '{}': NumberOfComponents '{}' must be 1…9", a.name, nc));
    if (components > 0 && a.components != components)
      throw InputError(at(n), fmt::format("DataArray '{}' has {} components, expected {}", a.name, a.components,
                                          components));
    const std::size_t count = tuples * std::size_t(a.components);
    check_allocation(count * (sizeof(double) + ts), fmt::format("DataArray '{}'", a.name), at(n));
    const std::string format = attr(n, "format");
    std::vector<std::uint8_t> bytes;
    if (format == "ascii") {
      xmlChar* content = xmlNodeGetContent(n);
      std::string text = content ? reinterpret_cast<const char*>(content) : "";
      if (content) xmlFree(content);
      if (count > text.size() / 2 + 1)
        throw InputError(at(n), fmt::format("ascii DataArray '{}' should hold {} values but has only {} characters "
                                            "(wrong length or truncated)", a.name, count, text.size()));
      a.values.reserve(count);
      const char* p = text.c_str();
      while (true) {
        while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
        if (!*p) break;
        char* e = nullptr;
        const double v = std::strtod(p, &e);
        if (e == p)
          throw InputError(at(n), fmt::format("ascii DataArray '{}' holds '{}', not a number", a.name,
                                              std::string(p, std::min<std::size_t>(12, std::strlen(p)))));
        if (a.values.size() == count)
          throw InputError(at(n), fmt::format("ascii DataArray '{}' has more than the {} values its size needs (wrong length)",
                                              a.name, count));
        a.values.push_back(v);
        p = e;
      }
      if (a.values.size() != count)
        throw InputError(at(n), fmt::format("ascii DataArray '{}' has {} values, its size needs {} (wrong length or truncated)",
                                            a.name, a.values.size(), count));
      return a;
    }
    const std::size_t expected = count * std::size_t(ts);
    if (format == "binary") {
      xmlChar* content = xmlNodeGetContent(n);
      std::string text = content ? reinterpret_cast<const char*>(content) : "";
      if (content) xmlFree(content);
      std::vector<std::uint8_t> dec;
      if (!decode_base64_blocks(text, dec)) throw InputError(at(n), fmt::format("binary DataArray '{}' is not valid base64", a.name));
      bytes = payload(n, dec.data(), dec.size(), expected);
    } else if (format == "appended") {
      if (!appended) throw InputError(at(n), fmt::format("DataArray '{}' is appended, but the file has no <AppendedData>", a.name));
      const std::string os = attr(n, "offset");
      char* e = nullptr;
      const unsigned long long off = std::strtoull(os.c_str(), &e, 10);
      if (os.empty() || *e || off >= appended_size)
        throw InputError(at(n), fmt::format("DataArray '{}': offset '{}' is outside the appended data ({} bytes; truncated?)",
                                            a.name, os, appended_size));
      if (appended_raw) {
        bytes = payload(n, appended + off, appended_size - off, expected);
      } else {
        auto next = std::upper_bound(offsets.begin(), offsets.end(), std::size_t(off));
        const std::size_t end = next == offsets.end() ? appended_size : *next;
        std::vector<std::uint8_t> dec;
        if (!decode_base64_blocks(std::string_view(reinterpret_cast<const char*>(appended) + off, end - off), dec))
          throw InputError(at(n), fmt::format("appended DataArray '{}' is not valid base64", a.name));
        bytes = payload(n, dec.data(), dec.size(), expected);
      }
    } else {
      throw InputError(at(n), fmt::format("DataArray '{}': format '{}' must be ascii, binary or appended", a.name, format));
    }
    if (swap)
      for (std::size_t i = 0; i < count; ++i) std::reverse(bytes.begin() + i * ts, bytes.begin() + (i + 1) * ts);
    a.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) a.values[i] = load_value(bytes.data() + i * ts, type);
    return a;
  }
};

std::size_t count_attr(const VtuFile& f, xmlNode* n, const char* name) {
  const std::string s = attr(n, name);
  char* e = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &e, 10);
  if (s.empty() || *e || s[0] == '-' || v > (1ULL << 31))
    throw InputError(f.at(n), fmt::format("{}='{}' must be a whole number below 2^31", name, s));
  return static_cast<std::size_t>(v);
}

}  // namespace

UnstructuredMesh read_vtu(const std::string& path) {
  std::vector<std::uint8_t> bytes = read_bytes(path);
  VtuFile f;
  f.path = path;
  // The appended block is raw bytes after '_', not XML: parse the text before it and
  // close the document by hand.
  const std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string xml;
  const std::size_t ap = all.find("<AppendedData");
  if (ap != std::string_view::npos) {
    const std::size_t close = all.find('>', ap);
    const std::size_t us = close == std::string_view::npos ? close : all.find('_', close);
    if (us == std::string_view::npos)
      throw InputError(SourceLoc{path, 0, 0}, "<AppendedData> has no '_' marker before its data (truncated file?)");
    const std::string tag(all.substr(ap, close - ap));
    f.appended_raw = tag.find("base64") == std::string::npos;
    f.appended = bytes.data() + us + 1;
    f.appended_size = bytes.size() - us - 1;
    xml = std::string(all.substr(0, ap)) + "</VTKFile>\n";
  } else {
    xml = std::string(all);
  }
  if (xml.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError(SourceLoc{path, 0, 0}, "file too large for the XML reader");
  const xml::Doc doc = xml::parse(xml.data(), xml.size(), path);
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!root || !is(root, "VTKFile")) throw InputError(f.at(root), "not a VTK XML file (root element must be <VTKFile>)");
  if (attr(root, "type") != "UnstructuredGrid")
    throw InputError(f.at(root), fmt::format("VTKFile type '{}' is not UnstructuredGrid (a .vtu holds an unstructured grid)",
                                             attr(root, "type")));
  const std::string order = attr(root, "byte_order");
  if (!order.empty() && order != "LittleEndian" && order != "BigEndian")
    throw InputError(f.at(root), fmt::format("byte_order '{}' must be LittleEndian or BigEndian", order));
  f.swap = (order == "BigEndian") != (std::endian::native == std::endian::big);
  const std::string htype = attr(root, "header_type");
  if (htype == "UInt64") f.hsize = 8;
  else if (!htype.empty() && htype != "UInt32")
    throw InputError(f.at(root), fmt::format("header_type '{}' must be UInt32 or UInt64", htype));
  const std::string compressor = attr(root, "compressor");
  f.compressed = !compressor.empty();
  if (f.compressed && compressor != "vtkZLibDataCompressor")
    throw InputError(f.at(root), fmt::format("compressor '{}' is not supported (only vtkZLibDataCompressor)", compressor));
  xmlNode* grid = child(root, "UnstructuredGrid");
  if (!grid) throw InputError(f.at(root), "no <UnstructuredGrid> element");
  xmlNode* piece = child(grid, "Piece");
  if (!piece) throw InputError(f.at(grid), "no <Piece> in <UnstructuredGrid>");
  for (xmlNode* p = piece->next; p; p = p->next)
    if (is(p, "Piece")) throw InputError(f.at(p), "more than one <Piece>: merge the pieces first (ParaView: Merge Blocks)");
  // Every appended offset, so a base64 array knows where it ends.
  std::vector<xmlNode*> stack{piece};
  while (!stack.empty()) {
    xmlNode* n = stack.back();
    stack.pop_back();
    for (xmlNode* c = n->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE) continue;
      if (is(c, "DataArray") && attr(c, "format") == "appended") {
        const std::string os = attr(c, "offset");
        f.offsets.push_back(std::strtoull(os.c_str(), nullptr, 10));
      }
      stack.push_back(c);
    }
  }
  std::sort(f.offsets.begin(), f.offsets.end());

  const std::size_t np = count_attr(f, piece, "NumberOfPoints"), nc = count_attr(f, piece, "NumberOfCells");
  xmlNode* pts = child(child(piece, "Points"), "DataArray");
  if (!pts) throw InputError(f.at(piece), "no <Points><DataArray> in the <Piece>");
  xmlNode* cells = child(piece, "Cells");
  if (!cells) throw InputError(f.at(piece), "no <Cells> in the <Piece>");
  VtkCells vc;
  vc.points = f.array(pts, np, 3);
  for (xmlNode* c = cells->children; c; c = c->next) {
    if (!is(c, "DataArray")) continue;
    const std::string name = attr(c, "Name");
    if (name == "types") vc.types = f.array(c, nc, 1);
    else if (name == "offsets") vc.offsets = f.array(c, nc, 1);
  }
  for (xmlNode* c = cells->children; c; c = c->next) {
    if (!is(c, "DataArray") || attr(c, "Name") != "connectivity") continue;
    if (vc.offsets.values.empty() && nc > 0) throw InputError(f.at(cells), "<Cells> has no 'offsets' array");
    const double total = nc ? vc.offsets.values.back() : 0;
    if (!(total >= 0) || total > 16.0 * double(nc) + 16)
      throw InputError(f.at(cells), fmt::format("the last cell offset {} is not a valid connectivity length", total));
    vc.connectivity = f.array(c, static_cast<std::size_t>(total), 1);
  }
  if (vc.types.values.size() != nc || vc.offsets.values.size() != nc)
    throw InputError(f.at(cells), "<Cells> needs the arrays 'connectivity', 'offsets' and 'types'");
  auto read_data = [&](const char* where, std::size_t tuples, std::vector<VtkArray>& out) {
    if (xmlNode* d = child(piece, where))
      for (xmlNode* c = d->children; c; c = c->next)
        if (is(c, "DataArray")) out.push_back(f.array(c, tuples, 0));
  };
  read_data("CellData", nc, vc.cell_data);
  read_data("PointData", np, vc.point_data);
  UnstructuredMesh m = mesh_from_vtk_arrays(vc, SourceLoc{path, static_cast<int>(xmlGetLineNo(cells)), 0});
  m.format = MeshFormat::vtu;
  m.source = path;
  check_mesh(m);
  return m;
}

// ---- legacy .vtk -----------------------------------------------------------------------

namespace {

// Walks a legacy file: header words and lines as text, data as ASCII numbers or big-endian
// binary, with the line number for messages.
class LegacyCursor {
 public:
  LegacyCursor(std::string path, std::vector<std::uint8_t> b) : path_(std::move(path)), b_(std::move(b)) {}
  SourceLoc loc() const { return SourceLoc{path_, line_, 0}; }
  bool at_end() {
    skip_space();
    return p_ >= b_.size();
  }
  std::string line() {
    std::string s;
    while (p_ < b_.size() && b_[p_] != '\n') s += char(b_[p_++]);
    if (p_ < b_.size()) ++p_, ++line_;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    return s;
  }
  std::string word() {
    skip_space();
    std::string s;
    while (p_ < b_.size() && !std::isspace(b_[p_])) s += char(b_[p_++]);
    return s;
  }
  void end_line() {  // the rest of a keyword line, up to and including its newline
    while (p_ < b_.size() && b_[p_] != '\n') ++p_;
    if (p_ < b_.size()) ++p_, ++line_;
  }
  std::size_t left() const { return b_.size() - std::min(p_, b_.size()); }
  std::size_t count(const char* what) {
    const std::string w = word();
    char* e = nullptr;
    const long long v = std::strtoll(w.c_str(), &e, 10);
    if (w.empty() || *e || v < 0) throw InputError(loc(), fmt::format("{} '{}' must be a whole number ≥ 0", what, w));
    if (static_cast<unsigned long long>(v) > left() + 1)
      throw InputError(loc(), fmt::format("{} = {} cannot fit in the {} bytes left in the file (corrupt header or "
                                          "truncated file)", what, v, left()));
    return static_cast<std::size_t>(v);
  }
  // `n` numbers of `type` (VTK legacy spelling), ASCII or big-endian binary.
  VtkArray numbers(std::size_t n, const std::string& type, bool binary, const std::string& name, int comps) {
    VtkArray a;
    a.name = name;
    a.components = comps;
    const std::string t = lower(type);
    int ts = 0;
    std::string xt;
    if (t == "float") ts = 4, xt = "Float32";
    else if (t == "double") ts = 8, xt = "Float64";
    else if (t == "int") ts = 4, xt = "Int32";
    else if (t == "unsigned_int") ts = 4, xt = "UInt32";
    else if (t == "short") ts = 2, xt = "Int16";
    else if (t == "unsigned_short") ts = 2, xt = "UInt16";
    else if (t == "char") ts = 1, xt = "Int8";
    else if (t == "unsigned_char") ts = 1, xt = "UInt8";
    else if (t == "long" || t == "vtktypeint64" || t == "vtkidtype") ts = 8, xt = "Int64";
    else if (t == "unsigned_long" || t == "vtktypeuint64") ts = 8, xt = "UInt64";
    else throw InputError(loc(), fmt::format("data type '{}' is not a VTK legacy type", type));
    check_allocation(n * (sizeof(double) + ts), fmt::format("'{}'", name), loc());
    if (binary) {
      if (n * std::size_t(ts) > left())
        throw InputError(loc(), fmt::format("'{}' needs {} bytes of binary data, {} are left (truncated file?)", name,
                                            n * std::size_t(ts), left()));
      a.values.resize(n);
      std::uint8_t tmp[8];
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(tmp, b_.data() + p_ + i * ts, ts);
        if (std::endian::native == std::endian::little) std::reverse(tmp, tmp + ts);
        a.values[i] = load_value(tmp, xt);
      }
      p_ += n * std::size_t(ts);
      return a;
    }
    if (n > left() / 2 + 1)
      throw InputError(loc(), fmt::format("'{}' needs {} numbers, the file has {} bytes left (truncated file?)", name, n, left()));
    a.values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::string w = word();
      if (w.empty())
        throw InputError(loc(), fmt::format("'{}' ends after {} of its {} numbers (truncated file?)", name, i, n));
      char* e = nullptr;
      a.values[i] = std::strtod(w.c_str(), &e);
      if (*e) throw InputError(loc(), fmt::format("'{}' holds '{}', not a number", name, w));
    }
    return a;
  }

 private:
  void skip_space() {
    while (p_ < b_.size() && std::isspace(b_[p_])) {
      if (b_[p_] == '\n') ++line_;
      ++p_;
    }
  }
  std::string path_;
  std::vector<std::uint8_t> b_;
  std::size_t p_ = 0;
  int line_ = 1;
};

}  // namespace

UnstructuredMesh read_legacy_vtk_mesh(const std::string& path) {
  LegacyCursor c(path, read_bytes(path));
  const std::string magic = c.line();
  if (magic.rfind("# vtk DataFile", 0) != 0)
    throw InputError(c.loc(), "not a legacy VTK file (the first line must start with '# vtk DataFile')");
  const bool v5 = magic.find("Version 5") != std::string::npos;
  c.line();  // title
  const std::string enc = c.word();
  if (enc != "ASCII" && enc != "BINARY") throw InputError(c.loc(), fmt::format("'{}' must be ASCII or BINARY", enc));
  const bool binary = enc == "BINARY";
  if (c.word() != "DATASET") throw InputError(c.loc(), "expected 'DATASET UNSTRUCTURED_GRID'");
  const std::string ds = c.word();
  if (ds != "UNSTRUCTURED_GRID")
    throw InputError(c.loc(), fmt::format("DATASET {} is not an unstructured grid (images are read as geometry "
                                          "kind \"mask\")", ds));
  VtkCells vc;
  std::size_t np = 0, nc = 0;
  std::vector<VtkArray>* data = nullptr;
  std::size_t tuples = 0;
  while (!c.at_end()) {
    const std::string kw = c.word();
    if (kw == "POINTS") {
      np = c.count("the point count");
      const std::string type = c.word();
      c.end_line();
      vc.points = c.numbers(3 * np, type, binary, "POINTS", 3);
    } else if (kw == "CELLS") {
      const std::size_t a = c.count("the cell count"), b = c.count("the cell list size");
      c.end_line();
      if (v5) {  // OFFSETS type (a values), CONNECTIVITY type (b values)
        if (c.word() != "OFFSETS") throw InputError(c.loc(), "expected OFFSETS after CELLS (VTK 5.1 layout)");
        const std::string ot = c.word();
        c.end_line();
        VtkArray off = c.numbers(a, ot, binary, "OFFSETS", 1);
        if (c.word() != "CONNECTIVITY") throw InputError(c.loc(), "expected CONNECTIVITY after OFFSETS");
        const std::string ct = c.word();
        c.end_line();
        vc.connectivity = c.numbers(b, ct, binary, "CONNECTIVITY", 1);
        nc = a ? a - 1 : 0;
        vc.offsets.values.assign(off.values.begin() + (a ? 1 : 0), off.values.end());
      } else {  // per cell: k, then k indices
        nc = a;
        VtkArray list = c.numbers(b, "int", binary, "CELLS", 1);
        std::size_t i = 0;
        vc.offsets.values.reserve(nc);
        for (std::size_t e = 0; e < nc; ++e) {
          if (i >= list.values.size()) throw InputError(c.loc(), fmt::format("CELLS: the list ends at cell {} of {}", e, nc));
          const double k = list.values[i++];
          // Compared as doubles first: a huge k (1e62) does not fit std::size_t.
          if (!(k >= 0) || k > double(list.values.size() - i) || i + std::size_t(k) > list.values.size())
            throw InputError(c.loc(), fmt::format("CELLS: cell {} has {} points, past the end of the list", e, k));
          for (std::size_t j = 0; j < std::size_t(k); ++j) vc.connectivity.values.push_back(list.values[i++]);
          vc.offsets.values.push_back(double(vc.connectivity.values.size()));
        }
      }
    } else if (kw == "CELL_TYPES") {
      const std::size_t n = c.count("the cell type count");
      c.end_line();
      if (n != nc) throw InputError(c.loc(), fmt::format("CELL_TYPES has {} entries, CELLS {}", n, nc));
      vc.types = c.numbers(n, "int", binary, "CELL_TYPES", 1);
    } else if (kw == "CELL_DATA" || kw == "POINT_DATA") {
      tuples = c.count("the data count");
      const std::size_t want = kw == "CELL_DATA" ? nc : np;
      if (tuples != want)
        throw InputError(c.loc(), fmt::format("{} {} does not match the {} {}", kw, tuples, want,
                                              kw == "CELL_DATA" ? "cells" : "points"));
      c.end_line();
      data = kw == "CELL_DATA" ? &vc.cell_data : &vc.point_data;
    } else if (kw == "SCALARS" || kw == "VECTORS" || kw == "NORMALS") {
      if (!data) throw InputError(c.loc(), kw + " before CELL_DATA or POINT_DATA");
      const std::string name = c.word(), type = c.word();
      int comps = kw == "SCALARS" ? 1 : 3;
      if (kw == "SCALARS") {
        // optional component count on the same line
        const std::string rest = c.line();
        if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.find_first_not_of(" \t") == std::string::npos
                                                                      ? ' '
                                                                      : rest[rest.find_first_not_of(" \t")])))
          comps = std::atoi(rest.c_str());
        if (comps < 1 || comps > 4) throw InputError(c.loc(), fmt::format("SCALARS {}: {} components (1…4)", name, comps));
        const std::string lt = c.word();
        if (lt != "LOOKUP_TABLE") throw InputError(c.loc(), fmt::format("SCALARS {}: expected LOOKUP_TABLE, not '{}'", name, lt));
        c.end_line();
      } else {
        c.end_line();
      }
      data->push_back(c.numbers(tuples * std::size_t(comps), type, binary, name, comps));
    } else if (kw == "FIELD") {
      if (!data) throw InputError(c.loc(), "FIELD before CELL_DATA or POINT_DATA");
      c.word();  // its name
      const std::size_t k = c.count("the FIELD array count");
      c.end_line();
      for (std::size_t i = 0; i < k; ++i) {
        const std::string name = c.word();
        const std::size_t comps = c.count("the components"), nt = c.count("the tuples");
        const std::string type = c.word();
        c.end_line();
        if (nt != tuples)
          throw InputError(c.loc(), fmt::format("FIELD array '{}' has {} tuples, the data section {} (wrong length)",
                                                name, nt, tuples));
        if (comps < 1 || comps > 9) throw InputError(c.loc(), fmt::format("FIELD array '{}': {} components", name, comps));
        data->push_back(c.numbers(nt * comps, type, binary, name, int(comps)));
      }
    } else if (kw == "METADATA") {
      c.end_line();
      while (!c.at_end() && !c.line().empty()) {
      }
    } else if (kw == "LOOKUP_TABLE") {
      c.word();
      const std::size_t n = c.count("the table size");
      c.end_line();
      c.numbers(4 * n, binary ? "unsigned_char" : "float", binary, "LOOKUP_TABLE", 4);
    } else {
      throw InputError(c.loc(), fmt::format("unexpected '{}' (POINTS, CELLS, CELL_TYPES, CELL_DATA, POINT_DATA, "
                                            "SCALARS, VECTORS, FIELD)", kw));
    }
  }
  if (vc.types.values.size() != nc) throw InputError(c.loc(), "no CELL_TYPES section (or fewer entries than CELLS)");
  UnstructuredMesh m = mesh_from_vtk_arrays(vc, c.loc());
  m.format = MeshFormat::legacy_vtk;
  m.source = path;
  check_mesh(m);
  return m;
}

}  // namespace hw::io
