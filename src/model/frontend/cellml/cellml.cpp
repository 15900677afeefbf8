// Flattening a RawModel into a Model: connected variables become one symbol, each symbol
// is classified (time, state, parameter, algebraic) and MathML is lowered to the ExprPool.
//
// Why: CellML spreads one physical quantity over many components (V in membrane, V in
// every channel); simulators want one symbol per quantity. Guarantees:
//  - each connected set has exactly one definition (ODE, equation or initial value),
//    else an InputError naming the variable and component;
//  - a variable connected in different units of the same dimension becomes an algebraic
//    source*scale + offset; different dimensions are an InputError naming both ends;
//  - derivatives used on right-hand sides are replaced by their ODE's expression;
//  - names are valid identifiers, unique in the Model (docs/cellml.md: naming rules).
#include "model/frontend/cellml/cellml.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "model/analysis/roles.hpp"
#include "model/frontend/cellml/cellml_internal.hpp"

namespace hw::model {

namespace {

using cellml::Equation;
using cellml::MathNode;
using cellml::RawModel;
using cellml::RawVariable;

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) {
    for (std::size_t i = 0; i < n; ++i) parent[i] = static_cast<std::uint32_t>(i);
  }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

struct VarInfo {
  std::uint32_t comp = 0;
  const RawVariable* raw = nullptr;
  const Equation* eq = nullptr;  // defining equation, if any
  bool is_bvar = false;
  // value_of_this = value_of_symbol * scale + offset (symbol = the set's source).
  double scale = 1.0, offset = 0.0;
  ExprId value = kNoExpr;        // expression for this variable's value
  VarKind kind = VarKind::time;  // of the set's source
  std::uint32_t index = kNone;   // of the set's source within its kind
  std::uint32_t source = kNone;        // the variable that defines this one's set
  std::uint32_t undefined_as = kNone;  // set has no definition: the variable to blame
};

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

class Flattener {
 public:
  explicit Flattener(const RawModel& raw) : raw_(raw) {}

  Model run() {
    m_.name = raw_.name;
    m_.source_file = raw_.file;
    index_variables();
    connect();
    register_equations();
    build_symbols();
    resolve_initial_values();
    lower_equations();
    assign_names();
    return std::move(m_);
  }

 private:
  [[noreturn]] void fail(const std::string& file, int line, const std::string& msg) const {
    throw InputError(SourceLoc{file, line, 0}, msg);
  }
  const std::string& comp_name(std::uint32_t v) const {
    return raw_.components[vars_[v].comp].name;
  }
  std::string describe(std::uint32_t v) const {
    return "variable '" + vars_[v].raw->name + "' in component '" + comp_name(v) + "'";
  }
  [[noreturn]] void fail_var(std::uint32_t v, const std::string& msg) const {
    fail(vars_[v].raw->file, vars_[v].raw->line, msg);
  }

  void index_variables() {
    for (std::uint32_t c = 0; c < raw_.components.size(); ++c) {
      const auto& comp = raw_.components[c];
      comp_index_[comp.name] = c;
      for (const auto& v : comp.variables) {
        var_index_[{c, v.name}] = static_cast<std::uint32_t>(vars_.size());
        VarInfo info;
        info.comp = c;
        info.raw = &v;
        vars_.push_back(info);
      }
    }
  }

  std::uint32_t lookup(std::uint32_t comp, const std::string& name, const std::string& file,
                       int line) const {
    auto it = var_index_.find({comp, name});
    if (it == var_index_.end())
      fail(file, line,
           "unknown variable '" + name + "' in component '" + raw_.components[comp].name + "'");
    return it->second;
  }

  void connect() {
    uf_ = std::make_unique<UnionFind>(vars_.size());
    for (const auto& conn : raw_.connections) {
      auto c1 = comp_index_.find(conn.component_1), c2 = comp_index_.find(conn.component_2);
      if (c1 == comp_index_.end() || c2 == comp_index_.end())
        fail(conn.file, conn.line,
             "connection names unknown component '" +
                 (c1 == comp_index_.end() ? conn.component_1 : conn.component_2) + "'");
      for (const auto& [n1, n2] : conn.variables) {
        std::uint32_t a = lookup(c1->second, n1, conn.file, conn.line);
        std::uint32_t b = lookup(c2->second, n2, conn.file, conn.line);
        const auto& ua = vars_[a].raw->units;
        const auto& ub = vars_[b].raw->units;
        if (ua && ub && !ua->same_dimension(*ub))
          fail(conn.file, conn.line,
               "cannot connect " + describe(a) + " (units '" + vars_[a].raw->units_name +
                   "', " + ua->dimension_string() + ") to " + describe(b) + " (units '" +
                   vars_[b].raw->units_name + "', " + ub->dimension_string() +
                   "): incompatible dimensions");
        uf_->unite(a, b);
      }
    }
  }

