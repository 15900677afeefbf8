// Units arithmetic, the CellML built-in units and the compact unit-expression parser.
//
// Why here: CellML front end, .hwm front end, the unit checker and the CLI's ms/mV
// presentation must all agree on what "mV" or "per_millisecond" means; one table does it.
// Guarantees: every CellML 1.0/1.1/2.0 built-in unit name resolves, with any SI prefix
// spelled out ("millivolt") ; parse_units_expr never accepts an unknown name silently.
#include <cstdio>
#include "model/ir/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace hw::model {

namespace {

constexpr double kDimTol = 1e-9;

// Base-unit exponents: metre, kilogram, second, ampere, kelvin, mole, candela.
Units make(std::array<double, 7> dim, double factor = 1.0, double offset = 0.0) {
  Units u;
  u.dim = dim;
  u.factor = factor;
  u.offset = offset;
  return u;
}

const std::map<std::string, Units>& builtin_table() {
  static const std::map<std::string, Units> table = [] {
    std::map<std::string, Units> t;
    //                         m   kg  s   A   K  mol cd
    t["dimensionless"] = make({0, 0, 0, 0, 0, 0, 0});
    t["radian"] = make({0, 0, 0, 0, 0, 0, 0});
    t["steradian"] = make({0, 0, 0, 0, 0, 0, 0});
    t["metre"] = make({1, 0, 0, 0, 0, 0, 0});
    t["meter"] = t["metre"];
    t["gram"] = make({0, 1, 0, 0, 0, 0, 0}, 1e-3);
    t["kilogram"] = make({0, 1, 0, 0, 0, 0, 0});
    t["second"] = make({0, 0, 1, 0, 0, 0, 0});
    t["ampere"] = make({0, 0, 0, 1, 0, 0, 0});
    t["kelvin"] = make({0, 0, 0, 0, 1, 0, 0});
    t["celsius"] = make({0, 0, 0, 0, 1, 0, 0}, 1.0, 273.15);
    t["mole"] = make({0, 0, 0, 0, 0, 1, 0});
    t["candela"] = make({0, 0, 0, 0, 0, 0, 1});
    t["litre"] = make({3, 0, 0, 0, 0, 0, 0}, 1e-3);
    t["liter"] = t["litre"];
    t["hertz"] = make({0, 0, -1, 0, 0, 0, 0});
    t["becquerel"] = t["hertz"];
    t["newton"] = make({1, 1, -2, 0, 0, 0, 0});
    t["pascal"] = make({-1, 1, -2, 0, 0, 0, 0});
    t["joule"] = make({2, 1, -2, 0, 0, 0, 0});
    t["watt"] = make({2, 1, -3, 0, 0, 0, 0});
    t["coulomb"] = make({0, 0, 1, 1, 0, 0, 0});
    t["volt"] = make({2, 1, -3, -1, 0, 0, 0});
    t["farad"] = make({-2, -1, 4, 2, 0, 0, 0});
    t["ohm"] = make({2, 1, -3, -2, 0, 0, 0});
    t["siemens"] = make({-2, -1, 3, 2, 0, 0, 0});
    t["weber"] = make({2, 1, -2, -1, 0, 0, 0});
    t["tesla"] = make({0, 1, -2, -1, 0, 0, 0});
    t["henry"] = make({2, 1, -2, -2, 0, 0, 0});
    t["lumen"] = make({0, 0, 0, 0, 0, 0, 1});
    t["lux"] = make({-2, 0, 0, 0, 0, 0, 1});
    t["gray"] = make({2, 0, -2, 0, 0, 0, 0});
    t["sievert"] = t["gray"];
    t["katal"] = make({0, 0, -1, 0, 0, 1, 0});
    // Not a CellML built-in but used everywhere in cardiac models (mM = mmol/L).
    t["molar"] = make({-3, 0, 0, 0, 0, 1, 0}, 1e3);
    return t;
  }();
  return table;
}

const std::vector<std::pair<std::string, double>>& prefix_names() {
  static const std::vector<std::pair<std::string, double>> p = {
      {"yotta", 1e24}, {"zetta", 1e21}, {"exa", 1e18},   {"peta", 1e15},  {"tera", 1e12},
      {"giga", 1e9},   {"mega", 1e6},   {"kilo", 1e3},   {"hecto", 1e2},  {"deka", 1e1},
      {"deca", 1e1},   {"deci", 1e-1},  {"centi", 1e-2}, {"milli", 1e-3}, {"micro", 1e-6},
      {"nano", 1e-9},  {"pico", 1e-12}, {"femto", 1e-15}, {"atto", 1e-18}, {"zepto", 1e-21},
      {"yocto", 1e-24}};
  return p;
}

// Short symbols for parse_units_expr ("mV", "uA/cm^2").
const std::map<std::string, std::string>& symbol_table() {
  static const std::map<std::string, std::string> s = {
      {"m", "metre"},   {"g", "gram"},     {"s", "second"},  {"A", "ampere"},
      {"K", "kelvin"},  {"mol", "mole"},   {"cd", "candela"}, {"L", "litre"},
      {"l", "litre"},   {"Hz", "hertz"},   {"N", "newton"},  {"Pa", "pascal"},
      {"J", "joule"},   {"W", "watt"},     {"C", "coulomb"}, {"V", "volt"},
      {"F", "farad"},   {"Ohm", "ohm"},    {"ohm", "ohm"},   {"S", "siemens"},
      {"Wb", "weber"},  {"T", "tesla"},    {"H", "henry"},   {"M", "molar"},
      {"degC", "celsius"}, {"rad", "radian"}};
  return s;
}

const std::vector<std::pair<std::string, double>>& prefix_symbols() {
  static const std::vector<std::pair<std::string, double>> p = {
      {"da", 1e1},  {"Y", 1e24},  {"Z", 1e21},  {"E", 1e18},  {"P", 1e15},   {"T", 1e12},
      {"G", 1e9},   {"M", 1e6},   {"k", 1e3},   {"h", 1e2},   {"d", 1e-1},   {"c", 1e-2},
      {"m", 1e-3},  {"u", 1e-6},  {"\xC2\xB5", 1e-6}, {"n", 1e-9}, {"p", 1e-12}, {"f", 1e-15},
      {"a", 1e-18}, {"z", 1e-21}, {"y", 1e-24}};
  return p;
}

Units scaled(Units u, double s) {
  if (u.offset != 0.0) {
    // A prefixed offset unit ("millicelsius") scales the step; the zero stays put.
    u.offset /= s;
  }
  u.factor *= s;
  return u;
}

std::optional<Units> symbol_units(const std::string& name) {
  auto& sym = symbol_table();
  if (auto it = sym.find(name); it != sym.end()) return builtin_table().at(it->second);
  if (auto b = builtin_units(name)) return b;
  for (const auto& [p, s] : prefix_symbols()) {
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) {
      auto it = sym.find(name.substr(p.size()));
      if (it != sym.end()) return scaled(builtin_table().at(it->second), s);
    }
  }
  return std::nullopt;
}

