// The TOML case-file reader: a strict walk over the parsed document that knows every key.
//
// How strictness works: each TOML table is wrapped in a Section that records which keys
// the reader asked for; when the reader is done with a table, any key it never asked for
// is an unknown key (with a "did you mean" suggestion). Type and range problems go to one
// DiagnosticSink, so a file with five mistakes reports five errors in one go.
#include "run/case_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "core/suggest.hpp"
#include "model/load.hpp"
#include "run/state_file.hpp"
#include "tissue/case_codes.hpp"

namespace hw::io {

namespace fs = std::filesystem;
using namespace hw::tissue;

namespace {

constexpr const char* kSetPrefix = "--set ";

struct Ctx {
  std::string file;  // for messages
  fs::path dir;      // base for relative paths
  DiagnosticSink sink;
  // Nodes put in by --set (toml++ drops source regions on copy): node → "--set k=v".
  std::map<const toml::node*, std::string> set_nodes;
};

// Location of a node: file:line:col for the case file; "--set k=v" for an override.
SourceLoc loc_of(const Ctx& ctx, const toml::source_region& src) {
  if (src.path && src.path->rfind(kSetPrefix, 0) == 0) return SourceLoc{*src.path, 0, 0};
  SourceLoc loc{ctx.file, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
  return loc;
}
SourceLoc loc_of(const Ctx& ctx, const toml::node& n) {
  if (auto it = ctx.set_nodes.find(&n); it != ctx.set_nodes.end()) return SourceLoc{it->second, 0, 0};
  return loc_of(ctx, n.source());
}

void mark_set(Ctx& ctx, const toml::node& n, const std::string& where) {
  ctx.set_nodes[&n] = where;
  if (auto a = n.as_array())
    for (auto&& e : *a) mark_set(ctx, e, where);
  else if (auto t = n.as_table())
    for (auto&& [k, v] : *t) mark_set(ctx, v, where);
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string show(const toml::node& n) {
  std::ostringstream s;
  if (auto str = n.as_string())
    s << '"' << str->get() << '"';
  else if (n.is_array() || n.is_table())
    s << type_name(n);
  else
    n.visit([&](auto&& v) { s << v; });
  return s.str();
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// One TOML table being read: typed getters that remember which keys were asked for.
class Section {
 public:
  Section(Ctx& ctx, const toml::table& t, std::string name)
      : ctx_(ctx), t_(t), name_(std::move(name)) {}
  Section(const Section&) = delete;

  const std::string& name() const { return name_; }
  std::string key(std::string_view k) const {
    return name_.empty() ? std::string(k) : name_ + "." + std::string(k);
  }
  SourceLoc loc() const { return loc_of(ctx_, t_); }
  SourceLoc loc(std::string_view k) const {
    if (auto n = t_.get(k)) return loc_of(ctx_, *n);
    return loc();
  }
  bool has(std::string_view k) {
    known_.insert(std::string(k));
    return t_.contains(k);
  }
  const toml::node* node(std::string_view k) {
    known_.insert(std::string(k));
    return t_.get(k);
  }
  void error(std::string_view k, const std::string& msg, const char* code) {
    ctx_.sink.add(case_code::problem(loc(k), msg, code));
  }
  void type_error(std::string_view k, const toml::node& n, const char* want) {
    ctx_.sink.add(case_code::problem(loc_of(ctx_, n),
                    key(k) + " must be " + want + ", not " + type_name(n) + " (" + show(n) + ")", case_code::wrong_type));
  }

  std::optional<double> number(std::string_view k) {
    auto n = node(k);
    if (!n) return std::nullopt;
    if (auto v = n->value<double>(); v && (n->is_integer() || n->is_floating_point())) {
      if (!std::isfinite(*v)) {
        ctx_.sink.add(case_code::problem(loc_of(ctx_, *n), key(k) + " must be a finite number, not " + show(*n), case_code::out_of_range));
        return std::nullopt;
      }
      return *v;
    }
    type_error(k, *n, "a number");
    return std::nullopt;
  }
  double number(std::string_view k, double dflt) { return number(k).value_or(dflt); }

  std::optional<long long> integer(std::string_view k) {
    auto n = node(k);
    if (!n) return std::nullopt;
    if (auto v = n->as_integer()) return v->get();
    if (auto f = n->as_floating_point(); f && std::floor(f->get()) == f->get() &&
                                         std::fabs(f->get()) < 9e15)
      return static_cast<long long>(f->get());
    type_error(k, *n, "an integer");
    return std::nullopt;
  }

  std::optional<bool> boolean(std::string_view k) {
    auto n = node(k);
    if (!n) return std::nullopt;
    if (auto v = n->as_boolean()) return v->get();
    type_error(k, *n, "true or false");
    return std::nullopt;
  }
  bool boolean(std::string_view k, bool dflt) { return boolean(k).value_or(dflt); }

  std::optional<std::string> string(std::string_view k) {
    auto n = node(k);
    if (!n) return std::nullopt;
    if (auto v = n->as_string()) return v->get();
    type_error(k, *n, "a string");
    return std::nullopt;
  }

  // One of `choices`; anything else is an error listing them.
  std::optional<std::string> choice(std::string_view k, const std::vector<std::string>& choices) {
    auto s = string(k);
    if (!s) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *s) == choices.end()) {
      error(k, key(k) + " = \"" + *s + "\" is not one of: " + join(choices), case_code::bad_choice);
      return std::nullopt;
    }
    return s;
  }

  // An array of 1..3 numbers (or a single number when allow_scalar). Returns how many were
  // given in `count`.
  std::optional<std::array<double, 3>> vec(std::string_view k, int min_len, bool allow_scalar,
                                           int* count = nullptr) {
    auto n = node(k);
    if (!n) return std::nullopt;
    std::array<double, 3> out{0, 0, 0};
    if (allow_scalar && (n->is_integer() || n->is_floating_point())) {
      double v = *n->value<double>();
      if (!std::isfinite(v)) {
        type_error(k, *n, "finite");
        return std::nullopt;
      }
      out = {v, v, v};
      if (count) *count = 3;
      return out;
    }
    auto arr = n->as_array();
    const std::string want = std::string("an array of ") +
                             (min_len == 3 ? "3" : std::to_string(min_len) + " to 3") +
                             " numbers" + (allow_scalar ? " (or one number)" : "");
    if (!arr || arr->size() < static_cast<std::size_t>(min_len) || arr->size() > 3) {
      ctx_.sink.add(case_code::problem(loc_of(ctx_, *n), key(k) + " must be " + want + ", not " +
                                            (arr ? "an array of " + std::to_string(arr->size())
                                                 : type_name(*n) + " (" + show(*n) + ")"), case_code::wrong_type));
      return std::nullopt;
    }
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& e = *arr->get(i);
      auto v = e.value<double>();
      if (!(e.is_integer() || e.is_floating_point()) || !v || !std::isfinite(*v)) {
        ctx_.sink.add(case_code::problem(loc_of(ctx_, e), key(k) + "[" + std::to_string(i) + "] must be a finite number, not " +
                                             type_name(e) + " (" + show(e) + ")", case_code::wrong_type));
        return std::nullopt;
      }
      out[i] = *v;
    }
    if (count) *count = static_cast<int>(arr->size());
    return out;
  }

  const toml::table* table(std::string_view k) {
    auto n = node(k);
    if (!n) return nullptr;
    if (auto t = n->as_table()) return t;
    type_error(k, *n, "a table");
    return nullptr;
  }

  // Unknown keys: everything present that no getter asked for.
  void finish() {
    for (auto&& [k, v] : t_) {
      const std::string ks(k.str());
      if (known_.count(ks)) continue;
      std::vector<std::string> all(known_.begin(), known_.end());
      const auto near = nearest_names(ks, all, 1);
      const std::string best = near.empty() ? "" : near[0];
      std::string msg = "unknown key '" + key(ks) + "'";
      if (!best.empty()) msg += " (did you mean '" + key(best) + "'?)";
      else msg += " (known keys" + std::string(name_.empty() ? "" : " in " + name_) + ": " + join(all) + ")";
      ctx_.sink.add(case_code::problem(loc_of(ctx_, v), msg, case_code::unknown_key));
    }
  }

 private:
  Ctx& ctx_;
  const toml::table& t_;
  std::string name_;
  std::set<std::string> known_;
};

int axis_of(Section& s, std::string_view k, int dflt) {
  auto n = s.node(k);
  if (!n) return dflt;
  if (auto str = n->as_string()) {
    const std::string& a = str->get();
    if (a == "x") return 0;
    if (a == "y") return 1;
    if (a == "z") return 2;
  } else if (auto i = n->as_integer()) {
    if (i->get() >= 0 && i->get() <= 2) return static_cast<int>(i->get());
  }
  s.error(k, s.key(k) + " must be \"x\", \"y\" or \"z\", not " + show(*n), case_code::bad_choice);
  return dflt;
}

std::string resolve_path(const Ctx& ctx, const std::string& p) {
  fs::path path(p);
  if (path.is_relative() && !ctx.dir.empty()) path = ctx.dir / path;
  // Absolute, so that later stages never resolve it against the case folder a second time.
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  return (ec ? path : abs).lexically_normal().string();
}

// A transmural or apex-base region: the cells whose coordinate lies in [from, to] ⊆ [0, 1].
void read_coordinate_range(Section& s, Region& r, const std::string& kind) {
  r.kind = kind == "transmural" ? Region::Kind::transmural : Region::Kind::apex_base;
  r.from = s.number("from", 0);
  r.to = s.number("to", 1);
  const char* ends = kind == "transmural" ? "0 = endocardium, 1 = epicardium" : "0 = apex, 1 = base";
  if (!(r.from >= 0 && r.to <= 1 && r.from < r.to))
    s.error(s.has("to") ? "to" : "from", s.key("") + "from and to must satisfy 0 ≤ from < to ≤ 1 (" + ends + "), not from = " +
                std::to_string(r.from) + ", to = " + std::to_string(r.to), case_code::out_of_range);
}

// Region: an inline table {kind = "box", lo = [...], hi = [...]} etc.
Region read_region(Ctx& ctx, Section& parent, std::string_view k) {
  Region r;
  r.loc = parent.loc(k);
  const toml::table* t = parent.table(k);
  if (!t) return r;
  Section s(ctx, *t, parent.key(k));
  r.loc = s.loc();
  auto kind = s.choice("kind", {"all", "box", "sphere", "label", "face", "transmural", "apex-base"});
  // Without a kind, the keys say which: lo/hi a box, centre a sphere, label, face; else all.
  const std::string inferred = t->contains("lo") || t->contains("hi") ? "box"
                               : t->contains("centre") || t->contains("radius") ? "sphere"
                               : t->contains("label") ? "label"
                               : t->contains("face") ? "face" : "all";
  const std::string kd = kind.value_or(s.has("kind") ? "" : inferred);
  // Only the keys of this kind may appear.
  const std::map<std::string, std::vector<std::string>> keys_of{
      {"all", {}}, {"box", {"lo", "hi"}}, {"sphere", {"centre", "radius"}},
      {"label", {"label"}}, {"face", {"face", "depth"}},
      {"transmural", {"from", "to"}}, {"apex-base", {"from", "to"}}};
  for (const char* key : {"lo", "hi", "centre", "radius", "label", "face", "depth", "from", "to"}) {
    if (!t->contains(key) || kd.empty()) continue;
    const auto& allowed = keys_of.at(kd);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      s.error(key, s.key(key) + " does not apply to a region of kind \"" + kd + "\"" +
                       (kind ? "" : " (kind inferred from the other keys)"), case_code::conflict);
  }
  int nlo = 3, nhi = 3, nc = 3;
  if (kd == "all") {
    r.kind = Region::Kind::all;
  } else if (kd == "box") {
    r.kind = Region::Kind::box;
    auto lo = s.vec("lo", 1, false, &nlo);
    auto hi = s.vec("hi", 1, false, &nhi);
    if (!s.has("lo") || !s.has("hi")) s.error("kind", s.key("") + "lo and hi are both required for a box region", case_code::missing);
    // Axes not given span the whole domain (lo 0, hi +inf): "lo = [0, 0], hi = [5, 5]" in 2D.
    r.lo = {0, 0, 0};
    r.hi = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    if (lo) for (int a = 0; a < nlo; ++a) r.lo[a] = (*lo)[a];
    if (hi) for (int a = 0; a < nhi; ++a) r.hi[a] = (*hi)[a];
    if (lo && hi)
      for (int a = 0; a < 3; ++a)
        if (!(r.lo[a] < r.hi[a]))
          s.error("hi", s.key("hi") + ": the box is empty along " + "xyz"[a] + " (lo " +
                            std::to_string(r.lo[a]) + " ≥ hi " + std::to_string(r.hi[a]) + " mm)", case_code::out_of_range);
  } else if (kd == "sphere") {
    r.kind = Region::Kind::sphere;
    auto c = s.vec("centre", 2, false, &nc);
    if (c) r.centre = *c;
    if (c && nc == 2) r.centre[2] = NAN;  // 2D: the middle of the sheet, set in validation
    r.radius = s.number("radius").value_or(0);
    if (!c) s.error("kind", s.key("centre") + " is required for a sphere region", case_code::missing);
    if (!(r.radius > 0)) s.error("radius", s.key("radius") + " must be > 0 mm", case_code::out_of_range);
  } else if (kd == "label") {
    r.kind = Region::Kind::label;
    auto l = s.integer("label");
    if (!l) s.error("kind", s.key("label") + " (an integer) is required for a label region", case_code::missing);
    r.label = static_cast<int>(l.value_or(0));
  } else if (kd == "transmural" || kd == "apex-base") {
    read_coordinate_range(s, r, kd);
  } else if (kd == "face") {
    r.kind = Region::Kind::face;
    auto f = s.choice("face", {"x-", "x+", "y-", "y+", "z-", "z+"});
    if (!s.has("face")) s.error("kind", s.key("face") + " (\"x-\", \"x+\", ... \"z+\") is required for a face region", case_code::missing);
    r.face = f.value_or("x-");
    r.depth = s.number("depth", 0);
    if (r.depth < 0) s.error("depth", s.key("depth") + " must be ≥ 0 mm", case_code::out_of_range);
  }
  s.finish();
  return r;
}

const toml::array* array_of_tables(Ctx& ctx, Section& root, std::string_view k) {
  auto n = root.node(k);
  if (!n) return nullptr;
  auto arr = n->as_array();
  if (!arr || !arr->is_array_of_tables()) {
    ctx.sink.add(case_code::problem(loc_of(ctx, *n), "'" + std::string(k) + "' must be an array of tables, written [[" +
                                        std::string(k) + "]], not " + type_name(*n), case_code::wrong_type));
    return nullptr;
  }
  return arr;
}

void read_params(Ctx& ctx, Section& s, std::string_view k, std::map<std::string, double>& out) {
  const toml::table* t = s.table(k);
  if (!t) return;
  for (auto&& [name, v] : *t) {
    auto d = v.value<double>();
    if ((!v.is_integer() && !v.is_floating_point()) || !d || !std::isfinite(*d)) {
      ctx.sink.add(case_code::problem(loc_of(ctx, v), s.key(k) + "." + std::string(name.str()) +
                                         " must be a finite number, not " + type_name(v) + " (" + show(v) + ")", case_code::wrong_type));
      continue;
    }
    out[std::string(name.str())] = *d;
  }
}

void read_grid(Ctx& ctx, Section& root, TissueCase& c, bool from_file) {
  const toml::table* t = root.table("grid");
  if (!t) {
    if (!from_file && !root.has("grid"))
      ctx.sink.add(case_code::problem(SourceLoc{ctx.file, 0, 0}, "missing [grid] (size or length, and spacing)", case_code::missing));
    return;
  }
  Section s(ctx, *t, "grid");
  int nsize = 0;
  auto size = s.vec("size", 1, false, &nsize);
  auto length = s.vec("length", 1, false);
  auto spacing = s.vec("spacing", 1, true);
  if (from_file) {
    for (const char* k : {"size", "length", "spacing"})
      if (t->contains(k))
        s.error(k, "grid." + std::string(k) + " cannot be set with a geometry file: the file gives the grid", case_code::conflict);
  } else {
    if (size && length) s.error("length", "grid: give size or length, not both", case_code::conflict);
    if (!s.has("size") && !s.has("length")) s.error("", "grid: size (cells per axis) or length (mm) is required", case_code::missing);
    if (!s.has("spacing")) s.error("", "grid.spacing (mm) is required", case_code::missing);
    // Spacing: missing axes repeat the last one given.
    std::array<double, 3> h = c.grid.h;
    if (auto sp = s.node("spacing"); sp && spacing) {
      int n = sp->is_array() ? static_cast<int>(sp->as_array()->size()) : 3;
      for (int a = 0; a < 3; ++a) h[a] = (*spacing)[std::min(a, n - 1)];
      for (int a = 0; a < 3; ++a)
        if (!(h[a] > 0)) s.error("spacing", "grid.spacing: d" + std::string(1, "xyz"[a]) + " = " +
                                                std::to_string(h[a]) + " mm must be > 0", case_code::out_of_range);
    }
    c.grid.h = h;
    if (size) {
      for (int a = 0; a < 3; ++a) {
        double v = a < nsize ? (*size)[a] : 1;
        if (!(v >= 1) || std::floor(v) != v || v > 1e9) {
          s.error("size", "grid.size[" + std::to_string(a) + "] = " + std::to_string(v) +
                              " must be a whole number of cells ≥ 1", case_code::out_of_range);
          v = 1;
        }
        c.grid.n[a] = static_cast<int>(v);
      }
    }
    if (length && spacing) {
      for (int a = 0; a < 3; ++a) {
        double L = (*length)[a];
        if (s.node("length")->as_array()->size() <= static_cast<std::size_t>(a)) L = h[a];
        if (!(L > 0)) {
          s.error("length", "grid.length[" + std::to_string(a) + "] must be > 0 mm", case_code::out_of_range);
          continue;
        }
        if (!(h[a] > 0)) continue;
        double n = std::round(L / h[a]);
        if (n < 1 || std::fabs(n * h[a] - L) > 1e-6 * L) {
          s.error("length", "grid.length[" + std::to_string(a) + "] = " + std::to_string(L) +
                                " mm is not a whole number of cells of " + std::to_string(h[a]) + " mm", case_code::out_of_range);
          continue;
        }
        if (n > 1e9) {
          s.error("length", "grid.length / grid.spacing gives too many cells", case_code::out_of_range);
          continue;
        }
        c.grid.n[a] = static_cast<int>(n);
      }
    }
    const double cells = double(c.grid.n[0]) * c.grid.n[1] * c.grid.n[2];
    if (cells > 1e13)
      s.error(size ? "size" : "length", "grid: " + std::to_string(cells) + " cells is more than any machine can hold", case_code::out_of_range);
  }
  if (auto b = s.node("boundary")) {
    auto parse_bc = [&](const toml::node& n, Boundary& out) {
      auto str = n.as_string();
      if (str && (str->get() == "no-flux" || str->get() == "periodic")) {
        out = str->get() == "periodic" ? Boundary::periodic : Boundary::no_flux;
        return;
      }
      ctx.sink.add(case_code::problem(loc_of(ctx, n), "grid.boundary must be \"no-flux\" or \"periodic\" (or an array of 3 of them), not " + show(n), case_code::bad_choice));
    };
    if (auto arr = b->as_array()) {
      if (arr->size() != 3)
        ctx.sink.add(case_code::problem(loc_of(ctx, *b), "grid.boundary must have 3 entries (x, y, z), not " + std::to_string(arr->size()), case_code::out_of_range));
      else
        for (int a = 0; a < 3; ++a) parse_bc(*arr->get(a), c.grid.bc[a]);
    } else {
      Boundary bc = Boundary::no_flux;
      parse_bc(*b, bc);
      c.grid.bc = {bc, bc, bc};
    }
  }
  s.finish();
}

void read_geometry(Ctx& ctx, Section& root, TissueCase& c) {
  c.geometry.loc = SourceLoc{ctx.file, 0, 0};
  const toml::table* t = root.table("geometry");
  if (!t) return;
  Section s(ctx, *t, "geometry");
  c.geometry.loc = s.loc();
  auto kind = s.choice("kind", {"box", "mask", "phase-field", "ellipsoid-shell", "slab-with-hole", "mesh"});
  const std::string k = kind.value_or("box");
  using K = GeometrySpec::Kind;
  c.geometry.kind = k == "mask" ? K::mask_file : k == "phase-field" ? K::phase_field_file
                    : k == "ellipsoid-shell" ? K::ellipsoid_shell
                    : k == "slab-with-hole" ? K::slab_with_hole : k == "mesh" ? K::mesh : K::box;
  auto file = s.string("file");
  const bool mesh = k == "mesh";
  const bool wants_file = k == "mask" || k == "phase-field" || mesh;
  if (wants_file && !file && !s.has("file"))
    s.error("kind", "geometry.file is required for kind \"" + k + "\"", case_code::missing);
  if (!wants_file && t->contains("file"))
    s.error("file", "geometry.file does not apply to kind \"" + k + "\"", case_code::conflict);
  if (file) {
    c.geometry.path = resolve_path(ctx, *file);
    std::error_code ec;
    // An openCARP mesh may be named by its base name (heart for heart.pts/.elem).
    const bool base_name = mesh && fs::is_regular_file(c.geometry.path + ".pts", ec);
    if (!fs::is_regular_file(c.geometry.path, ec) && !base_name)
      s.error("file", "geometry.file: cannot open '" + c.geometry.path + "' (no such file)", case_code::no_file);
  }
  if (auto u = s.choice("units", {"um", "mm", "cm", "m"})) c.geometry.units = *u;
  if (!mesh && t->contains("units"))
    s.error("units", "geometry.units applies only to kind \"mesh\" (an image's header gives its own)", case_code::conflict);
  if (auto tg = s.node("tags")) {
    if (!mesh) s.error("tags", "geometry.tags applies only to kind \"mesh\"", case_code::conflict);
    else if (auto tt = tg->as_table()) {
      for (const auto& [name, value] : *tt) {
        char* end = nullptr;
        const std::string key(name.str());
        const long tag = std::strtol(key.c_str(), &end, 10);
        auto label = value.value<long long>();
        if (key.empty() || *end || !value.is_integer() || !label || *label < 0 || *label > 32767)
          ctx.sink.add(case_code::problem(loc_of(ctx, value), "geometry.tags: each entry maps an element tag to a region "
                                          "label 0…32767 (0 leaves those elements out), as \"2\" = 3; not '" + key +
                                          "' = " + show(value), case_code::out_of_range));
        else c.geometry.tags[static_cast<std::int32_t>(tag)] = static_cast<std::int32_t>(*label);
      }
    } else {
      s.type_error("tags", *tg, "a table of tag = label (e.g. { \"1\" = 1, \"2\" = 0 })");
    }
  }
  c.geometry.threshold = s.number("threshold", k == "phase-field" ? 0.5 : 0.5);
  if (auto th = c.geometry.threshold; !(th >= 0 && th < 1) && k == "phase-field")
    s.error("threshold", "geometry.threshold must be in [0, 1) for a phase field", case_code::out_of_range);
  c.geometry.phase_field = s.boolean("phase_field", k == "phase-field");
  if (auto sp = s.vec("spacing", 3, true)) {
    if (!wants_file)
      s.error("spacing", "geometry.spacing (resampling an image, voxelising a mesh) applies only to kinds \"mask\", "
                         "\"phase-field\" and \"mesh\"; a box's spacing is grid.spacing", case_code::conflict);
    for (double x : *sp)
      if (!(x > 0)) s.error("spacing", "geometry.spacing must be > 0 mm on every axis", case_code::out_of_range);
    c.geometry.spacing = *sp;
  }
  if (mesh && !s.has("spacing"))
    s.error("kind", "geometry.spacing (mm, the voxel size) is required for kind \"mesh\"", case_code::missing);
  auto need3 = [&](const char* key, std::array<double, 3>& out, bool positive) {
    auto v = s.vec(key, 3, false);
    if (!v) {
      if (!s.has(key)) s.error("kind", std::string("geometry.") + key + " is required for kind \"" + k + "\"", case_code::missing);
      return;
    }
    out = *v;
    if (positive)
      for (double x : out)
        if (!(x > 0)) s.error(key, std::string("geometry.") + key + " must be > 0 mm on every axis", case_code::out_of_range);
  };
  const bool shell = k == "ellipsoid-shell", hole = k == "slab-with-hole";
  for (const char* key : {"centre", "radii_outer", "radii_inner"})
    if (!shell && t->contains(key)) s.error(key, std::string("geometry.") + key + " applies only to kind \"ellipsoid-shell\"", case_code::conflict);
  if (!hole && t->contains("hole_radius")) s.error("hole_radius", "geometry.hole_radius applies only to kind \"slab-with-hole\"", case_code::conflict);
  if (shell) {
    need3("centre", c.geometry.centre, false);
    need3("radii_outer", c.geometry.radii_outer, true);
    need3("radii_inner", c.geometry.radii_inner, true);
    for (int a = 0; a < 3; ++a)
      if (c.geometry.radii_inner[a] >= c.geometry.radii_outer[a] && c.geometry.radii_outer[a] > 0)
        s.error("radii_inner", "geometry.radii_inner must be smaller than radii_outer on every axis", case_code::out_of_range);
  } else {
    s.node("centre"), s.node("radii_outer"), s.node("radii_inner");
  }
  if (hole) {
    c.geometry.hole_radius = s.number("hole_radius").value_or(0);
    if (!(c.geometry.hole_radius > 0)) s.error("hole_radius", "geometry.hole_radius (mm, > 0) is required for kind \"slab-with-hole\"", case_code::missing);
  } else {
    s.node("hole_radius");
  }
  s.finish();
}

// Rule-based fibres: the long axis ("x", "y", "z" or a vector; absent = found from the
// tissue) and the helix angles through the wall (angles = [endo, …, epi], or from/to).
void read_rule_based_keys(Ctx& ctx, Section& s, FibreSpec& f) {
  if (auto n = s.node("axis")) {
    if (n->is_array()) {
      if (auto v = s.vec("axis", 3, false)) {
        if (std::hypot((*v)[0], (*v)[1], (*v)[2]) > 0) f.long_axis = *v;
        else s.error("axis", "fibres.axis must not be the zero vector", case_code::out_of_range);
      }
    } else {
      std::array<double, 3> a{0, 0, 0};
      a[axis_of(s, "axis", 2)] = 1;
      f.long_axis = a;
    }
  }
  if (auto n = s.node("angles")) {
    auto arr = n->as_array();
    if (!arr || arr->empty()) {
      s.type_error("angles", *n, "an array of helix angles in degrees, endo first (e.g. [60, -60])");
      return;
    }
    if (s.has("from") || s.has("to"))
      s.error("angles", "fibres: give angles or from/to, not both", case_code::conflict);
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& e = *arr->get(i);
      auto v = e.value<double>();
      if (!(e.is_integer() || e.is_floating_point()) || !v || !std::isfinite(*v)) {
        ctx.sink.add(case_code::problem(loc_of(ctx, e), "fibres.angles[" + std::to_string(i) + "] must be a finite "
                                        "number of degrees, not " + type_name(e) + " (" + show(e) + ")", case_code::wrong_type));
        return;
      }
      f.angles.push_back(*v);
    }
  }
}

void read_fibres(Ctx& ctx, Section& root, TissueCase& c) {
  c.fibres.loc = SourceLoc{ctx.file, 0, 0};
  const toml::table* t = root.table("fibres");
  if (!t) return;
  Section s(ctx, *t, "fibres");
  c.fibres.loc = s.loc();
  auto kind = s.choice("kind", {"none", "uniform", "rotating", "file", "rule-based", "mesh"});
  if (!s.has("kind")) s.error("", "fibres.kind is required (none, uniform, rotating, file, rule-based, mesh)", case_code::missing);
  const std::string k = kind.value_or("none");
  using K = FibreSpec::Kind;
  c.fibres.kind = k == "uniform" ? K::uniform : k == "rotating" ? K::rotating
                  : k == "file" ? K::file : k == "rule-based" ? K::rule_based : k == "mesh" ? K::mesh : K::none;
  if (k == "mesh" && c.geometry.kind != GeometrySpec::Kind::mesh)
    s.error("kind", "fibres.kind = \"mesh\" takes the fibres of the mesh file: it needs geometry.kind = \"mesh\"",
            case_code::conflict);
  if (auto d = s.vec("direction", 2, false)) {
    c.fibres.direction = *d;
    if (std::hypot(d->at(0), d->at(1), d->at(2)) == 0) s.error("direction", "fibres.direction must not be zero", case_code::out_of_range);
  }
  if (k != "uniform" && t->contains("direction")) s.error("direction", "fibres.direction applies only to kind \"uniform\"", case_code::conflict);
  c.fibres.angle_from = s.number("from", 60);
  c.fibres.angle_to = s.number("to", -60);
  for (const char* key : {"from", "to"})
    if (k != "rotating" && k != "rule-based" && t->contains(key))
      s.error(key, std::string("fibres.") + key + " applies only to kinds \"rotating\" and \"rule-based\"", case_code::conflict);
  if (k == "rule-based") {
    read_rule_based_keys(ctx, s, c.fibres);
  } else {
    c.fibres.axis = axis_of(s, "axis", 2);
    if (k != "rotating" && t->contains("axis"))
      s.error("axis", "fibres.axis applies only to kinds \"rotating\" and \"rule-based\"", case_code::conflict);
    if (s.node("angles")) s.error("angles", "fibres.angles applies only to kind \"rule-based\"", case_code::conflict);
  }
  if (auto f = s.string("file")) {
    c.fibres.path = resolve_path(ctx, *f);
    std::error_code ec;
    if (!fs::is_regular_file(c.fibres.path, ec))
      s.error("file", "fibres.file: cannot open '" + c.fibres.path + "' (no such file)", case_code::no_file);
  }
  if (k == "file" && !s.has("file")) s.error("kind", "fibres.file is required for kind \"file\"", case_code::missing);
  if (k != "file" && t->contains("file")) s.error("file", "fibres.file applies only to kind \"file\"", case_code::conflict);
  s.finish();
}

void read_conductivity(Ctx& ctx, Section& root, TissueCase& c) {
  const toml::table* t = root.table("conductivity");
  if (!t) return;
  Section s(ctx, *t, "conductivity");
  auto& k = c.conductivity;
  // χ and Cm first: a diffusivity is turned into σ = D·χ·Cm.
  auto chi = s.number("chi");
  auto chi_cm = s.number("chi_per_cm");
  if (chi && chi_cm) s.error("chi_per_cm", "conductivity: give chi (1/mm) or chi_per_cm (1/cm), not both", case_code::conflict);
  if (chi) k.chi = *chi;
  if (chi_cm) k.chi = *chi_cm / 10.0;
  if ((chi || chi_cm) && !(k.chi > 0)) s.error(chi ? "chi" : "chi_per_cm", "conductivity.chi must be > 0", case_code::out_of_range);
  auto cm = s.number("cm");
  auto cm_cm2 = s.number("cm_uF_per_cm2");
  if (cm && cm_cm2) s.error("cm_uF_per_cm2", "conductivity: give cm (µF/mm²) or cm_uF_per_cm2 (µF/cm²), not both", case_code::conflict);
  if (cm) k.cm = *cm;
  if (cm_cm2) k.cm = *cm_cm2 / 100.0;
  if ((cm || cm_cm2) && !(k.cm > 0)) s.error(cm ? "cm" : "cm_uF_per_cm2", "conductivity.cm must be > 0", case_code::out_of_range);

  auto sl = s.number("sigma_l"), st = s.number("sigma_t"), sn = s.number("sigma_n");
  auto d = s.number("diffusivity");
  if (d && (sl || st || sn))
    s.error("diffusivity", "conductivity: give diffusivity (mm²/ms, isotropic) or sigma_l/sigma_t, not both", case_code::conflict);
  if (d) {
    if (!(*d >= 0)) s.error("diffusivity", "conductivity.diffusivity must be ≥ 0 mm²/ms", case_code::out_of_range);
    k.sigma_l = k.sigma_t = *d * k.chi * k.cm;
  }
  if (sl) k.sigma_l = *sl;
  if (st) k.sigma_t = *st;
  if (sl && !st && !sn) k.sigma_t = *sl;  // one value: isotropic
  if (sn) k.sigma_n = *sn;
  for (const char* key : {"sigma_l", "sigma_t", "sigma_n"})
    if (auto v = s.number(key); v && !(*v >= 0)) s.error(key, std::string("conductivity.") + key + " must be ≥ 0 S/m", case_code::out_of_range);
  if (auto o = s.choice("stencil", {"second", "fourth"}))
    k.order = *o == "fourth" ? StencilOrder::fourth : StencilOrder::second;
  s.finish();
}

void read_models(Ctx& ctx, Section& root, TissueCase& c) {
  const toml::array* arr = array_of_tables(ctx, root, "model");
  if (!arr) {
    if (!root.has("model"))
      ctx.sink.add(case_code::problem(SourceLoc{ctx.file, 0, 0},
                     "missing model: add a [[model]] table with name = \"<built-in model or file>\"", case_code::missing));
    return;
  }
  const auto builtins = hw::model::builtin_model_names();
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *arr->get(i)->as_table();
    Section s(ctx, t, "model[" + std::to_string(i) + "]");
    ModelRegion m;
    m.loc = s.loc();
    auto name = s.string("name");
    if (!name && !s.has("name")) s.error("", s.key("name") + " is required (a built-in model or a .hwm/.cellml file)", case_code::missing);
    if (name) {
      if (std::find(builtins.begin(), builtins.end(), *name) != builtins.end()) {
        m.model = *name;
      } else {
        m.model = resolve_path(ctx, *name);
        std::error_code ec;
        if (!fs::is_regular_file(m.model, ec))
          s.error("name", s.key("name") + " = \"" + *name + "\" is neither a built-in model (" +
                              join(builtins) + ") nor a file" + did_you_mean(*name, builtins, 3),
                  case_code::unknown_model);
      }
      if (s.loc("name").line > 0) m.loc = s.loc("name");
    }
    if (s.has("region")) m.where = read_region(ctx, s, "region");
    read_params(ctx, s, "params", m.params);
    read_params(ctx, s, "scale", m.scales);
    if (auto f = s.string("initial_state")) {
      try {
        m.initial_state = hw::run::read_state_file(resolve_path(ctx, *f));
      } catch (const InputError& e) {
        for (Diagnostic d : e.diagnostics()) {
          d.message = s.key("initial_state") + " = \"" + *f + "\": " + d.message;
          ctx.sink.add(d);
        }
      }
    }
    s.finish();
    c.models.push_back(std::move(m));
  }
}

