// SBML document → Model (sbml.hpp). libSBML parses the XML and the math; this file decides
// what each id is and builds the IR.
//
// Classification of each compartment, species and parameter, in document order:
//   a rate rule, or a species changed by reactions → state (initial value: its value, or
//   its initial assignment evaluated at t = 0);
//   an assignment rule → algebraic; an initial assignment only → algebraic (constant in
//   time, so the classification pass makes it a once-per-cell quantity);
//   otherwise → parameter with its value (used without a value: a located error).
// Each reaction's kinetic law becomes an algebraic named by the reaction's id (its rate);
// a species' ODE is the stoichiometry-weighted sum of the rates, divided by its
// compartment's size when the species is a concentration. Local parameters become
// parameters named reaction__parameter.
#ifdef HW_HAVE_LIBSBML

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "model/analysis/roles.hpp"
#include "model/frontend/sbml/sbml.hpp"
#include "model/frontend/sbml/sbml_internal.hpp"
#include "model/passes/eval.hpp"

namespace hw::model {

namespace {

using sbml::MathSite;

constexpr const char* kOxmetaMarker = "oxford-metadata#";
constexpr std::uint32_t kUndefined = std::numeric_limits<std::uint32_t>::max();

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  auto b = s.find_first_not_of(' ');
  auto e = s.find_last_not_of(' ');
  if (b == std::string::npos) return "";
  std::string out;
  for (std::size_t i = b; i <= e; ++i)
    if (!(s[i] == ' ' && !out.empty() && out.back() == ' ')) out += s[i];
  return out;
}

int line_of(const libsbml::SBase* e) {
  const unsigned l = e ? e->getLine() : 0;
  return l < 0x7fffffff ? static_cast<int>(l) : 0;
}

std::string describe(const libsbml::SBase* e) {
  std::string s = "<" + e->getElementName();
  if (e->isSetIdAttribute()) s += " id='" + e->getIdAttribute() + "'";
  if (auto* r = dynamic_cast<const libsbml::Rule*>(e); r && r->isSetVariable())
    s += " variable='" + r->getVariable() + "'";
  if (auto* a = dynamic_cast<const libsbml::InitialAssignment*>(e); a && a->isSetSymbol())
    s += " symbol='" + a->getSymbol() + "'";
  return s + ">";
}

// The oxmeta term of a bqbiol:is annotation ("membrane_voltage"), or "".
std::string oxmeta_term(const libsbml::SBase& e) {
  // getCVTerms is not const in libSBML; it only reads.
  auto& el = const_cast<libsbml::SBase&>(e);
  for (unsigned i = 0; i < el.getNumCVTerms(); ++i) {
    const libsbml::CVTerm* t = el.getCVTerm(i);
    if (!t || t->getQualifierType() != BIOLOGICAL_QUALIFIER ||
        t->getBiologicalQualifierType() != BQB_IS)
      continue;
    for (unsigned k = 0; k < t->getNumResources(); ++k) {
      const std::string uri = t->getResourceURI(k);
      const auto pos = uri.find(kOxmetaMarker);
      if (pos != std::string::npos) return uri.substr(pos + std::strlen(kOxmetaMarker));
    }
  }
  return "";
}

class Reader {
 public:
  Reader(const libsbml::Model& sm, const std::string& file) : sm_(sm), file_(file) {}

  Model run() {
    m_.name = sm_.isSetName() ? sm_.getName() : sm_.getId();
    m_.source_file = file_;
    refuse_unsupported();
    index_rules();
    declare_reactions();
    for (unsigned i = 0; i < sm_.getNumCompartments(); ++i) {
      const auto* c = sm_.getCompartment(i);
      declare(*c, c->isSetSize() ? std::optional<double>(c->getSize()) : std::nullopt,
              units(c->getUnits(), c));
    }
    for (unsigned i = 0; i < sm_.getNumSpecies(); ++i) declare_species(*sm_.getSpecies(i));
    for (unsigned i = 0; i < sm_.getNumParameters(); ++i) {
      const auto* p = sm_.getParameter(i);
      declare(*p, p->isSetValue() ? std::optional<double>(p->getValue()) : std::nullopt,
              units(p->getUnits(), p));
    }
    time_units();
    lower_everything();
    set_state_initial_values();
    name_time();
    return std::move(m_);
  }

 private:
  struct Entry {
    VarKind kind;
    std::uint32_t index;
    const libsbml::SBase* element;
  };

  [[noreturn]] void fail(const libsbml::SBase* at, const std::string& msg) const {
    throw InputError(SourceLoc{file_, line_of(at), 0}, msg);
  }