// Recursive-descent parser for  expr := term (('*'|'.'|'/') term)* ;
// term := atom ('^' number)? ; atom := name | number | '(' expr ')'.
class UnitsParser {
 public:
  explicit UnitsParser(const std::string& text) : text_(text) {}

  Units parse() {
    skip_space();
    if (pos_ == text_.size()) fail("empty unit expression");
    Units u = expr();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return u;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("bad unit expression \"" + text_ + "\": " + why);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  Units expr() {
    Units u = term();
    for (;;) {
      skip_space();
      if (pos_ >= text_.size()) return u;
      char c = text_[pos_];
      if (c == '*' || c == '.') {
        ++pos_;
        u = u * term();
      } else if (c == '/') {
        ++pos_;
        u = u / term();
      } else {
        return u;
      }
    }
  }
  double number() {
    skip_space();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v)) fail("expected a number");
    pos_ += static_cast<std::size_t>(end - begin);
    return v;
  }
  Units term() {
    Units u = atom();
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '^') {
      ++pos_;
      skip_space();
      bool paren = pos_ < text_.size() && text_[pos_] == '(';
      if (paren) ++pos_;
      double e = number();
      if (paren) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != ')') fail("expected ')'");
        ++pos_;
      }
      if (u.offset != 0.0) fail("an offset unit (e.g. celsius) cannot be raised to a power");
      u = u.pow(e);
    }
    return u;
  }
  Units atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a unit");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Units u = expr();
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') fail("expected ')'");
      ++pos_;
      return u;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      double v = number();
      Units u;
      u.factor = v;  // "1/ms" is 1 * ms^-1; "1000*mV" is a scaled unit
      if (!(v > 0)) fail("a numeric factor must be positive");
      return u;
    }
    std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            static_cast<unsigned char>(text_[pos_]) >= 0x80))
      ++pos_;
    if (pos_ == start) fail("unexpected '" + std::string(1, c) + "'");
    std::string name = text_.substr(start, pos_ - start);
    auto u = symbol_units(name);
    if (!u) fail("unknown unit '" + name + "'");
    return *u;
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