// A gradient's axis: "x", "y", "z", or a heart's coordinate, "transmural" or "apex-base".
void read_gradient_axis(Section& s, ParameterGradient& g) {
  if (auto n = s.node("axis"); n && n->is_string()) {
    const std::string a = n->as_string()->get();
    if (a == "transmural" || a == "apex-base") {
      g.along = a == "transmural" ? ParameterGradient::Along::transmural : ParameterGradient::Along::apex_base;
      return;
    }
    if (a != "x" && a != "y" && a != "z") {
      s.error("axis", s.key("axis") + " must be \"x\", \"y\", \"z\", \"transmural\" or \"apex-base\", not \"" + a + "\"",
              case_code::bad_choice);
      return;
    }
  }
  g.axis = axis_of(s, "axis", 2);
}

void read_gradients(Ctx& ctx, Section& root, TissueCase& c) {
  const toml::array* arr = array_of_tables(ctx, root, "gradient");
  if (!arr) return;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Section s(ctx, *arr->get(i)->as_table(), "gradient[" + std::to_string(i) + "]");
    ParameterGradient g;
    g.loc = s.loc();
    auto p = s.string("param");
    if (!p && !s.has("param")) s.error("", s.key("param") + " is required (the parameter's name)", case_code::missing);
    g.param = p.value_or("");
    read_gradient_axis(s, g);
    g.from = s.number("from", 1);
    g.to = s.number("to", 1);
    if (auto mode = s.choice("mode", {"scale", "set"})) g.scale = *mode == "scale";
    s.finish();
    c.gradients.push_back(std::move(g));
  }
}

