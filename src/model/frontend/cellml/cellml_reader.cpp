// CellML XML → RawModel: components, variables with resolved units, connections,
// encapsulation, oxmeta annotations, and CellML 1.1/2.0 imports of local files.
//
// Why: libxml2 gives us a tree; this file turns it into plain C++ data while the XML
// node (and so its line number) is still at hand, so every later error is located.
// Guarantees: no network, no DTD loading, no entity expansion (documents declaring
// entities are rejected); imports never leave the root folder, never use a URL scheme,
// and never loop.
#include <libxml/parser.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "model/frontend/cellml/xml_util.hpp"

namespace hw::model::cellml {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxImportDepth = 32;

bool is_cellml_ns(const std::string& ns) {
  return ns == "http://www.cellml.org/cellml/1.0#" || ns == "http://www.cellml.org/cellml/1.1#" ||
         ns == "http://www.cellml.org/cellml/2.0#";
}

struct DocDeleter {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using DocPtr = std::unique_ptr<xmlDoc, DocDeleter>;

DocPtr parse_xml(std::string_view xml, const std::string& file) {
  static const bool init = [] {
    xmlInitParser();
    return true;
  }();
  (void)init;
  if (xml.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError(SourceLoc{file, 0, 0}, "file too large");
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) throw Error("libxml2: cannot allocate a parser context");
  // NONET: no network; no NOENT (entities are not substituted), no DTDLOAD/DTDATTR.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlDoc* doc = xmlCtxtReadMemory(ctxt, xml.data(), static_cast<int>(xml.size()),
                                  nullptr, nullptr, options);
  if (!doc) {
    const xmlError* e = xmlCtxtGetLastError(ctxt);
    SourceLoc loc{file, e ? e->line : 0, e && e->int2 > 0 ? e->int2 : 0};
    std::string msg = e && e->message ? trim(e->message) : "unknown error";
    xmlFreeParserCtxt(ctxt);
    throw InputError(loc, "malformed XML: " + msg);
  }
  xmlFreeParserCtxt(ctxt);
  DocPtr owned(doc);
  if (doc->intSubset && doc->intSubset->entities) {
    auto pos = xml.find("<!DOCTYPE");
    int line = 1;
    for (std::size_t i = 0; i < pos && i < xml.size(); ++i) line += xml[i] == '\n';
    throw InputError(SourceLoc{file, line, 0},
                     "DOCTYPE with entity declarations is not allowed in a CellML file");
  }
  return owned;
}

std::string read_file(const std::string& path, const SourceLoc& where) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(where, "'" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(where, "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::map<std::string, double>& prefix_values() {
  static const std::map<std::string, double> p = {
      {"yotta", 1e24}, {"zetta", 1e21}, {"exa", 1e18},   {"peta", 1e15},   {"tera", 1e12},
      {"giga", 1e9},   {"mega", 1e6},   {"kilo", 1e3},   {"hecto", 1e2},   {"deka", 1e1},
      {"deca", 1e1},   {"deci", 1e-1},  {"centi", 1e-2}, {"milli", 1e-3},  {"micro", 1e-6},
      {"nano", 1e-9},  {"pico", 1e-12}, {"femto", 1e-15}, {"atto", 1e-18}, {"zepto", 1e-21},
      {"yocto", 1e-24}};
  return p;
}

// Units definitions visible from one place: a component's own, then the model's
// (including imported ones), then the built-ins.
class UnitsResolver {
 public:
  UnitsResolver(const std::string& file, std::map<std::string, Units>& resolved_model)
      : file_(file), model_resolved_(resolved_model) {}

  void add_model_def(const xmlNode* n, const std::string& name) {
    if (model_defs_.count(name) || model_resolved_.count(name))
      fail_at(file_, n, "units '" + name + "' defined twice");
    model_defs_[name] = n;
  }

  // Resolves a name seen in `component_defs` scope (may be null for model scope).
  Units resolve(const std::string& name, const xmlNode* at,
                const std::map<std::string, const xmlNode*>* component_defs) {
    if (component_defs) {
      if (auto it = component_defs->find(name); it != component_defs->end()) {
        std::string key = "#" + std::to_string(reinterpret_cast<std::uintptr_t>(it->second));
        return define(key, it->second, component_defs);
      }
    }
    if (auto it = model_resolved_.find(name); it != model_resolved_.end()) return it->second;
    if (auto it = model_defs_.find(name); it != model_defs_.end()) {
      Units u = define(name, it->second, nullptr);
      model_resolved_[name] = u;
      return u;
    }
    if (auto b = builtin_units(name); b && builtin_table_name(name)) return *b;
    fail_at(file_, at, "unknown units '" + name + "'");
  }

  void resolve_all() {
    for (const auto& [name, node] : model_defs_) resolve(name, node, nullptr);
  }

 private:
  // CellML built-ins are the plain names only ("millivolt" must be defined by the model).
  static bool builtin_table_name(const std::string& name) {
    if (name == "kilogram") return true;  // a base unit of its own, not kilo + gram
    for (const auto& [p, v] : prefix_values())
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0 &&
          builtin_units(name.substr(p.size())))
        return false;
    return true;
  }

  Units define(const std::string& key, const xmlNode* def,
               const std::map<std::string, const xmlNode*>* component_defs) {
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (busy_.count(key))
      fail_at(file_, def, "units '" + attr(def, "name").value_or("") + "' are defined in terms of themselves");
    busy_.insert(key);
    Units total;
    if (attr(def, "base_units").value_or("no") == "yes") {
      // A new base unit has no SI dimension; treat it as dimensionless.
      busy_.erase(key);
      cache_[key] = total;
      return total;
    }
    std::vector<const xmlNode*> units;
    for (const xmlNode* c = def->children; c; c = c->next)
      if (is_element(c)) {
        if (local_name(c) != "unit")
          fail_at(file_, c, "unexpected <" + local_name(c) + "> inside <units>");
        units.push_back(c);
      }
    for (const xmlNode* u : units) {
      auto ref = attr(u, "units");
      if (!ref) fail_at(file_, u, "<unit> needs a units attribute");
      Units base = resolve(*ref, u, component_defs);
      double prefix = 1.0;
      if (auto p = attr(u, "prefix")) {
        if (auto it = prefix_values().find(*p); it != prefix_values().end()) {
          prefix = it->second;
        } else if (auto v = parse_number(*p); v && std::abs(*v) <= 100) {
          prefix = std::pow(10.0, *v);
        } else {
          fail_at(file_, u, "unknown prefix '" + *p + "'");
        }
      }
      auto num = [&](const char* a, double dflt) {
        auto s = attr(u, a);
        if (!s) return dflt;
        auto v = parse_number(*s);
        if (!v) fail_at(file_, u, std::string("invalid ") + a + " '" + *s + "'");
        return *v;
      };
      double exponent = num("exponent", 1.0);
      double multiplier = num("multiplier", 1.0);
      double offset = num("offset", 0.0);
      if (multiplier == 0.0 || std::abs(exponent) > 100)
        fail_at(file_, u, "multiplier must be non-zero and exponent within +-100");
      double scale = multiplier * prefix;
      if (units.size() == 1 && exponent == 1.0) {
        // value_base = scale * q + offset, so SI = (q + (offset + base.offset)/scale) *
        // scale * base.factor.
        total.dim = base.dim;
        total.factor = scale * base.factor;
        total.offset = (offset + base.offset) / scale;
      } else {
        if (offset != 0.0) fail_at(file_, u, "offset is only allowed on a lone unit with exponent 1");
        Units s = base;
        s.offset = 0.0;
        s.factor *= scale;
        total = total * s.pow(exponent);
      }
    }
    if (!std::isfinite(total.factor) || total.factor == 0.0)
      fail_at(file_, def, "units '" + attr(def, "name").value_or("") + "' overflow");
    busy_.erase(key);
    cache_[key] = total;
    return total;
  }

  const std::string& file_;
  std::map<std::string, Units>& model_resolved_;
  std::map<std::string, const xmlNode*> model_defs_;
  std::map<std::string, Units> cache_;
  std::set<std::string> busy_;
};

// cmeta:id → oxmeta term, from every rdf:Description in the document.
void collect_oxmeta(const xmlNode* n, std::map<std::string, std::string>& out) {
  for (; n; n = n->next) {
    if (!is_element(n)) continue;
    if (local_name(n) == "Description") {
      std::string about = attr(n, "about").value_or("");
      if (!about.empty() && about[0] == '#') {
        for (const xmlNode* c = n->children; c; c = c->next) {
          if (!is_element(c) || local_name(c) != "is") continue;
          std::string res = attr(c, "resource").value_or("");
          auto pos = res.find("oxford-metadata#");
          if (pos == std::string::npos) continue;
          std::string term = res.substr(pos + 16);
          if (!term.empty() && !out.count(about.substr(1))) out[about.substr(1)] = term;
        }
      }
    }
    collect_oxmeta(n->children, out);
  }
}

std::vector<const xmlNode*> children_named(const xmlNode* n, const char* name) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* c = n->children; c; c = c->next)
    if (is_element(c) && local_name(c) == name && is_cellml_ns(ns_of(c))) out.push_back(c);
  return out;
}

