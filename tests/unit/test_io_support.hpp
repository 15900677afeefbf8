// Shared helpers for the output tests: per-process scratch folders, XML parsing, and
// decoding the binary DataArrays of our .vti files.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/base64.hpp"

namespace hw::io::testing {

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