void read_stimuli(Ctx& ctx, Section& root, TissueCase& c) {
  const toml::array* arr = array_of_tables(ctx, root, "stimulus");
  if (!arr) return;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Section s(ctx, *arr->get(i)->as_table(), "stimulus[" + std::to_string(i) + "]");
    Stimulus st;
    st.loc = s.loc();
    if (s.has("region")) st.where = read_region(ctx, s, "region");
    else s.error("", s.key("region") + " is required (e.g. {kind = \"box\", lo = [0, 0], hi = [1, 1]})", case_code::missing);
    auto a = s.number("amplitude");
    auto a_cm = s.number("amplitude_uA_per_cm3");
    if (a && a_cm) s.error("amplitude_uA_per_cm3", s.key("") + "give amplitude (µA/mm³) or amplitude_uA_per_cm3, not both", case_code::conflict);
    if (!s.has("amplitude") && !s.has("amplitude_uA_per_cm3"))
      s.error("", s.key("amplitude") + " (µA/mm³) is required", case_code::missing);
    if (a) st.amplitude = *a;
    if (a_cm) st.amplitude = *a_cm / 1000.0;
    st.start = s.number("start", 0);
    st.duration = s.number("duration", 1);
    st.period = s.number("period", 0);
    auto count = s.integer("count");
    st.count = static_cast<int>(std::clamp<long long>(count.value_or(1), -1, 1 << 30));
    if (st.start < 0) s.error("start", s.key("start") + " must be ≥ 0 ms", case_code::out_of_range);
    if (!(st.duration > 0)) s.error("duration", s.key("duration") + " must be > 0 ms", case_code::out_of_range);
    if (st.period < 0) s.error("period", s.key("period") + " must be ≥ 0 ms (0 = once)", case_code::out_of_range);
    if (count && *count < 1) s.error("count", s.key("count") + " must be ≥ 1", case_code::out_of_range);
    if (st.period > 0 && st.period < st.duration)
      s.error("period", s.key("period") + " must be longer than the duration", case_code::out_of_range);
    s.finish();
    c.stimuli.push_back(std::move(st));
  }
}