std::string required(const std::string& file, const xmlNode* n, const char* a) {
  auto v = attr(n, a);
  if (!v || trim(*v).empty())
    fail_at(file, n, "<" + local_name(n) + "> needs a '" + a + "' attribute");
  return trim(*v);
}

void read_encapsulation(const std::string& file, const xmlNode* ref, RawModel& m) {
  std::string parent = required(file, ref, "component");
  for (const xmlNode* c : children_named(ref, "component_ref")) {
    m.children[parent].push_back(required(file, c, "component"));
    read_encapsulation(file, c, m);
  }
}

class DocumentReader {
 public:
  DocumentReader(const std::string& file, const std::string& dir, const std::string& root_dir,
                 std::vector<std::string>& stack)
      : file_(file), dir_(dir), root_dir_(root_dir), stack_(stack) {}

  RawModel read(std::string_view xml) {
    DocPtr doc = parse_xml(xml, file_);
    const xmlNode* root = xmlDocGetRootElement(doc.get());
    if (!root) throw InputError(SourceLoc{file_, 1, 0}, "empty document");
    if (local_name(root) != "model" || !is_cellml_ns(ns_of(root)))
      fail_at(file_, root,
              "not a CellML model: root element must be <model> in a CellML 1.0, 1.1 or 2.0 "
              "namespace (found <" + local_name(root) + "> in '" + ns_of(root) + "')");
    RawModel m;
    m.file = file_;
    m.name = attr(root, "name").value_or("");
    std::map<std::string, std::string> oxmeta;
    collect_oxmeta(root->children, oxmeta);

    UnitsResolver units(file_, m.units);
    // Imports first so that imported units and components are visible.
    for (const xmlNode* c = root->children; c; c = c->next) {
      if (!is_element(c) || !is_cellml_ns(ns_of(c))) continue;
      std::string n = local_name(c);
      if (n == "import") read_import(c, m);
    }
    for (const xmlNode* c = root->children; c; c = c->next) {
      if (!is_element(c) || !is_cellml_ns(ns_of(c))) continue;
      if (local_name(c) == "units") units.add_model_def(c, required(file_, c, "name"));
    }
    units.resolve_all();
    for (const xmlNode* c = root->children; c; c = c->next) {
      if (!is_element(c) || !is_cellml_ns(ns_of(c))) continue;
      std::string n = local_name(c);
      if (n == "component") {
        m.components.push_back(read_component(c, units, oxmeta));
      } else if (n == "connection") {
        m.connections.push_back(read_connection(c));
      } else if (n == "group") {
        bool encaps = false;
        for (const xmlNode* r : children_named(c, "relationship_ref"))
          if (attr(r, "relationship").value_or("") == "encapsulation") encaps = true;
        if (encaps)
          for (const xmlNode* r : children_named(c, "component_ref")) read_encapsulation(file_, r, m);
      } else if (n == "encapsulation") {
        for (const xmlNode* r : children_named(c, "component_ref")) read_encapsulation(file_, r, m);
      } else if (n == "units" || n == "import") {
        // done above
      } else {
        fail_at(file_, c, "unsupported CellML element <" + n + ">");
      }
    }
    std::set<std::string> seen;
    for (const auto& comp : m.components)
      if (!seen.insert(comp.name).second)
        throw InputError(SourceLoc{comp.file, comp.line, 0},
                         "component '" + comp.name + "' defined twice");
    return m;
  }