  MathSite site(const libsbml::SBase* e) const { return MathSite{file_, line_of(e), describe(e)}; }

  void refuse_unsupported() {
    if (sm_.getNumEvents() > 0) {
      const auto* e = sm_.getEvent(0);
      fail(e, "SBML " + describe(e) + " is not supported: Heartwave integrates ODEs without "
              "discontinuities; write the event's effect as a piecewise expression");
    }
    if (sm_.getNumConstraints() > 0)
      fail(sm_.getConstraint(0), "SBML <constraint> is not supported (Heartwave does not check constraints)");
    for (unsigned i = 0; i < sm_.getNumRules(); ++i) {
      const auto* r = sm_.getRule(i);
      if (r->isAlgebraic())
        fail(r, "SBML <algebraicRule> is not supported: Heartwave needs each variable defined "
                "explicitly (an assignment rule or a rate rule)");
    }
    if (sm_.isSetConversionFactor())
      fail(&sm_, "SBML conversionFactor is not supported");
  }

  void index_rules() {
    for (unsigned i = 0; i < sm_.getNumRules(); ++i) {
      const auto* r = sm_.getRule(i);
      const std::string v = r->getVariable();
      if (v.empty()) fail(r, "SBML " + describe(r) + " has no variable");
      if (!rules_.emplace(v, r).second)
        fail(r, "'" + v + "' has two rules (lines " + std::to_string(line_of(rules_[v])) + " and " +
                    std::to_string(line_of(r)) + ")");
    }
    for (unsigned i = 0; i < sm_.getNumInitialAssignments(); ++i) {
      const auto* a = sm_.getInitialAssignment(i);
      if (!initial_.emplace(a->getSymbol(), a).second)
        fail(a, "'" + a->getSymbol() + "' has two initial assignments");
      if (auto it = rules_.find(a->getSymbol()); it != rules_.end() && it->second->isAssignment())
        fail(a, "'" + a->getSymbol() + "' has both an initial assignment and an assignment rule");
    }
  }

  // Reactions first: their rates are algebraics that species' ODEs refer to.
  void declare_reactions() {
    for (unsigned i = 0; i < sm_.getNumReactions(); ++i) {
      const auto* r = sm_.getReaction(i);
      if (r->isSetFast() && r->getFast())
        fail(r, "SBML fast reaction " + describe(r) + " is not supported");
      if (!r->isSetKineticLaw()) fail(r, "SBML " + describe(r) + " has no <kineticLaw>");
      for (auto* list : {r->getListOfReactants(), r->getListOfProducts()})
        for (unsigned k = 0; k < list->size(); ++k) {
          const auto* sr = static_cast<const libsbml::SpeciesReference*>(list->get(k));
          if (sr->isSetStoichiometryMath() || (sr->isSetIdAttribute() && !sr->getIdAttribute().empty()))
            fail(sr, "SBML " + describe(sr) + ": variable stoichiometry is not supported");
          if (sr->isSetConstant() && !sr->getConstant())
            fail(sr, "SBML " + describe(sr) + ": non-constant stoichiometry is not supported");
          changed_by_reactions_.insert(sr->getSpecies());
        }
      Algebraic a;
      a.name = r->getId();
      a.loc = SourceLoc{file_, line_of(r), 0};
      a.description = "rate of reaction " + (r->isSetName() ? r->getName() : r->getId());
      add_entry(r->getId(), VarKind::algebraic, static_cast<std::uint32_t>(m_.algebraics.size()), r);
      m_.algebraics.push_back(a);
    }
  }

  void declare_species(const libsbml::Species& s) {
    if (s.isSetConversionFactor()) fail(&s, "SBML conversionFactor is not supported");
    std::optional<double> value;
    if (s.isSetInitialConcentration()) {
      value = s.getInitialConcentration();
    } else if (s.isSetInitialAmount()) {
      value = s.getInitialAmount();
      if (!s.getHasOnlySubstanceUnits()) {
        const auto* c = sm_.getCompartment(s.getCompartment());
        if (!c || !c->isSetSize() || c->getSize() == 0)
          fail(&s, "species '" + s.getId() + "' is given as an amount in compartment '" +
                       s.getCompartment() + "', whose size is not a non-zero number");
        *value /= c->getSize();
      }
    }
    const bool by_reactions = changed_by_reactions_.count(s.getId()) && !s.getBoundaryCondition() &&
                              !(s.isSetConstant() && s.getConstant());
    if (by_reactions && rules_.count(s.getId()))
      fail(&s, "species '" + s.getId() + "' is changed both by reactions and by a rule");
    declare(s, value, s.getHasOnlySubstanceUnits() ? units(s.getSubstanceUnits(), &s) : std::nullopt,
            by_reactions);
  }