void read_initial(Ctx& ctx, Section& root, TissueCase& c) {
  const toml::array* arr = array_of_tables(ctx, root, "initial");
  if (!arr) return;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Section s(ctx, *arr->get(i)->as_table(), "initial[" + std::to_string(i) + "]");
    InitialCondition ic;
    ic.loc = s.loc();
    if (s.has("region")) ic.where = read_region(ctx, s, "region");
    auto v = s.string("variable");
    if (!v && !s.has("variable")) s.error("", s.key("variable") + " is required (a state name, or \"V\")", case_code::missing);
    if (v && v->empty()) s.error("variable", s.key("variable") + " must not be empty", case_code::out_of_range);
    ic.variable = v.value_or("V");
    auto val = s.number("value");
    if (!val && !s.has("value")) s.error("", s.key("value") + " is required", case_code::missing);
    ic.value = val.value_or(0);
    s.finish();
    c.initial.push_back(std::move(ic));
  }
}

void read_time(Ctx& ctx, Section& root, TissueCase& c) {
  auto& tm = c.time;
  tm.loc = SourceLoc{ctx.file, 0, 0};
  const toml::table* t = root.table("time");
  if (!t) {
    if (!root.has("time")) ctx.sink.add(case_code::problem(SourceLoc{ctx.file, 0, 0}, "missing [time] (dt and t_end, ms)", case_code::missing));
    return;
  }
  Section s(ctx, *t, "time");
  tm.loc = s.loc("dt");
  auto dt = s.number("dt");
  auto t_end = s.number("t_end");
  if (!s.has("dt")) s.error("", "time.dt (ms) is required", case_code::missing);
  if (!s.has("t_end")) s.error("", "time.t_end (ms) is required", case_code::missing);
  if (dt) {
    tm.dt = *dt;
    if (!(tm.dt > 0)) s.error("dt", "time.dt = " + show(*s.node("dt")) + " ms must be > 0", case_code::out_of_range);
  }
  if (t_end) {
    tm.t_end = *t_end;
    if (!(tm.t_end > 0)) s.error("t_end", "time.t_end = " + show(*s.node("t_end")) + " ms must be > 0", case_code::out_of_range);
  }
  if (dt && t_end && tm.dt > 0 && tm.t_end > 0) {
    if (tm.dt > tm.t_end) s.error("dt", "time.dt must not exceed time.t_end", case_code::out_of_range);
    if (tm.t_end / tm.dt > 1e12) s.error("t_end", "time.t_end / time.dt gives more than 10^12 steps", case_code::out_of_range);
  }
  if (auto n = s.integer("ode_substeps")) {
    if (*n < 1 || *n > 100000) s.error("ode_substeps", "time.ode_substeps must be between 1 and 100000", case_code::out_of_range);
    else tm.ode_substeps = static_cast<int>(*n);
  }
  if (auto i = s.choice("integrator", {"auto", "fe", "rk2", "rk4", "rl1", "rl2", "sbe", "grl1", "grl2"})) tm.integrator = *i;
  if (auto sp = s.choice("splitting", {"godunov", "strang"}))
    tm.splitting = *sp == "strang" ? Splitting::strang : Splitting::godunov;
  if (auto d = s.choice("diffusion", {"explicit", "backward-euler", "crank-nicolson"}))
    tm.diffusion = *d == "backward-euler"   ? DiffusionScheme::backward_euler
                   : *d == "crank-nicolson" ? DiffusionScheme::crank_nicolson
                                            : DiffusionScheme::forward_euler;
  if (auto p = s.choice("precision", {"float", "double"}))
    tm.precision = *p == "double" ? Precision::f64 : Precision::f32;
  if (auto m = s.choice("cell_maths", {"exact", "tables", "fast", "tables+fast"})) {
    tm.cell_maths = *model::parse_cell_maths(*m);
    if (tm.cell_maths.fast && tm.precision == Precision::f64)
      s.error("cell_maths", "time.cell_maths = \"" + *m + "\" asks for the fast intrinsics, which are float only, but time.precision = \"double\": "
              "use \"" + (tm.cell_maths.tables ? "tables" : "exact") + "\" in double, or time.precision = \"float\"", case_code::bad_choice);
  }
  if (auto tol = s.number("cg_tolerance")) {
    if (!(*tol > 0 && *tol < 1)) s.error("cg_tolerance", "time.cg_tolerance must be in (0, 1)", case_code::out_of_range);
    else tm.cg_tolerance = *tol;
  }
  if (auto n = s.integer("cg_max_iterations")) {
    if (*n < 1 || *n > 1000000)
      s.error("cg_max_iterations", "time.cg_max_iterations must be between 1 and 1000000", case_code::out_of_range);
    else tm.cg_max_iterations = static_cast<int>(*n);
  }
  s.finish();
}