 private:
  RawComponent read_component(const xmlNode* c, UnitsResolver& units,
                              const std::map<std::string, std::string>& oxmeta) {
    RawComponent comp;
    comp.name = required(file_, c, "name");
    comp.file = file_;
    comp.line = line_of(c);
    std::map<std::string, const xmlNode*> local_units;
    for (const xmlNode* u : children_named(c, "units")) {
      std::string name = required(file_, u, "name");
      if (!local_units.emplace(name, u).second)
        fail_at(file_, u, "units '" + name + "' defined twice in component '" + comp.name + "'");
    }
    std::set<std::string> names;
    for (const xmlNode* k = c->children; k; k = k->next) {
      if (!is_element(k)) continue;
      std::string n = local_name(k);
      if (n == "math" && ns_of(k) == kMathmlNs) {
        read_math(k, file_, comp);
        continue;
      }
      if (!is_cellml_ns(ns_of(k))) continue;  // RDF, documentation
      if (n == "units") continue;
      if (n == "reaction") fail_at(file_, k, "CellML <reaction> is not supported");
      if (n == "reset")
        fail_at(file_, k, "CellML 2.0 <reset> (variable '" + attr(k, "variable").value_or("") +
                              "') is not supported: Heartwave integrates ODEs without discontinuities; "
                              "write the reset's effect as a piecewise expression");
      if (n != "variable") fail_at(file_, k, "unsupported element <" + n + "> in a component");
      RawVariable v;
      v.name = required(file_, k, "name");
      v.file = file_;
      v.line = line_of(k);
      if (!names.insert(v.name).second)
        fail_at(file_, k, "variable '" + v.name + "' declared twice in component '" + comp.name + "'");
      v.units_name = required(file_, k, "units");
      v.units = units.resolve(v.units_name, k, &local_units);
      v.initial = trim(attr(k, "initial_value").value_or(""));
      v.public_interface = attr(k, "public_interface").value_or("");
      v.private_interface = attr(k, "private_interface").value_or("");
      if (auto i = attr(k, "interface")) v.public_interface = *i;  // CellML 2.0
      v.cmeta_id = attr(k, "id").value_or("");
      if (auto it = oxmeta.find(v.cmeta_id); !v.cmeta_id.empty() && it != oxmeta.end())
        v.ontology = it->second;
      comp.variables.push_back(std::move(v));
    }
    return comp;
  }

