// The few libxml2 tree helpers the VTK XML readers share (images and unstructured grids):
// an owning document pointer, an attribute as a string, and an element child by name.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cctype>
#include <cstring>
#include <memory>
#include <string>

#include "core/error.hpp"

namespace hw::io::xml {

struct DocDeleter {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};

// The attribute `name` of n, or "" when it has none.
inline std::string attr(xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (!v) return {};
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

inline bool is(xmlNode* n, const char* name) {
  return n->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(n->name), name) == 0;
}

// The first element child of n called `name`; null when none (or n is null).
inline xmlNode* child(xmlNode* n, const char* name) {
  for (xmlNode* c = n ? n->children : nullptr; c; c = c->next)
    if (is(c, name)) return c;
  return nullptr;
}

using Doc = std::unique_ptr<xmlDoc, DocDeleter>;

// `n` bytes of XML from `path` parsed without network access: an InputError at the line
// libxml2 names ("malformed XML: ...") when it is not well formed.
inline Doc parse(const char* data, std::size_t n, const std::string& path) {
  xmlInitParser();
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE;
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) throw Error("libxml2: cannot allocate a parser context");
  xmlDoc* raw = xmlCtxtReadMemory(ctxt, data, static_cast<int>(n), nullptr, nullptr, options);
  if (!raw) {
    const xmlError* e = xmlCtxtGetLastError(ctxt);
    SourceLoc loc{path, e ? e->line : 0, 0};
    std::string msg = e && e->message ? e->message : "unknown error";
    while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.back()))) msg.pop_back();
    xmlFreeParserCtxt(ctxt);
    throw InputError(loc, "malformed XML: " + msg);
  }
  xmlFreeParserCtxt(ctxt);
  return Doc(raw);
}

}  // namespace hw::io::xml