std::vector<Probe> read_points(Ctx& ctx, Section& s, std::string_view k, const char* what) {
  std::vector<Probe> out;
  auto n = s.node(k);
  if (!n) return out;
  auto arr = n->as_array();
  if (!arr) {
    s.type_error(k, *n, "an array of {name = \"...\", position = [x, y, z]}");
    return out;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    auto t = arr->get(i)->as_table();
    if (!t) {
      ctx.sink.add(case_code::problem(loc_of(ctx, *arr->get(i)), s.key(k) + "[" + std::to_string(i) + "] must be a table {name = \"...\", position = [x, y, z]}", case_code::wrong_type));
      continue;
    }
    Section e(ctx, *t, s.key(k) + "[" + std::to_string(i) + "]");
    Probe p;
    p.name = e.string("name").value_or(std::string(what) + std::to_string(i));
    int np = 3;
    if (auto pos = e.vec("position", 2, false, &np)) {
      p.position = *pos;
      if (np == 2) p.position[2] = NAN;  // 2D: the sheet's middle, set in validation
    } else if (!e.has("position")) {
      e.error("", e.key("position") + " (mm) is required", case_code::missing);
    }
    e.finish();
    out.push_back(p);
  }
  return out;
}

// Fields of the geometry rather than of the run: written once, to geometry.vti.
bool is_geometry_field(const std::string& name) {
  return name == "fibres" || name == "transmural" || name == "apex-base";
}

