#include "live/controls.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "live/flat_json.hpp"

namespace hw::live {

namespace {

constexpr std::array<const char*, 10> kOps = {"stimulate", "pause", "resume", "step", "speed",
                                              "set", "view", "save", "restore", "probe"};

// The keys each op accepts (besides "op" and "id").
std::vector<std::string_view> keys_of(Control::Op op) {
  switch (op) {
    case Control::Op::stimulate: return {"x", "y", "z", "amplitude", "radius", "duration"};
    case Control::Op::step: return {"count"};
    case Control::Op::probe: return {"x", "y", "z"};
    case Control::Op::speed: return {"value"};
    case Control::Op::set: return {"name", "value"};
    case Control::Op::view: return {"name", "axis", "position"};
    case Control::Op::save:
    case Control::Op::restore: return {"name"};
    default: return {};
  }
}

class Checker {
 public:
  Checker(const FlatObject& o, std::string* refusal) : o_(o), refusal_(refusal) {}

  bool refuse(const std::string& why) {
    if (refusal_) *refusal_ = why;
    return false;
  }
  const FlatValue* get(const char* key) const {
    const auto it = o_.find(key);
    return it == o_.end() ? nullptr : &it->second;
  }
  // A finite number in [lo, hi] under `key`; `fallback` when absent (nullopt: required).
  bool number(const char* key, double lo, double hi, std::optional<double> fallback, double& out, const char* unit) {
    const FlatValue* v = get(key);
    if (!v) {
      if (!fallback) return refuse(fmt::format("'{}' is missing", key));
      out = *fallback;
      return true;
    }
    if (v->kind != FlatValue::Kind::number) return refuse(fmt::format("'{}' must be a number", key));
    if (!std::isfinite(v->number)) return refuse(fmt::format("'{}' must be a finite number", key));
    if (v->number < lo || v->number > hi)
      return refuse(fmt::format("'{}' = {:g} is out of range: accepted {:g} to {:g}{}{}", key, v->number, lo, hi,
                                *unit ? " " : "", unit));
    out = v->number;
    return true;
  }
  bool text(const char* key, std::string& out) {
    const FlatValue* v = get(key);
    if (!v) return refuse(fmt::format("'{}' is missing", key));
    if (v->kind != FlatValue::Kind::string) return refuse(fmt::format("'{}' must be a string", key));
    out = v->text;
    return true;
  }