bool Units::dimensionless() const {
  for (double d : dim)
    if (std::abs(d) > kDimTol) return false;
  return true;
}

bool Units::same_dimension(const Units& other) const {
  for (std::size_t i = 0; i < dim.size(); ++i)
    if (std::abs(dim[i] - other.dim[i]) > kDimTol) return false;
  return true;
}

// Products and powers drop offsets: "celsius per second" is a temperature *difference*
// rate, which is how CellML 1.1 and every simulator treat it.
Units Units::operator*(const Units& o) const {
  Units r;
  for (std::size_t i = 0; i < dim.size(); ++i) r.dim[i] = dim[i] + o.dim[i];
  r.factor = factor * o.factor;
  return r;
}

Units Units::operator/(const Units& o) const {
  Units r;
  for (std::size_t i = 0; i < dim.size(); ++i) r.dim[i] = dim[i] - o.dim[i];
  r.factor = factor / o.factor;
  return r;
}

Units Units::pow(double e) const {
  Units r;
  for (std::size_t i = 0; i < dim.size(); ++i) r.dim[i] = dim[i] * e;
  r.factor = std::pow(factor, e);
  return r;
}

std::string Units::dimension_string() const {
  static const char* names[7] = {"m", "kg", "s", "A", "K", "mol", "cd"};
  std::string s;
  for (std::size_t i = 0; i < dim.size(); ++i) {
    double d = dim[i];
    if (std::abs(d) <= kDimTol) continue;
    if (!s.empty()) s += ".";
    s += names[i];
    if (std::abs(d - 1.0) > kDimTol) {
      std::ostringstream os;
      os << d;
      s += "^" + os.str();
    }
  }
  return s.empty() ? "1" : s;
}

std::optional<Units> builtin_units(const std::string& name) {
  const auto& table = builtin_table();
  if (auto it = table.find(name); it != table.end()) return it->second;
  for (const auto& [p, s] : prefix_names()) {
    if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) {
      auto it = table.find(name.substr(p.size()));
      if (it != table.end()) return scaled(it->second, s);
    }
  }
  return std::nullopt;
}

// Offsets are ignored here (the declaration says offset-free); callers converting
// temperatures add offsets themselves: to = (from + off_from) * f_from / f_to - off_to.
std::optional<double> conversion_factor(const Units& from, const Units& to) {
  if (!from.same_dimension(to)) return std::nullopt;
  return from.factor / to.factor;
}

Units parse_units_expr(const std::string& text) { return UnitsParser(text).parse(); }

}  // namespace hw::model

namespace hw::model {

std::string format_units(const Units& u) {
  if (u.dimensionless() && u.factor == 1.0 && u.offset == 0.0) return "dimensionless";
  // Spellings a modeller expects, tried in order; the first with the same dimension and
  // factor (to rounding) wins.
  static const char* const kFamiliar[] = {
      "mV", "V", "ms", "s", "mM", "uM", "nM", "M", "uA/cm^2", "A/F", "pA/pF", "uA/uF",
      "mS/cm^2", "mS/uF", "nS/pF", "S/F", "uF/cm^2", "uF", "pF", "1/ms", "1/s", "mV/ms",
      "V/s", "mM/ms", "uM/ms", "J/(mol*K)", "J/(kmol*K)", "mJ/(mol*K)", "C/mol", "C/mmol",
      "K", "um", "cm", "mm", "um^2", "cm^2", "um^3", "uL", "nL", "pL", "L", "cm/s", "mS",
      "nS", "uA", "pA", "nA", "mmol", "cm^3", "1/mM", "1/mV", "mM^-1*ms^-1", "uM^-1*ms^-1",
      "mV^-1", "uA/mM", "cm/ms", "L/F", "ms/mV"};
  for (const char* name : kFamiliar) {
    Units f;
    try {
      f = parse_units_expr(name);
    } catch (const Error&) {
      continue;
    }
    if (f.same_dimension(u) && f.offset == u.offset &&
        std::abs(f.factor - u.factor) <= 1e-12 * std::abs(u.factor))
      return name;
  }
  static const char* const kBase[] = {"m", "kg", "s", "A", "K", "mol", "cd"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", u.factor);
  std::string out = buf;
  for (std::size_t i = 0; i < u.dim.size(); ++i) {
    if (std::abs(u.dim[i]) <= kDimTol) continue;
    std::snprintf(buf, sizeof buf, "%.17g", u.dim[i]);
    out += std::string("*") + kBase[i];
    if (u.dim[i] != 1.0) out += std::string("^(") + buf + ")";
  }
  return out;
}

}  // namespace hw::model