void read_output(Ctx& ctx, Section& root, TissueCase& c) {
  auto& o = c.output;
  o.loc = SourceLoc{ctx.file, 0, 0};
  const toml::table* t = root.table("output");
  if (!t) return;
  Section s(ctx, *t, "output");
  o.loc = s.loc();
  if (auto d = s.string("directory")) {
    if (d->empty()) s.error("directory", "output.directory must not be empty", case_code::out_of_range);
    else o.directory = *d;
  }
  if (auto n = s.node("fields")) {
    auto arr = n->as_array();
    if (!arr) {
      s.type_error("fields", *n, "an array of variable names");
    } else {
      o.variables.clear();
      for (auto&& e : *arr) {
        if (auto str = e.as_string(); str && is_geometry_field(str->get())) o.geometry_fields.push_back(str->get());
        else if (str) o.variables.push_back(str->get());
        else ctx.sink.add(case_code::problem(loc_of(ctx, e), "output.fields entries must be strings, not " + type_name(e), case_code::wrong_type));
      }
    }
  }
  auto nonneg = [&](const char* key, double& out) {
    if (auto v = s.number(key)) {
      if (*v < 0) s.error(key, std::string("output.") + key + " must be ≥ 0 ms (0 = off)", case_code::out_of_range);
      else out = *v;
    }
  };
  nonneg("field_interval", o.field_interval);
  if (auto f = s.choice("format", {"vtk", "hdf5"})) o.format = *f == "hdf5" ? OutputSpec::Format::hdf5 : OutputSpec::Format::vtk;
  o.probes = read_points(ctx, s, "probes", "probe");
  // Probes trace output.fields' variables: with none they would record only the time.
  if (!o.probes.empty() && o.variables.empty())
    s.error("probes",
            "output.probes trace the variables of output.fields, which names none: add one (fields = [\"V\"]; "
            "field_interval = 0 still writes no field series) or remove the probes",
            case_code::out_of_range);
  if (auto v = s.number("probe_interval")) {
    if (!(*v > 0)) s.error("probe_interval", "output.probe_interval must be > 0 ms", case_code::out_of_range);
    else o.probe_interval = *v;
  }
  o.activation_map = s.boolean("activation_map", o.activation_map);
  o.activation_threshold = s.number("activation_threshold", o.activation_threshold);
  o.apd_map = s.boolean("apd_map", o.apd_map);
  o.on_mesh = s.boolean("mesh", o.on_mesh);
  if (t->contains("mesh") && c.geometry.kind != GeometrySpec::Kind::mesh)
    s.error("mesh", "output.mesh applies only to geometry.kind = \"mesh\" (results sampled onto its nodes)", case_code::conflict);
  o.conduction_velocity = s.boolean("conduction_velocity", o.conduction_velocity);
  for (auto& p : read_points(ctx, s, "electrodes", "electrode")) o.electrodes.push_back({p.name, p.position});
  nonneg("png_interval", o.png_interval);
  if (auto v = s.string("png_variable")) o.png_variable = *v;
  o.png_slice_axis = axis_of(s, "png_slice_axis", o.png_slice_axis);
  if (auto v = s.number("png_slice_position")) o.png_slice_position = *v;
  o.movie = s.boolean("movie", o.movie);
  nonneg("checkpoint_interval", o.checkpoint_interval);
  s.finish();
}