  void register_equations() {
    for (std::uint32_t c = 0; c < raw_.components.size(); ++c) {
      const auto& comp = raw_.components[c];
      for (const auto& eq : comp.equations) {
        std::uint32_t v = lookup(c, eq.lhs, comp.file, eq.line);
        if (vars_[v].eq)
          fail(comp.file, eq.line,
               describe(v) + " has two defining equations (lines " +
                   std::to_string(vars_[v].eq->line) + " and " + std::to_string(eq.line) + ")");
        vars_[v].eq = &eq;
        if (eq.is_ode) vars_[lookup(c, eq.bvar, comp.file, eq.line)].is_bvar = true;
      }
    }
  }

  static bool is_input(const RawVariable& v) {
    return v.public_interface == "in" || v.private_interface == "in";
  }

  void build_symbols() {
    std::map<std::uint32_t, std::vector<std::uint32_t>> sets;
    for (std::uint32_t v = 0; v < vars_.size(); ++v) sets[uf_->find(v)].push_back(v);
    std::uint32_t time_set = kNone;
    for (const auto& [root, members] : sets) {
      bool has_time = false;
      for (auto v : members) has_time |= vars_[v].is_bvar;
      if (!has_time) continue;
      if (time_set != kNone)
        fail_var(members.front(), "more than one independent variable: " +
                                      describe(members.front()) + " and " +
                                      describe(sets[time_set].front()));
      time_set = root;
    }
    // Sources, in file order of the set's first variable.
    for (const auto& [root, members] : sets) {
      std::vector<std::uint32_t> definers;
      for (auto v : members)
        if (vars_[v].eq || !vars_[v].raw->initial.empty()) definers.push_back(v);
      std::uint32_t source = kNone;
      if (root == time_set) {
        if (!definers.empty())
          fail_var(definers[0], describe(definers[0]) +
                                    " is the independent variable (time) and cannot have an "
                                    "initial value or an equation");
        source = members.front();
        for (auto v : members)
          if (!is_input(*vars_[v].raw)) {
            source = v;
            break;
          }
      } else if (definers.empty()) {
        std::uint32_t v = members.front();
        for (auto w : members)
          if (!is_input(*vars_[w].raw)) {
            v = w;
            break;
          }
        // Published models declare unused variables; only a use is an error.
        for (auto w : members) vars_[w].undefined_as = v;
        continue;
      } else if (definers.size() > 1) {
        std::uint32_t a = definers[0], b = definers[1];
        fail_var(b, describe(b) + " is defined twice: it is connected to " + describe(a) +
                        " (line " + std::to_string(vars_[a].raw->line) +
                        "), and both have an initial value or an equation");
      } else {
        source = definers[0];
      }
      make_symbol(source, members, root == time_set);
    }
  }

