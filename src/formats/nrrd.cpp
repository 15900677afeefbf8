// NRRD reader and writer; see nrrd.hpp for what is supported and why.
#include "formats/nrrd.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/text_lines.hpp"

namespace hw::io {

namespace {

// A guard against absurd headers: 2^31 voxels × 3 components is already 6 GiB of bytes.
constexpr std::size_t max_voxels = std::size_t(1) << 31;

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_type(const std::string& v, ScalarType& t) {
  static const std::map<std::string, ScalarType> names = {
      {"uchar", ScalarType::u8},           {"unsigned char", ScalarType::u8},
      {"uint8", ScalarType::u8},           {"uint8_t", ScalarType::u8},
      {"signed char", ScalarType::i8},     {"char", ScalarType::i8},
      {"int8", ScalarType::i8},            {"int8_t", ScalarType::i8},
      {"short", ScalarType::i16},          {"short int", ScalarType::i16},
      {"signed short", ScalarType::i16},   {"signed short int", ScalarType::i16},
      {"int16", ScalarType::i16},          {"int16_t", ScalarType::i16},
      {"ushort", ScalarType::u16},         {"unsigned short", ScalarType::u16},
      {"unsigned short int", ScalarType::u16}, {"uint16", ScalarType::u16},
      {"uint16_t", ScalarType::u16},       {"int", ScalarType::i32},
      {"signed int", ScalarType::i32},     {"int32", ScalarType::i32},
      {"int32_t", ScalarType::i32},        {"uint", ScalarType::u32},
      {"unsigned int", ScalarType::u32},   {"uint32", ScalarType::u32},
      {"uint32_t", ScalarType::u32},       {"float", ScalarType::f32},
      {"double", ScalarType::f64}};
  const auto it = names.find(lower(v));
  if (it == names.end()) return false;
  t = it->second;
  return true;
}

// Parses a whole string as a number; false on junk or a non-finite value where finite is
// required.
bool parse_double(const std::string& s, double& out) {
  const std::string t = trim(s);
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool parse_long(const std::string& s, long long& out) {
  const std::string t = trim(s);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(t.c_str(), &end, 10);
  return end == t.c_str() + t.size() && errno == 0;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> r;
  std::string w;
  while (in >> w) r.push_back(w);
  return r;
}

// "(a,b,c)" → 3 numbers; "none" → empty.
bool parse_vector(const std::string& s, std::vector<double>& out) {
  out.clear();
  if (lower(s) == "none") return true;
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return false;
  std::string inner = s.substr(1, s.size() - 2);
  std::istringstream in(inner);
  std::string part;
  while (std::getline(in, part, ',')) {
    double d;
    if (!parse_double(part, d) || !std::isfinite(d)) return false;
    out.push_back(d);
  }
  return !out.empty();
}

// Vectors of "space directions"/"space origin": "(…) (…) none" — split on ')' boundaries
// so spaces inside parentheses are allowed.
std::vector<std::string> split_vectors(const std::string& s) {
  std::vector<std::string> r;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    if (s[i] == '(') {
      const std::size_t j = s.find(')', i);
      if (j == std::string::npos) {
        r.push_back(s.substr(i));
        break;
      }
      std::string v = s.substr(i, j - i + 1);
      v.erase(std::remove_if(v.begin(), v.end(),
                             [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
              v.end());
      r.push_back(v);
      i = j + 1;
    } else {
      std::size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      r.push_back(s.substr(i, j - i));
      i = j;
    }
  }
  return r;
}

void byte_swap(std::vector<std::uint8_t>& b, std::size_t size) {
  if (size <= 1) return;
  for (std::size_t i = 0; i + size <= b.size(); i += size) std::reverse(&b[i], &b[i] + size);
}

template <class T>
void store(std::uint8_t* p, double v) {
  const T x = static_cast<T>(v);
  std::memcpy(p, &x, sizeof(T));
}

}  // namespace

std::size_t scalar_size(ScalarType t) {
  switch (t) {
    case ScalarType::u8: case ScalarType::i8: return 1;
    case ScalarType::u16: case ScalarType::i16: return 2;
    case ScalarType::u32: case ScalarType::i32: case ScalarType::f32: return 4;
    case ScalarType::f64: return 8;
  }
  return 1;
}

const char* scalar_name(ScalarType t) {
  switch (t) {
    case ScalarType::u8: return "uint8";
    case ScalarType::i8: return "int8";
    case ScalarType::u16: return "uint16";
    case ScalarType::i16: return "int16";
    case ScalarType::u32: return "uint32";
    case ScalarType::i32: return "int32";
    case ScalarType::f32: return "float";
    case ScalarType::f64: return "double";
  }
  return "?";
}

bool is_integer(ScalarType t) { return t != ScalarType::f32 && t != ScalarType::f64; }

double ImageVolume::value(std::size_t i, int c) const {
  const std::size_t s = scalar_size(type);
  const std::uint8_t* p = bytes.data() + (i * std::size_t(components) + std::size_t(c)) * s;
  switch (type) {
    case ScalarType::u8: return *p;
    case ScalarType::i8: return static_cast<std::int8_t>(*p);
    case ScalarType::u16: { std::uint16_t x; std::memcpy(&x, p, 2); return x; }
    case ScalarType::i16: { std::int16_t x; std::memcpy(&x, p, 2); return x; }
    case ScalarType::u32: { std::uint32_t x; std::memcpy(&x, p, 4); return x; }
    case ScalarType::i32: { std::int32_t x; std::memcpy(&x, p, 4); return x; }
    case ScalarType::f32: { float x; std::memcpy(&x, p, 4); return x; }
    case ScalarType::f64: { double x; std::memcpy(&x, p, 8); return x; }
  }
  return 0.0;
}

double ImageVolume::max_value() const {
  double m = -std::numeric_limits<double>::infinity();
  const std::size_t n = voxels() * std::size_t(components);
  if (type == ScalarType::u8) {
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, double(bytes[i]));
    return m;
  }
  for (std::size_t i = 0; i < voxels(); ++i)
    for (int c = 0; c < components; ++c) m = std::max(m, value(i, c));
  return m;
}

namespace {

template <class T>
bool fits(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isfinite(v) || std::fabs(v) <= double(std::numeric_limits<T>::max());
  } else {
    // Truncation toward zero must land in range: (min − 1, max + 1) exclusive.
    return std::isfinite(v) && v > double(std::numeric_limits<T>::min()) - 1.0 &&
           v < double(std::numeric_limits<T>::max()) + 1.0;
  }
}

bool fits(ScalarType t, double v) {
  switch (t) {
    case ScalarType::u8: return fits<std::uint8_t>(v);
    case ScalarType::i8: return fits<std::int8_t>(v);
    case ScalarType::u16: return fits<std::uint16_t>(v);
    case ScalarType::i16: return fits<std::int16_t>(v);
    case ScalarType::u32: return fits<std::uint32_t>(v);
    case ScalarType::i32: return fits<std::int32_t>(v);
    case ScalarType::f32: return fits<float>(v);
    case ScalarType::f64: return true;
  }
  return false;
}

}  // namespace

std::size_t first_value_out_of_range(ScalarType t, const std::vector<double>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!fits(t, v[i])) return i;
  return v.size();
}