// --set key.path=value → the node inserted into the document.
void apply_override(Ctx& ctx, toml::table& root, const std::string& text) {
  const SourceLoc here{kSetPrefix + text, 0, 0};
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    ctx.sink.add(case_code::problem(here, "--set needs key.path=value (e.g. --set time.dt=0.01)", case_code::bad_override));
    return;
  }
  std::string path = text.substr(0, eq), value = text.substr(eq + 1);
  // "stimulus[0].amplitude" and "stimulus.0.amplitude" are the same path.
  std::vector<std::string> parts;
  {
    std::string cur;
    for (char ch : path) {
      if (ch == '.' || ch == '[' || ch == ']') {
        if (!cur.empty()) parts.push_back(cur);
        cur.clear();
      } else if (ch != ' ') {
        cur += ch;
      }
    }
    if (!cur.empty()) parts.push_back(cur);
  }
  if (parts.empty()) {
    ctx.sink.add(case_code::problem(here, "--set: empty key", case_code::bad_override));
    return;
  }
  // Parse the value as TOML; a bare word becomes a string (--set time.integrator=rk4).
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value, kSetPrefix + text);
  } catch (const toml::parse_error&) {
    const bool bare = !value.empty() && value.find_first_of("\"'[]{}\n\\") == std::string::npos;
    try {
      if (!bare) throw toml::parse_error("", toml::source_region{});
      parsed = toml::parse("v = '" + value + "'", kSetPrefix + text);
    } catch (const toml::parse_error&) {
      ctx.sink.add(case_code::problem(here, "--set: '" + value + "' is not a TOML value (numbers, \"strings\", [arrays], {tables})", case_code::bad_override));
      return;
    }
  }
  toml::node* at = &root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    walked += (walked.empty() ? "" : ".") + p;
    if (auto arr = at->as_array()) {
      char* end = nullptr;
      long idx = std::strtol(p.c_str(), &end, 10);
      if (*end != '\0' || idx < 0 || static_cast<std::size_t>(idx) >= arr->size()) {
        ctx.sink.add(case_code::problem(here, "--set: '" + walked + "': there " +
                                 (arr->size() == 1 ? "is 1 entry" : "are " + std::to_string(arr->size()) + " entries") +
                                 " (index from 0)", case_code::bad_override));
        return;
      }
      at = arr->get(static_cast<std::size_t>(idx));
    } else if (auto tbl = at->as_table()) {
      auto next = tbl->get(p);
      if (!next) {
        next = &tbl->insert_or_assign(p, toml::table{}).first->second;
        mark_set(ctx, *next, here.file);
      }
      at = next;
    } else {
      ctx.sink.add(case_code::problem(here, "--set: '" + walked + "' is " + type_name(*at) + ", not a table", case_code::bad_override));
      return;
    }
  }
  auto tbl = at->as_table();
  if (!tbl) {
    // An array of tables needs an index: stimulus.0.amplitude.
    ctx.sink.add(case_code::problem(here, "--set: '" + walked + "' is " + type_name(*at) + "; give an index (e.g. " + walked + ".0." + parts.back() + ")", case_code::bad_override));
    return;
  }
  auto it = tbl->insert_or_assign(parts.back(), *parsed.get("v")).first;
  mark_set(ctx, it->second, here.file);
}

// 2D defaults for NaN z coordinates (a position given with two numbers).
void fill_z(std::array<double, 3>& p, const Grid& g) {
  if (std::isnan(p[2])) p[2] = 0.5 * g.n[2] * g.h[2];
}

}  // namespace

bool grid_from_file(const TissueCase& c) {
  return c.geometry.kind == GeometrySpec::Kind::mask_file ||
         c.geometry.kind == GeometrySpec::Kind::phase_field_file || c.geometry.kind == GeometrySpec::Kind::mesh;
}