  void make_symbol(std::uint32_t source, const std::vector<std::uint32_t>& members, bool is_time) {
    const RawVariable& r = *vars_[source].raw;
    Symbol sym;
    sym.name = r.name;
    sym.units_name = r.units_name;
    sym.units = r.units;
    sym.component = comp_name(source);
    sym.loc = SourceLoc{r.file, r.line, 0};
    sym.ontology = r.ontology;
    for (auto v : members)
      if (sym.ontology.empty()) sym.ontology = vars_[v].raw->ontology;
    VarKind kind;
    std::uint32_t index;
    const Equation* eq = vars_[source].eq;
    if (is_time) {
      kind = VarKind::time;
      index = 0;
      m_.time = sym;
    } else if (eq && eq->is_ode) {
      if (r.initial.empty())
        fail_var(source, "state " + describe(source) + " (ODE at line " +
                             std::to_string(eq->line) + ") has no initial_value");
      kind = VarKind::state;
      index = static_cast<std::uint32_t>(m_.states.size());
      State s;
      static_cast<Symbol&>(s) = sym;
      m_.states.push_back(s);
      m_.derivatives.push_back(kNoExpr);
    } else if (eq) {
      if (!r.initial.empty())
        fail_var(source, describe(source) + " has both an initial_value and a defining "
                                            "equation (line " + std::to_string(eq->line) + ")");
      kind = VarKind::algebraic;
      index = static_cast<std::uint32_t>(m_.algebraics.size());
      Algebraic a;
      static_cast<Symbol&>(a) = sym;
      m_.algebraics.push_back(a);
    } else {
      kind = VarKind::param;
      index = static_cast<std::uint32_t>(m_.parameters.size());
      Parameter p;
      static_cast<Symbol&>(p) = sym;
      m_.parameters.push_back(p);
    }
    names_.push_back({kind, index, r.name, sym.component, false});
    ExprId src_expr = m_.pool.variable(kind, index);
    const Units* su = r.units ? &*r.units : nullptr;
    // Converted variables, grouped by (scale, offset).
    std::vector<std::pair<std::pair<double, double>, ExprId>> groups;
    for (auto v : members) {
      VarInfo& info = vars_[v];
      info.kind = kind;
      info.index = index;
      info.source = source;
      double scale = 1.0, offset = 0.0;
      if (su && info.raw->units) {
        const Units& vu = *info.raw->units;
        scale = su->factor / vu.factor;
        offset = su->offset * scale - vu.offset;
      }
      info.scale = scale;
      info.offset = offset;
      bool identity = std::abs(scale - 1.0) <= 1e-12 && std::abs(offset) <= 1e-12;
      if (identity) {
        info.value = src_expr;
        continue;
      }
      ExprId found = kNoExpr;
      for (const auto& [key, e] : groups)
        if (std::abs(key.first - scale) <= 1e-12 * std::abs(scale) &&
            std::abs(key.second - offset) <= 1e-12 * (1 + std::abs(offset)))
          found = e;
      if (found == kNoExpr) {
        Algebraic a;
        a.name = info.raw->name;
        a.units_name = info.raw->units_name;
        a.units = info.raw->units;
        a.component = comp_name(v);
        a.loc = SourceLoc{info.raw->file, info.raw->line, 0};
        a.description = "unit conversion of " + sym.name + " from component " + sym.component;
        ExprId e = m_.pool.mul(src_expr, m_.pool.constant(scale));
        if (offset != 0.0) e = m_.pool.add(e, m_.pool.constant(offset));
        a.expr = e;
        auto ai = static_cast<std::uint32_t>(m_.algebraics.size());
        m_.algebraics.push_back(a);
        names_.push_back({VarKind::algebraic, ai, a.name, a.component, true});
        found = m_.pool.algebraic(ai);
        groups.push_back({{scale, offset}, found});
      }
      info.value = found;
    }
  }

  void check_defined(std::uint32_t v) const {
    std::uint32_t u = vars_[v].undefined_as;
    if (u != kNone)
      fail_var(u, "variable " + vars_[u].raw->name + " in component " + comp_name(u) +
                      " has no initial value or defining equation");
  }

  // The numeric value of a constant variable (parameter or state initial value).
  double constant_value(std::uint32_t v, int depth) {
    if (depth > 64) fail_var(v, "initial_value of " + describe(v) + " refers to itself");
    check_defined(v);
    const VarInfo& info = vars_[v];
    std::uint32_t src = info.source;
    if (src == kNone || (info.kind != VarKind::param && info.kind != VarKind::state))
      fail_var(v, describe(v) + " is used as an initial value but is not a constant");
    const VarInfo& s = vars_[src];
    double base;
    if (auto num = cellml::parse_number(s.raw->initial)) {
      base = *num;
    } else {
      auto it = var_index_.find({s.comp, s.raw->initial});
      if (it == var_index_.end())
        fail_var(src, "initial_value '" + s.raw->initial + "' of " + describe(src) +
                          " is neither a number nor a variable of the same component");
      base = constant_value(it->second, depth + 1);
    }
    return base * info.scale + info.offset;
  }

  void resolve_initial_values() {
    for (std::uint32_t v = 0; v < vars_.size(); ++v) {
      const VarInfo& info = vars_[v];
      // Only a set's source carries an initial value (build_symbols checked it).
      if (info.raw->initial.empty()) continue;
      double value = constant_value(v, 0);
      if (info.kind == VarKind::param) m_.parameters[info.index].value = value;
      if (info.kind == VarKind::state) m_.states[info.index].initial = value;
    }
  }

  // --- lowering ---------------------------------------------------------------------

  ExprId derivative_of_state(std::uint32_t s, const std::string& file, int line) {
    if (m_.derivatives[s] != kNoExpr) return m_.derivatives[s];
    if (lowering_.count(s))
      fail(file, line, "derivative of '" + m_.states[s].name + "' is defined in terms of itself");
    lowering_.insert(s);
    // Find the ODE's variable.
    for (std::uint32_t v = 0; v < vars_.size(); ++v) {
      const VarInfo& info = vars_[v];
      if (info.kind == VarKind::state && info.index == s && info.eq && info.eq->is_ode) {
        const Equation& eq = *info.eq;
        const auto& comp = raw_.components[info.comp];
        std::uint32_t b = lookup(info.comp, eq.bvar, comp.file, eq.line);
        ExprId rhs = lower(*eq.rhs, info.comp, comp.file);
        // dy/dt = dy/dt_local * dt_local/dt.
        if (std::abs(vars_[b].scale - 1.0) > 1e-12)
          rhs = m_.pool.mul(rhs, m_.pool.constant(vars_[b].scale));
        m_.derivatives[s] = rhs;
        break;
      }
    }
    lowering_.erase(s);
    return m_.derivatives[s];
  }