void ImageVolume::set_values(ScalarType t, const std::vector<double>& v) {
  if (const std::size_t k = first_value_out_of_range(t, v); k < v.size())
    throw Error(fmt::format("value {} ({}) does not fit an image of {}", k + 1, v[k], scalar_name(t)));
  type = t;
  const std::size_t s = scalar_size(t);
  bytes.assign(v.size() * s, 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint8_t* p = bytes.data() + i * s;
    switch (t) {
      case ScalarType::u8: store<std::uint8_t>(p, v[i]); break;
      case ScalarType::i8: store<std::int8_t>(p, v[i]); break;
      case ScalarType::u16: store<std::uint16_t>(p, v[i]); break;
      case ScalarType::i16: store<std::int16_t>(p, v[i]); break;
      case ScalarType::u32: store<std::uint32_t>(p, v[i]); break;
      case ScalarType::i32: store<std::int32_t>(p, v[i]); break;
      case ScalarType::f32: store<float>(p, v[i]); break;
      case ScalarType::f64: store<double>(p, v[i]); break;
    }
  }
}

std::vector<std::uint8_t> gzip_inflate(const std::uint8_t* data, std::size_t n,
                                       const std::string& what) {
  std::vector<std::uint8_t> out;
  z_stream zs{};
  // 15 + 32: accept both gzip and zlib wrappers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw Error("zlib: inflateInit2 failed");
  std::size_t pos = 0;
  std::vector<std::uint8_t> buf(1 << 20);
  int rc = Z_OK;
  while (true) {
    const std::size_t chunk = std::min<std::size_t>(n - pos, std::numeric_limits<uInt>::max());
    zs.next_in = const_cast<Bytef*>(data + pos);
    zs.avail_in = static_cast<uInt>(chunk);
    do {
      zs.next_out = buf.data();
      zs.avail_out = static_cast<uInt>(buf.size());
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        inflateEnd(&zs);
        throw Error(fmt::format("{}: corrupt gzip data ({})", what, zs.msg ? zs.msg : "zlib error"));
      }
      out.insert(out.end(), buf.data(), buf.data() + (buf.size() - zs.avail_out));
    } while (zs.avail_out == 0 && rc != Z_STREAM_END);
    pos += chunk - zs.avail_in;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (allowed by gzip) continue after the first stream end.
      if (pos < n && n - pos >= 2 && data[pos] == 0x1f && data[pos + 1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (zs.avail_in == 0 && pos >= n) {
      inflateEnd(&zs);
      throw Error(fmt::format("{}: gzip data ends early (truncated file?)", what));
    }
  }
  inflateEnd(&zs);
  return out;
}

std::vector<std::uint8_t> gzip_deflate(const std::uint8_t* data, std::size_t n) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("zlib: deflateInit2 failed");
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(n)) + 64);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(n);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw Error("zlib: deflate failed");
  out.resize(zs.total_out);
  return out;
}