  void add_entry(const std::string& id, VarKind kind, std::uint32_t index, const libsbml::SBase* e) {
    if (id.empty()) fail(e, "SBML " + describe(e) + " has no id");
    if (!entries_.emplace(id, Entry{kind, index, e}).second)
      fail(e, "id '" + id + "' is used twice (also at line " + std::to_string(line_of(entries_[id].element)) + ")");
  }

  void declare(const libsbml::SBase& e, std::optional<double> value, std::optional<Units> u,
               bool by_reactions = false) {
    const std::string id = e.getIdAttribute();
    Symbol sym;
    sym.name = id;
    sym.loc = SourceLoc{file_, line_of(&e), 0};
    sym.units = u;
    if (u) sym.units_name = units_name_;
    sym.ontology = oxmeta_term(e);
    if (e.isSetName() && e.getName() != id) sym.description = e.getName();
    const auto rule = rules_.find(id);
    if ((rule != rules_.end() && rule->second->isRate()) || by_reactions) {
      State s;
      static_cast<Symbol&>(s) = sym;
      if (!value && !initial_.count(id))
        fail(&e, "state '" + id + "' (it has a rate rule or reactions) has no initial value or initial assignment");
      s.initial = value.value_or(0.0);
      add_entry(id, VarKind::state, static_cast<std::uint32_t>(m_.states.size()), &e);
      m_.states.push_back(s);
      m_.derivatives.push_back(kNoExpr);
    } else if (rule != rules_.end() || initial_.count(id)) {
      Algebraic a;
      static_cast<Symbol&>(a) = sym;
      add_entry(id, VarKind::algebraic, static_cast<std::uint32_t>(m_.algebraics.size()), &e);
      m_.algebraics.push_back(a);
    } else {
      Parameter p;
      static_cast<Symbol&>(p) = sym;
      p.value = value.value_or(std::numeric_limits<double>::quiet_NaN());
      const auto index = static_cast<std::uint32_t>(m_.parameters.size());
      if (!value) undefined_.insert(id);
      add_entry(id, VarKind::param, index, &e);
      m_.parameters.push_back(p);
    }
  }

  // --- units -------------------------------------------------------------------------

  // The units called `id` (also sets units_name_), or nullopt for none.
  std::optional<Units> units(const std::string& id, const libsbml::SBase* at) {
    units_name_ = id;
    if (id.empty()) return std::nullopt;
    if (const auto* ud = sm_.getUnitDefinition(id)) {
      Units total;
      for (unsigned i = 0; i < ud->getNumUnits(); ++i) {
        const auto* u = ud->getUnit(i);
        const char* kind = libsbml::UnitKind_toString(u->getKind());
        auto base = builtin_units(kind ? kind : "");
        if (!base) {
          if (std::string(kind ? kind : "") == "item" || std::string(kind ? kind : "") == "avogadro")
            base = Units{};
          else
            fail(u, "unit kind '" + std::string(kind ? kind : "?") + "' in units '" + id + "' is not supported");
        }
        const double e = u->getExponentAsDouble();
        const double scale = u->getMultiplier() * std::pow(10.0, u->getScale());
        Units b = *base;
        b.offset = 0;
        b.factor *= scale;
        total = total * b.pow(e);
      }
      if (!std::isfinite(total.factor) || total.factor == 0.0)
        fail(ud, "units '" + id + "' overflow or are zero");
      return total;
    }
    if (auto b = builtin_units(id)) return b;
    // SBML Level 2's predefined units.
    if (id == "substance") return builtin_units("mole");
    if (id == "volume") return builtin_units("litre");
    if (id == "area") return builtin_units("metre")->pow(2);
    if (id == "length") return builtin_units("metre");
    if (id == "time") return builtin_units("second");
    fail(at, "unknown units '" + id + "'");
  }

  void time_units() {
    std::string id;
    if (sm_.getLevel() >= 3) id = sm_.isSetTimeUnits() ? sm_.getTimeUnits() : "";
    else id = "time";
    m_.time.units = units(id, &sm_);
    m_.time.units_name = m_.time.units ? id : "";
  }

  // --- maths -------------------------------------------------------------------------