 private:
  const FlatObject& o_;
  std::string* refusal_;
};

bool plain_name(const std::string& s) {
  return !s.empty() && s.size() <= 32 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

}  // namespace

const char* op_name(Control::Op op) { return kOps[std::size_t(op)]; }

std::optional<Control> parse_control(std::string_view text, const ControlSpace& space, std::string* refusal) {
  std::string error;
  const std::optional<FlatObject> o = parse_flat_json(text, &error);
  if (!o) {
    if (refusal) *refusal = error;
    return std::nullopt;
  }
  Checker ck(*o, refusal);
  Control c;
  if (const FlatValue* id = ck.get("id")) {
    if (id->kind == FlatValue::Kind::number && std::isfinite(id->number) && std::fabs(id->number) < 1e15)
      c.id = fmt::format("{}", static_cast<long long>(id->number));
    else if (id->kind == FlatValue::Kind::string && plain_name(id->text))
      c.id = id->text;
    else
      return ck.refuse("'id' must be a whole number or a short name"), std::nullopt;
  }
  std::string op;
  if (!ck.text("op", op)) return std::nullopt;
  const auto it = std::find(kOps.begin(), kOps.end(), op);
  if (it == kOps.end())
    return ck.refuse(fmt::format("unknown op '{}': accepted stimulate, pause, resume, step, speed, set, view, save, restore, probe",
                                 op.substr(0, 40))),
           std::nullopt;
  c.op = Control::Op(it - kOps.begin());
  const std::vector<std::string_view> keys = keys_of(c.op);
  for (const auto& [k, v] : *o)
    if (k != "op" && k != "id" && std::find(keys.begin(), keys.end(), k) == keys.end())
      return ck.refuse(fmt::format("'{}' takes no key '{}'", op, k.substr(0, 40))), std::nullopt;

  switch (c.op) {
    case Control::Op::stimulate: {
      const char* axes[3] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d) {
        // A sheet's z (or a line's y and z) is its one layer: the middle unless given.
        const double mid = space.extent[std::size_t(d)] / 2;
        if (!ck.number(axes[d], 0, space.extent[std::size_t(d)], d == 0 ? std::nullopt : std::optional<double>(mid),
                       c.at[std::size_t(d)], "mm"))
          return std::nullopt;
      }
      if (!ck.number("amplitude", -space.amplitude_max, space.amplitude_max, space.amplitude, c.amplitude, "µA/mm³") ||
          !ck.number("radius", space.cell / 2, space.radius_max, space.radius, c.radius, "mm") ||
          !ck.number("duration", 0.001, space.duration_max, space.duration, c.duration, "ms"))
        return std::nullopt;
      if (c.amplitude == 0) return ck.refuse("'amplitude' = 0 stimulates nothing"), std::nullopt;
      return c;
    }
    case Control::Op::probe: {
      const char* axes[3] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d)
        if (!ck.number(axes[d], 0, space.extent[std::size_t(d)], d == 0 ? std::nullopt : std::optional<double>(space.extent[std::size_t(d)] / 2),
                       c.at[std::size_t(d)], "mm"))
          return std::nullopt;
      return c;
    }
    case Control::Op::step: {
      double n = 1;
      if (!ck.number("count", 1, double(space.step_max), 1.0, n, "steps")) return std::nullopt;
      if (n != std::floor(n)) return ck.refuse("'count' must be a whole number of steps"), std::nullopt;
      c.count = long(n);
      return c;
    }
    case Control::Op::speed:
      if (!ck.number("value", 0, space.speed_max, std::nullopt, c.value, "simulated ms per second (0: as fast as it goes)"))
        return std::nullopt;
      return c;
    case Control::Op::set: {
      if (!ck.text("name", c.name)) return std::nullopt;
      const auto p = std::find_if(space.parameters.begin(), space.parameters.end(),
                                  [&](const Parameter& q) { return q.name == c.name; });
      if (p == space.parameters.end())
        return ck.refuse(fmt::format("no parameter '{}' in this run's controls", c.name.substr(0, 60))), std::nullopt;
      if (!ck.number("value", p->min, p->max, std::nullopt, c.value, p->unit.c_str())) return std::nullopt;
      return c;
    }
    case Control::Op::view: {
      if (!ck.text("name", c.name)) return std::nullopt;
      if (std::find(space.variables.begin(), space.variables.end(), c.name) == space.variables.end())
        return ck.refuse(fmt::format("no field '{}' in this run's models", c.name.substr(0, 60))), std::nullopt;
      double axis = 2;
      if (!ck.number("axis", 0, 2, 2.0, axis, "")) return std::nullopt;
      if (axis != std::floor(axis)) return ck.refuse("'axis' must be 0, 1 or 2"), std::nullopt;
      c.axis = int(axis);
      if (!ck.number("position", -1, space.extent[std::size_t(c.axis)], -1.0, c.position, "mm")) return std::nullopt;
      return c;
    }
    case Control::Op::save:
    case Control::Op::restore:
      if (!ck.text("name", c.name)) return std::nullopt;
      if (!plain_name(c.name))
        return ck.refuse("a checkpoint's name is 1 to 32 letters, digits, '_' or '-'"), std::nullopt;
      return c;
    default: return c;
  }
}

std::string control_json(const Control& c) {
  std::string s = fmt::format("\"op\":\"{}\"", op_name(c.op));
  switch (c.op) {
    case Control::Op::stimulate:
      s += fmt::format(",\"x\":{},\"y\":{},\"z\":{},\"amplitude\":{},\"radius\":{},\"duration\":{}", c.at[0], c.at[1],
                       c.at[2], c.amplitude, c.radius, c.duration);
      break;
    case Control::Op::step: s += fmt::format(",\"count\":{}", c.count); break;
    case Control::Op::probe: s += fmt::format(",\"x\":{},\"y\":{},\"z\":{}", c.at[0], c.at[1], c.at[2]); break;
    case Control::Op::speed: s += fmt::format(",\"value\":{}", c.value); break;
    case Control::Op::set: s += fmt::format(",\"name\":{},\"value\":{}", json_quote(c.name), c.value); break;
    case Control::Op::view:
      s += fmt::format(",\"name\":{},\"axis\":{},\"position\":{}", json_quote(c.name), c.axis, c.position);
      break;
    case Control::Op::save:
    case Control::Op::restore: s += fmt::format(",\"name\":{}", json_quote(c.name)); break;
    default: break;
  }
  return "{" + s + "}";
}

}  // namespace hw::live