  RawConnection read_connection(const xmlNode* c) {
    RawConnection conn;
    conn.file = file_;
    conn.line = line_of(c);
    if (auto a = attr(c, "component_1")) {  // CellML 2.0
      conn.component_1 = trim(*a);
      conn.component_2 = required(file_, c, "component_2");
    }
    auto mc = children_named(c, "map_components");
    if (mc.size() > 1) fail_at(file_, mc[1], "more than one <map_components>");
    if (mc.size() == 1) {
      conn.component_1 = required(file_, mc[0], "component_1");
      conn.component_2 = required(file_, mc[0], "component_2");
    }
    if (conn.component_1.empty()) fail_at(file_, c, "<connection> without <map_components>");
    for (const xmlNode* mv : children_named(c, "map_variables"))
      conn.variables.emplace_back(required(file_, mv, "variable_1"),
                                  required(file_, mv, "variable_2"));
    return conn;
  }

  // Resolves an import href to a local file under root_dir_, or fails.
  std::string import_path(const xmlNode* imp, const std::string& href) {
    if (root_dir_.empty())
      fail_at(file_, imp, "imports are not allowed here (no base folder given): '" + href + "'");
    if (href.find("://") != std::string::npos || href.rfind("file:", 0) == 0)
      fail_at(file_, imp, "import of '" + href + "' rejected: only local relative files may be imported");
    if (href.empty() || href[0] == '/' || href[0] == '\\')
      fail_at(file_, imp, "import of '" + href + "' rejected: absolute paths are not allowed");
    fs::path root = fs::path(root_dir_).lexically_normal();
    fs::path full = (fs::path(dir_) / href).lexically_normal();
    fs::path rel = full.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..")
      fail_at(file_, imp, "import of '" + href + "' rejected: it leaves the model's folder '" +
                               root_dir_ + "'");
    return full.string();
  }

