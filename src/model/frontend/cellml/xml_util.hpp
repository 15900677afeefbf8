// Small helpers over libxml2 nodes shared by the CellML reader and the MathML parser.
//
// They exist so that every error made while walking the XML carries file:line, and so
// that libxml2's manual memory handling stays in one place.
#pragma once

#include <libxml/tree.h>

#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "model/frontend/cellml/cellml_internal.hpp"

namespace hw::model::cellml {

inline constexpr const char* kMathmlNs = "http://www.w3.org/1998/Math/MathML";

inline std::string local_name(const xmlNode* n) {
  return n && n->name ? reinterpret_cast<const char*>(n->name) : "";
}

inline std::string ns_of(const xmlNode* n) {
  return n && n->ns && n->ns->href ? reinterpret_cast<const char*>(n->ns->href) : "";
}

inline int line_of(const xmlNode* n) {
  long l = n ? xmlGetLineNo(n) : 0;
  return l > 0 && l < 0x7fffffff ? static_cast<int>(l) : 0;
}

inline SourceLoc loc_of(const std::string& file, const xmlNode* n) {
  return SourceLoc{file, line_of(n), 0};
}

[[noreturn]] inline void fail_at(const std::string& file, const xmlNode* n,
                                 const std::string& msg) {
  throw InputError(loc_of(file, n), msg);
}

// Attribute by local name, whatever its namespace prefix (cellml:units, rdf:about).
inline std::optional<std::string> attr(const xmlNode* n, const char* name) {
  for (const xmlAttr* a = n->properties; a; a = a->next) {
    if (a->name && std::string(reinterpret_cast<const char*>(a->name)) == name) {
      xmlChar* v = xmlNodeListGetString(n->doc, a->children, 1);
      std::string s = v ? reinterpret_cast<const char*>(v) : "";
      if (v) xmlFree(v);
      return s;
    }
  }
  return std::nullopt;
}

inline std::string text_of(const xmlNode* n) {
  xmlChar* v = xmlNodeGetContent(n);
  std::string s = v ? reinterpret_cast<const char*>(v) : "";
  if (v) xmlFree(v);
  return s;
}

inline std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

inline bool is_element(const xmlNode* n) { return n && n->type == XML_ELEMENT_NODE; }

// Parses the content of a <math> element into the component's equations.
void read_math(const xmlNode* math, const std::string& file, RawComponent& comp);

}  // namespace hw::model::cellml