  ExprId resolve(const std::string& id, const MathSite& where) {
    auto it = entries_.find(id);
    if (it == entries_.end()) {
      if (sm_.getFunctionDefinition(id))
        throw InputError(SourceLoc{where.file, where.line, 0},
                         "function '" + id + "' used as a value (in " + where.what + ")");
      throw InputError(SourceLoc{where.file, where.line, 0},
                       "unknown name '" + id + "' (in " + where.what + ")");
    }
    if (undefined_.count(id))
      throw InputError(SourceLoc{where.file, where.line, 0},
                       "'" + id + "' (line " + std::to_string(line_of(it->second.element)) +
                           ") is used but has no value, rule or initial assignment (in " + where.what + ")");
    return m_.pool.variable(it->second.kind, it->second.index);
  }

  void lower_everything() {
    sbml::MathLowering math(m_, sm_, [this](const std::string& id, const MathSite& s) { return resolve(id, s); });
    for (const auto& [id, rule] : rules_) {
      const auto it = entries_.find(id);
      if (it == entries_.end())
        fail(rule, "SBML " + describe(rule) + " sets '" + id +
                       "', which is no parameter, compartment or species of the model");
      const Entry& e = it->second;
      const ExprId x = math.lower(rule->getMath(), site(rule));
      if (e.kind == VarKind::state) m_.derivatives[e.index] = x;
      else if (e.kind == VarKind::algebraic) m_.algebraics[e.index].expr = x;
      else fail(rule, "rule for '" + id + "', which is not a variable");
    }
    for (const auto& [id, ia] : initial_) {
      auto it = entries_.find(id);
      if (it == entries_.end()) fail(ia, "initial assignment to unknown '" + id + "'");
      if (it->second.kind == VarKind::algebraic && !rules_.count(id)) {
        const ExprId x = math.lower(ia->getMath(), site(ia));
        if (occurs_time(x)) fail(ia, "initial assignment to '" + id + "' uses time");
        m_.algebraics[it->second.index].expr = x;
      }
    }
    lower_reactions();
    for (std::size_t i = 0; i < m_.states.size(); ++i)
      if (m_.derivatives[i] == kNoExpr) m_.derivatives[i] = m_.pool.constant(0.0);
  }

  bool occurs_time(ExprId x) const {
    for (ExprId n : topological_nodes(m_.pool, std::span<const ExprId>(&x, 1)))
      if (m_.pool.is_variable(n, VarKind::time)) return true;
    return false;
  }

  void lower_reactions() {
    std::map<std::string, ExprId> rate_of_change;  // species id → Σ ±c·rate
    for (unsigned i = 0; i < sm_.getNumReactions(); ++i) {
      const auto* r = sm_.getReaction(i);
      const auto* kl = r->getKineticLaw();
      std::map<std::string, ExprId> locals;
      for (unsigned k = 0; k < kl->getNumParameters(); ++k) {
        const auto* p = kl->getParameter(k);
        if (!p->isSetValue()) fail(p, "local parameter '" + p->getId() + "' has no value");
        Parameter q;
        q.name = r->getId() + "__" + p->getId();
        q.value = p->getValue();
        q.loc = SourceLoc{file_, line_of(p), 0};
        q.units = units(p->getUnits(), p);
        if (q.units) q.units_name = units_name_;
        locals[p->getId()] = m_.pool.param(static_cast<std::uint32_t>(m_.parameters.size()));
        m_.parameters.push_back(q);
      }
      sbml::MathLowering math(m_, sm_, [&](const std::string& id, const MathSite& s) {
        if (auto it = locals.find(id); it != locals.end()) return it->second;
        return resolve(id, s);
      });
      const Entry& rate = entries_.at(r->getId());
      m_.algebraics[rate.index].expr = math.lower(kl->getMath(), site(kl));
      const ExprId v = m_.pool.algebraic(rate.index);
      auto add = [&](const libsbml::ListOf* list, double sign) {
        for (unsigned k = 0; k < list->size(); ++k) {
          const auto* sr = static_cast<const libsbml::SpeciesReference*>(list->get(k));
          const double c = sign * (sr->isSetStoichiometry() ? sr->getStoichiometry() : 1.0);
          const ExprId term = c == 1.0 ? v : m_.pool.mul(m_.pool.constant(c), v);
          auto [it, fresh] = rate_of_change.emplace(sr->getSpecies(), term);
          if (!fresh) it->second = m_.pool.add(it->second, term);
        }
      };
      add(r->getListOfReactants(), -1.0);
      add(r->getListOfProducts(), 1.0);
    }
    for (const auto& [id, sum] : rate_of_change) {
      auto it = entries_.find(id);
      if (it == entries_.end()) fail(&sm_, "a reaction names unknown species '" + id + "'");
      if (it->second.kind != VarKind::state) continue;  // boundary or constant species
      const auto* s = sm_.getSpecies(id);
      ExprId d = sum;
      if (!s->getHasOnlySubstanceUnits()) {
        // Reactions change amounts; the species is a concentration: divide by the size.
        const MathSite where = site(s);
        d = m_.pool.div(d, resolve(s->getCompartment(), where));
      }
      m_.derivatives[it->second.index] = d;
    }
  }