  void read_import(const xmlNode* imp, RawModel& m) {
    std::string href = trim(attr(imp, "href").value_or(""));
    if (href.empty()) fail_at(file_, imp, "<import> needs an xlink:href attribute");
    std::string path = import_path(imp, href);
    std::string key = fs::weakly_canonical(path).string();
    for (const auto& s : stack_)
      if (s == key) {
        std::string chain;
        for (const auto& f : stack_) chain += fs::path(f).filename().string() + " -> ";
        fail_at(file_, imp, "import cycle: " + chain + fs::path(key).filename().string());
      }
    if (stack_.size() >= kMaxImportDepth) fail_at(file_, imp, "imports nested too deeply");
    std::string text = read_file(path, loc_of(file_, imp));
    stack_.push_back(key);
    RawModel sub = read_document(text, path, fs::path(path).parent_path().string(), root_dir_,
                                 stack_);
    stack_.pop_back();

    for (const xmlNode* c = imp->children; c; c = c->next) {
      if (!is_element(c) || !is_cellml_ns(ns_of(c))) continue;
      std::string n = local_name(c);
      // 1.1 names the children <units> and <component>; 2.0 <import_units> and
      // <import_component>, with the same attributes.
      if (n == "units" || n == "import_units") {
        std::string name = required(file_, c, "name");
        std::string ref = required(file_, c, "units_ref");
        Units u;
        if (auto it = sub.units.find(ref); it != sub.units.end()) u = it->second;
        else if (auto b = builtin_units(ref)) u = *b;
        else fail_at(file_, c, "imported units '" + ref + "' not found in '" + href + "'");
        if (!m.units.emplace(name, u).second) fail_at(file_, c, "units '" + name + "' defined twice");
      } else if (n == "component" || n == "import_component") {
        import_component(c, required(file_, c, "name"), required(file_, c, "component_ref"),
                         sub, href, m);
      } else {
        fail_at(file_, c, "unexpected <" + n + "> inside <import>");
      }
    }
  }

  // Copies the component `ref` of `sub` (renamed `name`) with its encapsulated
  // descendants and the connections among them.
  void import_component(const xmlNode* at, const std::string& name, const std::string& ref,
                        const RawModel& sub, const std::string& href, RawModel& m) {
    std::map<std::string, std::string> rename;  // sub name → local name
    std::vector<std::string> todo{ref};
    rename[ref] = name;
    for (std::size_t i = 0; i < todo.size(); ++i) {
      auto it = sub.children.find(todo[i]);
      if (it == sub.children.end()) continue;
      for (const auto& child : it->second) {
        if (rename.count(child)) continue;
        rename[child] = name + "__" + child;
        todo.push_back(child);
        m.children[rename[todo[i]]].push_back(rename[child]);
      }
    }
    bool found = false;
    for (const auto& comp : sub.components) {
      auto r = rename.find(comp.name);
      if (r == rename.end()) continue;
      if (comp.name == ref) found = true;
      RawComponent copy;
      copy.name = r->second;
      copy.file = comp.file;
      copy.line = comp.line;
      copy.variables = comp.variables;
      for (const auto& eq : comp.equations) {
        Equation e;
        e.lhs = eq.lhs;
        e.is_ode = eq.is_ode;
        e.bvar = eq.bvar;
        e.line = eq.line;
        e.rhs = clone(*eq.rhs);
        copy.equations.push_back(std::move(e));
      }
      m.components.push_back(std::move(copy));
    }
    if (!found) fail_at(file_, at, "component '" + ref + "' not found in '" + href + "'");
    for (const auto& conn : sub.connections) {
      auto a = rename.find(conn.component_1), b = rename.find(conn.component_2);
      if (a == rename.end() || b == rename.end()) continue;
      RawConnection c = conn;
      c.component_1 = a->second;
      c.component_2 = b->second;
      m.connections.push_back(std::move(c));
    }
  }

  static std::unique_ptr<MathNode> clone(const MathNode& n) {
    auto c = std::make_unique<MathNode>();
    c->kind = n.kind;
    c->value = n.value;
    c->name = n.name;
    c->bvar = n.bvar;
    c->has_otherwise = n.has_otherwise;
    c->line = n.line;
    for (const auto& a : n.args) c->args.push_back(clone(*a));
    if (n.degree) c->degree = clone(*n.degree);
    if (n.logbase) c->logbase = clone(*n.logbase);
    return c;
  }

  const std::string& file_;
  const std::string& dir_;
  const std::string& root_dir_;
  std::vector<std::string>& stack_;
};

}  // namespace

RawModel read_document(std::string_view xml, const std::string& filename, const std::string& dir,
                       const std::string& root_dir, std::vector<std::string>& stack) {
  return DocumentReader(filename, dir, root_dir, stack).read(xml);
}

}  // namespace hw::model::cellml