void validate_regions(const TissueCase& c, const Grid& g) {
  DiagnosticSink sink;
  const std::array<double, 3> L{g.n[0] * g.h[0], g.n[1] * g.h[1], g.n[2] * g.h[2]};
  auto extent = [&]() {
    std::ostringstream s;
    s << "the domain is [0, " << L[0] << "] × [0, " << L[1] << "] × [0, " << L[2] << "] mm";
    return s.str();
  };
  auto inside = [&](const std::array<double, 3>& p, double tol) {
    for (int a = 0; a < 3; ++a)
      if (!(p[a] >= -tol * L[a] && p[a] <= L[a] * (1 + tol))) return false;
    return true;
  };
  auto check = [&](const Region& r, const std::string& what) {
    if (r.kind == Region::Kind::box) {
      std::array<double, 3> hi = r.hi;
      for (int a = 0; a < 3; ++a) hi[a] = std::min(hi[a], HUGE_VAL);
      bool ok = true;
      for (int a = 0; a < 3; ++a) {
        if (r.lo[a] < -1e-9 * L[a] || (std::isfinite(r.hi[a]) && r.hi[a] > L[a] * (1 + 1e-9))) ok = false;
      }
      if (!ok) {
        std::ostringstream s;
        s << what << ": the box [" << r.lo[0] << ", " << r.lo[1] << ", " << r.lo[2] << "] – ["
          << (std::isfinite(r.hi[0]) ? r.hi[0] : L[0]) << ", " << (std::isfinite(r.hi[1]) ? r.hi[1] : L[1])
          << ", " << (std::isfinite(r.hi[2]) ? r.hi[2] : L[2]) << "] mm reaches outside the domain; "
          << extent();
        sink.add(case_code::problem(r.loc, s.str(), case_code::outside));
        return;
      }
      // Must contain at least one cell centre on each axis.
      for (int a = 0; a < 3; ++a) {
        const double lo_c = std::ceil(r.lo[a] / g.h[a] - 0.5), hi_c = std::min<double>(g.n[a], r.hi[a] / g.h[a] - 0.5);
        if (lo_c > hi_c) {
          sink.add(case_code::problem(r.loc, what + ": the box contains no cell centre along " + std::string(1, "xyz"[a]) +
                                " (cells are " + std::to_string(g.h[a]) + " mm wide)", case_code::outside));
          return;
        }
      }
    } else if (r.kind == Region::Kind::sphere) {
      auto cen = r.centre;
      fill_z(cen, g);
      if (!inside(cen, 1e-9)) sink.add(case_code::problem(r.loc, what + ": the sphere's centre is outside the domain; " + extent(), case_code::outside));
    } else if (r.kind == Region::Kind::face) {
      const int a = r.face[0] - 'x';
      if (r.depth > L[a]) sink.add(case_code::problem(r.loc, what + ": face depth " + std::to_string(r.depth) + " mm is thicker than the domain", case_code::outside));
    }
  };
  for (std::size_t i = 0; i < c.models.size(); ++i) check(c.models[i].where, "model[" + std::to_string(i) + "].region");
  for (std::size_t i = 0; i < c.stimuli.size(); ++i) check(c.stimuli[i].where, "stimulus[" + std::to_string(i) + "].region");
  for (std::size_t i = 0; i < c.initial.size(); ++i) check(c.initial[i].where, "initial[" + std::to_string(i) + "].region");
  for (std::size_t i = 0; i < c.output.probes.size(); ++i) {
    auto p = c.output.probes[i].position;
    fill_z(p, g);
    if (!inside(p, 1e-9)) {
      std::ostringstream s;
      s << "output.probes[" << i << "] '" << c.output.probes[i].name << "' at (" << p[0] << ", " << p[1] << ", "
        << p[2] << ") mm is outside the domain; " << extent();
      sink.add(case_code::problem(c.output.loc, s.str(), case_code::outside));
    }
  }
  if (c.output.png_slice_position > L[c.output.png_slice_axis])
    sink.add(case_code::problem(c.output.loc, "output.png_slice_position is outside the domain; " + extent(), case_code::outside));
  for (const auto& gr : c.gradients)
    if (g.n[gr.axis] < 2 && gr.from != gr.to)
      sink.warning(gr.loc, "gradient along " + std::string(1, "xyz"[gr.axis]) + ", an axis with one cell: only 'from' applies",
                   "case.gradient-axis");
  sink.throw_if_errors();
}

TissueCase parse_case(std::string_view text, const std::string& filename,
                      const std::vector<std::string>& overrides) {
  Ctx ctx;
  ctx.file = filename;
  ctx.dir = fs::path(filename).parent_path();
  toml::table doc;
  try {
    doc = toml::parse(text, filename);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw InputError({case_code::problem(
        SourceLoc{filename, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
        "TOML syntax: " + std::string(e.description()), case_code::syntax)});
  }
  for (const auto& o : overrides) apply_override(ctx, doc, o);

  TissueCase c;
  c.source_file = filename;
  Section root(ctx, doc, "");
  if (auto n = root.string("name")) c.name = *n;
  if (c.name.empty()) c.name = fs::path(filename).stem().string();
  root.string("description");
  read_geometry(ctx, root, c);
  const bool from_file = grid_from_file(c);
  read_grid(ctx, root, c, from_file);
  read_fibres(ctx, root, c);
  read_conductivity(ctx, root, c);
  read_models(ctx, root, c);
  read_gradients(ctx, root, c);
  read_stimuli(ctx, root, c);
  read_initial(ctx, root, c);
  read_time(ctx, root, c);
  read_output(ctx, root, c);
  root.finish();
  ctx.sink.throw_if_errors();

  // Positions given with two numbers sit in the middle of the sheet.
  if (!from_file) {
    for (auto& p : c.output.probes) fill_z(p.position, c.grid);
    for (auto* list : {&c.models}) for (auto& m : *list) fill_z(m.where.centre, c.grid);
    for (auto& s : c.stimuli) fill_z(s.where.centre, c.grid);
    for (auto& i : c.initial) fill_z(i.where.centre, c.grid);
    validate_regions(c, c.grid);
    // Unbounded box axes (not given) become the domain's extent.
    const std::array<double, 3> L{c.grid.n[0] * c.grid.h[0], c.grid.n[1] * c.grid.h[1], c.grid.n[2] * c.grid.h[2]};
    auto clip = [&](Region& r) {
      for (int a = 0; a < 3; ++a) if (!std::isfinite(r.hi[a])) r.hi[a] = L[a];
    };
    for (auto& m : c.models) clip(m.where);
    for (auto& s : c.stimuli) clip(s.where);
    for (auto& i : c.initial) clip(i.where);
  }
  for (auto& e : c.output.electrodes)
    if (std::isnan(e.position[2])) e.position[2] = 0.5 * c.grid.n[2] * c.grid.h[2];
  return c;
}

TissueCase read_case_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError({case_code::problem(SourceLoc{path, 0, 0}, "is a directory, not a case file", case_code::no_file)});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({case_code::problem(SourceLoc{path, 0, 0}, "cannot open the case file (no such file or not readable)", case_code::no_file)});
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_case(ss.str(), path, overrides);
}

std::string describe_case(const TissueCase& c) {
  std::ostringstream s;
  s << "case " << c.name << " (" << c.source_file << ")\n";
  if (grid_from_file(c)) {
    s << "  grid      from " << c.geometry.path;
    if (c.geometry.spacing[0] > 0)
      s << (c.geometry.kind == GeometrySpec::Kind::mesh ? ", voxelised at " : ", resampled to ") << c.geometry.spacing[0]
        << " x " << c.geometry.spacing[1] << " x " << c.geometry.spacing[2] << " mm";
    s << "\n";
  }
  else s << "  grid      " << c.grid.str() << "\n";
  s << "  models    ";
  for (std::size_t i = 0; i < c.models.size(); ++i)
    s << (i ? ", " : "") << fs::path(c.models[i].model).filename().string();
  s << "\n  time      dt " << c.time.dt << " ms to " << c.time.t_end << " ms, " << c.time.integrator
    << (c.time.ode_substeps > 1 ? " ×" + std::to_string(c.time.ode_substeps) : std::string())
    << ", diffusion "
    << (c.time.diffusion == DiffusionScheme::forward_euler    ? "explicit"
        : c.time.diffusion == DiffusionScheme::backward_euler ? "backward-euler"
                                                              : "crank-nicolson")
    << ", " << (c.time.precision == Precision::f32 ? "float" : "double") << "\n";
  s << "  tissue    σl " << c.conductivity.sigma_l << " σt " << c.conductivity.sigma_t << " S/m, χ "
    << c.conductivity.chi << " /mm, Cm " << c.conductivity.cm << " µF/mm²\n";
  s << "  stimuli   " << c.stimuli.size() << ", initial conditions " << c.initial.size() << "\n";
  s << "  output    " << c.output.directory << "/";
  if (c.output.field_interval > 0) s << " fields every " << c.output.field_interval << " ms";
  if (c.output.png_interval > 0) s << " png every " << c.output.png_interval << " ms";
  if (!c.output.probes.empty()) s << " " << c.output.probes.size() << " probes";
  if (c.output.activation_map) s << " activation map";
  s << "\n";
  return s.str();
}

}  // namespace hw::io
