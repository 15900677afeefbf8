// Shared helpers for the output tests: per-process scratch folders, XML parsing, decoding
// the binary DataArrays of our .vti files, and reading HDF5 datasets back.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/base64.hpp"

namespace hw::io::testing {

// A whole HDF5 dataset as T (native float or double), its dimensions in *dims.
template <class T>
std::vector<T> read_dataset(hid_t f, const std::string& name, std::vector<hsize_t>* dims = nullptr) {
  hid_t ds = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(ds, 0) << name;
  if (ds < 0) return {};
  hid_t sp = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(sp);
  std::vector<hsize_t> d(rank, 0);
  H5Sget_simple_extent_dims(sp, d.data(), nullptr);
  hsize_t n = 1;
  for (auto x : d) n *= x;
  std::vector<T> out(n);
  const hid_t type = sizeof(T) == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  EXPECT_GE(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << name;
  H5Sclose(sp);
  H5Dclose(ds);
  if (dims) *dims = d;
  return out;
}

// A fresh folder under the temp dir, removed at scope exit.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("hw_io_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& leaf) const { return (path / leaf).string(); }
};

// Owns a parsed XML document; null doc when the file is not well-formed.
struct XmlDoc {
  xmlDocPtr doc = nullptr;
  explicit XmlDoc(const std::string& path) {
    doc = xmlReadFile(path.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR |
                                                 XML_PARSE_NOWARNING | XML_PARSE_HUGE);
  }
  ~XmlDoc() {
    if (doc) xmlFreeDoc(doc);
  }
  xmlNodePtr root() const { return doc ? xmlDocGetRootElement(doc) : nullptr; }
};

inline std::string attr(xmlNodePtr n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (!v) return "";
  std::string s(reinterpret_cast<char*>(v));
  xmlFree(v);
  return s;
}

inline std::string text(xmlNodePtr n) {
  xmlChar* v = xmlNodeGetContent(n);
  std::string s = v ? reinterpret_cast<char*>(v) : "";
  if (v) xmlFree(v);
  return s;
}

// Every element named `name` below n (depth first).
inline void find_all(xmlNodePtr n, const char* name, std::vector<xmlNodePtr>& out) {
  for (xmlNodePtr c = n ? n->children : nullptr; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (std::strcmp(reinterpret_cast<const char*>(c->name), name) == 0) out.push_back(c);
    find_all(c, name, out);
  }
}

// Decodes a VTK binary inline array (UInt64 header as its own base64 block, then data).
// Returns the data bytes; header_bytes receives the byte count the header announced.
inline std::vector<unsigned char> decode_vtk_array(const std::string& raw,
                                                   std::uint64_t* header_bytes) {
  std::string s;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  const std::size_t hl = base64_block_length(8);
  auto h = base64_decode(s.substr(0, hl));
  std::uint64_t count = 0;
  if (h.size() == 8) std::memcpy(&count, h.data(), 8);
  *header_bytes = count;
  return base64_decode(s.substr(hl));
}

}  // namespace hw::io::testing