  ExprId lower(const MathNode& n, std::uint32_t comp, const std::string& file) {
    auto& pool = m_.pool;
    switch (n.kind) {
      case MathNode::Kind::number:
        return pool.constant(n.value);
      case MathNode::Kind::variable: {
        std::uint32_t v = lookup(comp, n.name, file, n.line);
        check_defined(v);
        return vars_[v].value;
      }
      case MathNode::Kind::diff: {
        std::uint32_t y = lookup(comp, n.name, file, n.line);
        std::uint32_t b = lookup(comp, n.bvar, file, n.line);
        check_defined(y);
        check_defined(b);
        if (vars_[b].kind != VarKind::time)
          fail(file, n.line, "'" + n.bvar + "' is not the model's independent variable");
        if (vars_[y].kind != VarKind::state)
          fail(file, n.line, "d" + n.name + "/d" + n.bvar + " is used but '" + n.name +
                                 "' has no ODE");
        ExprId d = derivative_of_state(vars_[y].index, file, n.line);
        double k = vars_[y].scale / vars_[b].scale;
        return std::abs(k - 1.0) > 1e-12 ? pool.mul(d, pool.constant(k)) : d;
      }
      case MathNode::Kind::piecewise: {
        std::vector<ExprId> args;
        for (const auto& a : n.args) args.push_back(lower(*a, comp, file));
        if (!n.has_otherwise) args.push_back(pool.constant(std::numeric_limits<double>::quiet_NaN()));
        return pool.make(Op::piecewise, std::move(args));
      }
      case MathNode::Kind::apply:
        break;
    }
    std::vector<ExprId> a;
    for (const auto& x : n.args) a.push_back(lower(*x, comp, file));
    const ExprId e = cellml::apply_operator(pool, n, a, [&](const MathNode& sub) { return lower(sub, comp, file); });
    if (e == kNoExpr) fail(file, n.line, "unsupported MathML operator <" + n.name + ">");
    return e;
  }

  void lower_equations() {
    for (std::uint32_t v = 0; v < vars_.size(); ++v) {
      const VarInfo& info = vars_[v];
      if (!info.eq) continue;
      const auto& comp = raw_.components[info.comp];
      if (info.eq->is_ode) {
        derivative_of_state(info.index, comp.file, info.eq->line);
      } else {
        m_.algebraics[info.index].expr = lower(*info.eq->rhs, info.comp, comp.file);
      }
    }
  }

  // Own name when unique among the model's defining variables, else component__name
  // (always for unit-converted copies); numeric suffix as a last resort.
  void assign_names() {
    std::map<std::string, int> count;
    for (const auto& n : names_)
      if (!n.converted) ++count[sanitize(n.name)];
    std::set<std::string> used;
    for (const auto& n : names_) {
      std::string base = sanitize(n.name);
      std::string name = !n.converted && count[base] == 1
                             ? base
                             : sanitize(n.component) + "__" + base;
      std::string unique = name;
      for (int i = 2; used.count(unique); ++i) unique = name + "_" + std::to_string(i);
      used.insert(unique);
      switch (n.kind) {
        case VarKind::time: m_.time.name = unique; break;
        case VarKind::state: m_.states[n.index].name = unique; break;
        case VarKind::param: m_.parameters[n.index].name = unique; break;
        case VarKind::algebraic: m_.algebraics[n.index].name = unique; break;
      }
    }
    if (m_.time.name.empty()) m_.time.name = used.count("time") ? "time_" : "time";
  }

  struct PendingName {
    VarKind kind;
    std::uint32_t index;
    std::string name, component;
    bool converted;  // a unit-converted copy: always component__name
  };

  const RawModel& raw_;
  Model m_;
  std::vector<VarInfo> vars_;
  std::map<std::string, std::uint32_t> comp_index_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> var_index_;
  std::unique_ptr<UnionFind> uf_;
  std::vector<PendingName> names_;
  std::set<std::uint32_t> lowering_;
};

}  // namespace

Model parse_cellml(std::string_view xml, const std::string& filename, const std::string& base_dir) {
  std::vector<std::string> stack;
  if (!filename.empty()) {
    std::error_code ec;
    auto canon = std::filesystem::weakly_canonical(filename, ec);
    if (!ec) stack.push_back(canon.string());
  }
  RawModel raw = cellml::read_document(xml, filename, base_dir, base_dir, stack);
  Model m = Flattener(raw).run();
  detect_roles(m);
  return m;
}

Model load_cellml(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(SourceLoc{path, 0, 0}, "'" + path + "' is a directory, not a CellML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return parse_cellml(ss.str(), path, dir);
}

}  // namespace hw::model
