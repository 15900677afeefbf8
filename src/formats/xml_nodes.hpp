// The few libxml2 tree helpers the VTK XML readers share (images and unstructured grids):
// an owning document pointer, an attribute as a string, and an element child by name.
#pragma once

#include <libxml/tree.h>

#include <cstring>
#include <string>

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

}  // namespace hw::io::xml