  void set_state_initial_values() {
    std::vector<double> y, p;
    for (const auto& s : m_.states) y.push_back(s.initial);
    for (const auto& q : m_.parameters) p.push_back(q.value);
    sbml::MathLowering math(m_, sm_, [this](const std::string& id, const MathSite& s) { return resolve(id, s); });
    for (const auto& [id, ia] : initial_) {
      const Entry& e = entries_.at(id);
      if (e.kind != VarKind::state && !(e.kind == VarKind::param)) continue;
      const ExprId x = math.lower(ia->getMath(), site(ia));
      double v;
      try {
        v = evaluate_point(m_, x, 0.0, y.data(), p.data());
      } catch (const Error& err) {
        fail(ia, std::string("cannot evaluate the initial assignment to '") + id + "': " + err.what());
      }
      if (e.kind == VarKind::state) m_.states[e.index].initial = y[e.index] = v;
    }
  }

  // The csymbol's text names time where the model uses it; else "time" (never an id's name).
  void name_time() {
    if (m_.time.name.empty() || entries_.count(m_.time.name)) m_.time.name = "time";
    while (entries_.count(m_.time.name)) m_.time.name += "_";
  }

  const libsbml::Model& sm_;
  const std::string& file_;
  Model m_;
  std::map<std::string, const libsbml::Rule*> rules_;
  std::map<std::string, const libsbml::InitialAssignment*> initial_;
  std::map<std::string, Entry> entries_;
  std::set<std::string> undefined_;
  std::set<std::string> changed_by_reactions_;
  std::string units_name_;
};

// The first error libSBML logged while reading, as an InputError at its line.
void throw_first_error(const libsbml::SBMLDocument& doc, const std::string& file) {
  for (unsigned i = 0; i < doc.getNumErrors(); ++i) {
    const libsbml::SBMLError* e = doc.getError(i);
    if (!e || !(e->isError() || e->isFatal())) continue;
    const unsigned line = e->getLine(), col = e->getColumn();
    throw InputError(SourceLoc{file, line < 0x7fffffff ? static_cast<int>(line) : 0,
                               col < 0x7fffffff ? static_cast<int>(col) : 0},
                     "invalid SBML: " + one_line(e->getMessage()));
  }
}

}  // namespace

bool sbml_reader_available() { return true; }

Model parse_sbml(std::string_view xml, const std::string& filename) {
  if (xml.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError(SourceLoc{filename, 0, 0}, "file too large");
  // SBML has no use for a DOCTYPE; refusing it keeps entity expansion out of libSBML's parser.
  if (auto pos = xml.find("<!DOCTYPE"); pos != std::string_view::npos) {
    int line = 1;
    for (std::size_t i = 0; i < pos; ++i) line += xml[i] == '\n';
    throw InputError(SourceLoc{filename, line, 0}, "a DOCTYPE is not allowed in an SBML file");
  }
  if (xml.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError(SourceLoc{filename, 1, 0}, "empty file: not an SBML document");
  if (xml.find('\0') != std::string_view::npos)
    throw InputError(SourceLoc{filename, 0, 0}, "not an SBML file: it contains NUL bytes");
  const std::string text(xml);
  std::unique_ptr<libsbml::SBMLDocument> doc(libsbml::readSBMLFromString(text.c_str()));
  if (!doc) throw InputError(SourceLoc{filename, 0, 0}, "libSBML could not read the document");
  throw_first_error(*doc, filename);
  const libsbml::Model* sm = doc->getModel();
  if (!sm) throw InputError(SourceLoc{filename, 1, 0}, "SBML document without a <model>");
  Model m = Reader(*sm, filename).run();
  detect_roles(m);
  return m;
}

Model load_sbml(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(SourceLoc{path, 0, 0}, "'" + path + "' is a directory, not an SBML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_sbml(ss.str(), path);
}

}  // namespace hw::model

#endif  // HW_HAVE_LIBSBML