ImageVolume read_nrrd(const std::string& path) {
  const SourceLoc file_loc{path, 0, 0};
  const std::vector<std::uint8_t> raw = read_input_bytes(path, file_loc);
  auto at = [&](int line) { return SourceLoc{path, line, 0}; };

  // Header: lines up to the first empty line (or the end of a detached header).
  std::size_t pos = 0;
  int line_no = 0;
  auto next_line = [&](std::string& line) -> bool {
    if (pos >= raw.size()) return false;
    std::size_t e = pos;
    while (e < raw.size() && raw[e] != '\n') ++e;
    line.assign(reinterpret_cast<const char*>(raw.data()) + pos, e - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos = e < raw.size() ? e + 1 : e;
    ++line_no;
    return true;
  };

  std::string line;
  if (!next_line(line) || line.size() != 8 || line.compare(0, 7, "NRRD000") != 0 ||
      line[7] < '1' || line[7] > '5')
    throw InputError(at(1), "not a NRRD file: the first line must be the magic NRRD0001..NRRD0005");

  struct Field { std::string value; int line; };
  std::map<std::string, Field> fields;
  bool ended_by_blank = false;
  while (next_line(line)) {
    if (line.empty()) { ended_by_blank = true; break; }
    if (line[0] == '#') continue;
    if (line.find(":=") != std::string::npos) continue;  // key/value pairs: not ours
    const std::size_t c = line.find(": ");
    if (c == std::string::npos) {
      // Some writers put "field:" with nothing after it.
      if (!line.empty() && line.back() == ':') {
        throw InputError(at(line_no), fmt::format("NRRD field '{}' has no value", line));
      }
      throw InputError(at(line_no),
                       fmt::format("malformed NRRD header line '{}' (expected 'field: value')", line));
    }
    std::string key = lower(trim(line.substr(0, c)));
    const std::string value = trim(line.substr(c + 2));
    if (key == "datafile") key = "data file";
    if (key == "byteskip") key = "byte skip";
    if (key == "lineskip") key = "line skip";
    if (fields.count(key))
      throw InputError(at(line_no), fmt::format("NRRD field '{}' given twice (first at line {})",
                                                key, fields[key].line));
    fields[key] = {value, line_no};
  }
  const int header_end_line = line_no;
  auto need = [&](const char* key) -> const Field& {
    const auto it = fields.find(key);
    if (it == fields.end())
      throw InputError(at(header_end_line), fmt::format("NRRD header has no '{}:' field", key));
    return it->second;
  };

  ImageVolume img;
  img.source = path;

  const Field& ft = need("type");
  if (!parse_type(ft.value, img.type))
    throw InputError(at(ft.line), fmt::format("unsupported NRRD type '{}' (use uchar, char, short, "
                                              "ushort, int, uint, float or double)", ft.value));

  const Field& fd = need("dimension");
  long long dim = 0;
  if (!parse_long(fd.value, dim) || dim < 1 || dim > 4)
    throw InputError(at(fd.line), fmt::format("NRRD dimension '{}' must be 1, 2, 3 or 4", fd.value));

  const Field& fs = need("sizes");
  const auto size_words = split_ws(fs.value);
  if (size_words.size() != std::size_t(dim))
    throw InputError(at(fs.line), fmt::format("NRRD sizes has {} numbers, dimension is {}",
                                              size_words.size(), dim));
  std::vector<long long> sizes;
  for (const auto& w : size_words) {
    long long s = 0;
    if (!parse_long(w, s) || s < 1 || s > (1LL << 31))
      throw InputError(at(fs.line), fmt::format("NRRD size '{}' must be a positive integer", w));
    sizes.push_back(s);
  }
  int first_space_axis = 0;
  if (dim == 4) {
    if (sizes[0] != 3)
      throw InputError(at(fs.line), fmt::format("4D NRRD: the first (fastest) axis must hold 3 vector "
                                                "components, it has {}", sizes[0]));
    img.components = 3;
    first_space_axis = 1;
  }
  for (int a = 0; a < 3; ++a) {
    const int ax = first_space_axis + a;
    img.sizes[a] = ax < dim ? static_cast<int>(sizes[ax]) : 1;
  }
  {
    long double total = 1;
    for (long long s : sizes) total *= s;
    if (total > static_cast<long double>(max_voxels) * 3)
      throw InputError(at(fs.line), fmt::format("NRRD sizes '{}' are too large ({} values)", fs.value,
                                                static_cast<double>(total)));
  }
  const int nspace = static_cast<int>(dim) - first_space_axis;

  // Spacing: "space directions" (axis-aligned) or "spacings".
  if (const auto it = fields.find("space directions"); it != fields.end()) {
    const auto vecs = split_vectors(it->second.value);
    if (vecs.size() != std::size_t(dim))
      throw InputError(at(it->second.line),
                       fmt::format("NRRD space directions has {} entries, dimension is {}", vecs.size(), dim));
    int spatial = 0;
    for (long long ax = 0; ax < dim; ++ax) {
      std::vector<double> v;
      if (!parse_vector(vecs[ax], v))
        throw InputError(at(it->second.line),
                         fmt::format("NRRD space direction '{}' is not '(x,y,z)' or 'none'", vecs[ax]));
      if (v.empty()) {
        if (ax >= first_space_axis)
          throw InputError(at(it->second.line),
                           fmt::format("NRRD space direction of spatial axis {} is 'none'", ax));
        continue;
      }
      if (ax < first_space_axis)
        throw InputError(at(it->second.line), "NRRD space direction of the vector axis must be 'none'");
      if (v.size() != std::size_t(nspace) && v.size() != 3)
        throw InputError(at(it->second.line),
                         fmt::format("NRRD space direction '{}' has {} components", vecs[ax], v.size()));
      double norm2 = 0, off = 0;
      for (std::size_t d = 0; d < v.size(); ++d) {
        norm2 += v[d] * v[d];
        if (int(d) != spatial) off = std::max(off, std::abs(v[d]));
      }
      const double norm = std::sqrt(norm2);
      if (!(norm > 0))
        throw InputError(at(it->second.line), fmt::format("NRRD space direction '{}' is zero", vecs[ax]));
      if (off > 1e-6 * norm)
        throw InputError(at(it->second.line),
                         fmt::format("NRRD space direction '{}' is not along axis {}: only axis-aligned "
                                     "(possibly flipped) images are supported", vecs[ax], spatial));
      img.spacing[spatial++] = norm;
    }
  } else if (const auto it2 = fields.find("spacings"); it2 != fields.end()) {
    const auto w = split_ws(it2->second.value);
    if (w.size() != std::size_t(dim))
      throw InputError(at(it2->second.line),
                       fmt::format("NRRD spacings has {} numbers, dimension is {}", w.size(), dim));
    for (long long ax = first_space_axis; ax < dim; ++ax) {
      double d = 0;
      if (!parse_double(w[ax], d) || !std::isfinite(d) || d == 0)
        throw InputError(at(it2->second.line),
                         fmt::format("NRRD spacing '{}' must be a non-zero number", w[ax]));
      img.spacing[ax - first_space_axis] = std::abs(d);
    }
  }
  if (const auto it = fields.find("space origin"); it != fields.end()) {
    std::vector<double> v;
    if (!parse_vector(trim(it->second.value), v) || v.empty() || v.size() > 3)
      throw InputError(at(it->second.line),
                       fmt::format("NRRD space origin '{}' is not '(x,y,z)'", it->second.value));
    for (std::size_t d = 0; d < v.size(); ++d) img.origin[d] = v[d];
  }

  // Encoding and byte order.
  std::string enc = "raw";
  int enc_line = header_end_line;
  if (const auto it = fields.find("encoding"); it != fields.end()) {
    enc = lower(it->second.value);
    enc_line = it->second.line;
  } else {
    need("encoding");
  }
  if (enc == "gz") enc = "gzip";
  if (enc == "text" || enc == "txt") enc = "ascii";
  if (enc != "raw" && enc != "gzip" && enc != "ascii")
    throw InputError(at(enc_line), fmt::format("unsupported NRRD encoding '{}' (use raw, gzip or ascii)", enc));
  const std::size_t tsize = scalar_size(img.type);
  bool big = false;
  if (const auto it = fields.find("endian"); it != fields.end()) {
    const std::string e = lower(it->second.value);
    if (e != "little" && e != "big")
      throw InputError(at(it->second.line), fmt::format("NRRD endian '{}' must be little or big", it->second.value));
    big = e == "big";
  } else if (tsize > 1 && enc != "ascii") {
    throw InputError(at(header_end_line), fmt::format("NRRD header has no 'endian:' field, needed for type {}",
                                                      scalar_name(img.type)));
  }
  long long byte_skip = 0, line_skip = 0;
  if (const auto it = fields.find("byte skip"); it != fields.end()) {
    if (!parse_long(it->second.value, byte_skip) || byte_skip < -1)
      throw InputError(at(it->second.line), fmt::format("NRRD byte skip '{}' must be ≥ -1", it->second.value));
    if (byte_skip == -1 && enc != "raw")
      throw InputError(at(it->second.line), "NRRD byte skip -1 is only allowed with raw encoding");
  }
  if (const auto it = fields.find("line skip"); it != fields.end()) {
    if (!parse_long(it->second.value, line_skip) || line_skip < 0)
      throw InputError(at(it->second.line), fmt::format("NRRD line skip '{}' must be ≥ 0", it->second.value));
  }

  // The data: after the blank line, or in the detached data file.
  std::vector<std::uint8_t> detached;
  const std::uint8_t* data = nullptr;
  std::size_t data_n = 0;
  SourceLoc data_loc = file_loc;
  if (const auto it = fields.find("data file"); it != fields.end()) {
    const std::string name = it->second.value;
    data_loc = at(it->second.line);
    if (lower(name).rfind("list", 0) == 0 || name.find('%') != std::string::npos)
      throw InputError(data_loc, fmt::format("NRRD multi-file data '{}' is not supported", name));
    std::filesystem::path p(name);
    if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
    detached = read_input_bytes(p.string(), data_loc);
    data = detached.data();
    data_n = detached.size();
  } else {
    if (!ended_by_blank)
      throw InputError(at(header_end_line), "NRRD header ends without a blank line and has no 'data file:'");
    data = raw.data() + pos;
    data_n = raw.size() - pos;
  }
  // line skip, then byte skip.
  for (long long l = 0; l < line_skip; ++l) {
    const std::uint8_t* nl = static_cast<const std::uint8_t*>(std::memchr(data, '\n', data_n));
    if (!nl) throw InputError(data_loc, fmt::format("NRRD line skip {} passes the end of the data", line_skip));
    data_n -= std::size_t(nl + 1 - data);
    data = nl + 1;
  }
  const std::size_t values = img.voxels() * std::size_t(img.components);
  const std::size_t need_bytes = values * tsize;
  std::vector<std::uint8_t> inflated;
  if (enc == "raw") {
    if (byte_skip == -1) {
      if (data_n < need_bytes)
        throw InputError(at(fs.line), fmt::format("NRRD data has {} bytes, sizes {} of {} need {}", data_n,
                                                  fs.value, scalar_name(img.type), need_bytes));
      data += data_n - need_bytes;
      data_n = need_bytes;
    } else {
      if (std::size_t(byte_skip) > data_n)
        throw InputError(data_loc, fmt::format("NRRD byte skip {} passes the end of the data", byte_skip));
      data += byte_skip;
      data_n -= std::size_t(byte_skip);
    }
  } else if (enc == "gzip") {
    try {
      inflated = gzip_inflate(data, data_n, path);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      throw InputError(data_loc, e.what());
    }
    if (std::size_t(byte_skip) > inflated.size())
      throw InputError(data_loc, fmt::format("NRRD byte skip {} passes the end of the data", byte_skip));
    data = inflated.data() + byte_skip;
    data_n = inflated.size() - std::size_t(byte_skip);
  }

  if (enc == "ascii") {
    std::vector<double> v;
    v.reserve(values);
    std::string text(reinterpret_cast<const char*>(data), data_n);
    const char* p = text.c_str();
    while (true) {
      while (*p && (std::isspace(static_cast<unsigned char>(*p)) || *p == ',')) ++p;
      if (!*p) break;
      char* e = nullptr;
      const double d = std::strtod(p, &e);
      if (e == p)
        throw InputError(data_loc, fmt::format("NRRD ascii data: '{}' is not a number", std::string(p, std::min<std::size_t>(20, std::strlen(p)))));
      v.push_back(d);
      p = e;
    }
    if (v.size() != values)
      throw InputError(at(fs.line), fmt::format("NRRD ascii data has {} values, sizes {} need {}", v.size(),
                                                fs.value, values));
    if (const std::size_t k = first_value_out_of_range(img.type, v); k < v.size())
      throw InputError(data_loc, fmt::format("NRRD ascii data: value {} ({}) does not fit the type {}", k + 1, v[k],
                                             scalar_name(img.type)));
    img.set_values(img.type, v);
    return img;
  }

  if (data_n < need_bytes)
    throw InputError(at(fs.line), fmt::format("NRRD data has {} bytes, sizes {} of {} need {} (truncated file "
                                              "or wrong sizes)", data_n, fs.value, scalar_name(img.type), need_bytes));
  if (data_n > need_bytes) {
    // Tolerate trailing whitespace some writers add after raw data; anything else means the
    // sizes or type are wrong.
    bool ws = data_n - need_bytes <= 2;
    for (std::size_t i = need_bytes; ws && i < data_n; ++i) ws = data[i] == '\n' || data[i] == '\r';
    if (!ws)
      throw InputError(at(fs.line), fmt::format("NRRD data has {} bytes, sizes {} of {} need only {} (wrong "
                                                "sizes or type?)", data_n, fs.value, scalar_name(img.type), need_bytes));
  }
  img.bytes.assign(data, data + need_bytes);
  if (big != (std::endian::native == std::endian::big)) byte_swap(img.bytes, tsize);
  return img;
}

void write_nrrd(const std::string& path, const ImageVolume& img, const NrrdWriteOptions& o) {
  const std::size_t tsize = scalar_size(img.type);
  std::vector<std::uint8_t> body = img.bytes;
  if (o.big_endian != (std::endian::native == std::endian::big)) byte_swap(body, tsize);
  if (o.encoding == NrrdEncoding::gzip) body = gzip_deflate(body.data(), body.size());

  std::string h = "NRRD0004\n# written by heartwave\n";
  h += fmt::format("type: {}\n", scalar_name(img.type));
  if (img.components == 3) {
    h += "dimension: 4\nspace dimension: 3\n";
    h += fmt::format("sizes: 3 {} {} {}\n", img.sizes[0], img.sizes[1], img.sizes[2]);
    h += fmt::format("space directions: none ({},0,0) (0,{},0) (0,0,{})\n", img.spacing[0], img.spacing[1],
                     img.spacing[2]);
    h += "kinds: vector domain domain domain\n";
  } else {
    h += "dimension: 3\nspace dimension: 3\n";
    h += fmt::format("sizes: {} {} {}\n", img.sizes[0], img.sizes[1], img.sizes[2]);
    h += fmt::format("space directions: ({},0,0) (0,{},0) (0,0,{})\n", img.spacing[0], img.spacing[1],
                     img.spacing[2]);
    h += "kinds: domain domain domain\n";
  }
  h += fmt::format("space origin: ({},{},{})\n", img.origin[0], img.origin[1], img.origin[2]);
  h += fmt::format("endian: {}\n", o.big_endian ? "big" : "little");
  h += fmt::format("encoding: {}\n", o.encoding == NrrdEncoding::gzip ? "gzip" : "raw");

  auto write = [](const std::string& p, const std::string& head, const std::vector<std::uint8_t>& b) {
    std::ofstream out(p, std::ios::binary);
    if (!out) throw Error(fmt::format("cannot write '{}'", p));
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    if (!out) throw Error(fmt::format("write to '{}' failed", p));
  };
  if (o.detached) {
    std::filesystem::path dp(path);
    const std::string data_name =
        dp.stem().string() + (o.encoding == NrrdEncoding::gzip ? ".raw.gz" : ".raw");
    h += fmt::format("data file: {}\n", data_name);
    write(path, h, {});
    write((dp.parent_path() / data_name).string(), "", body);
  } else {
    write(path, h + "\n", body);
  }
}

}  // namespace hw::io
