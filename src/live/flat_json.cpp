#include "live/flat_json.hpp"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

namespace hw::live {

namespace {

class Reader {
 public:
  Reader(std::string_view t, std::string* error) : t_(t), error_(error) {}

  std::optional<FlatObject> object() {
    skip_space();
    if (!eat('{')) return fail("a control message is a JSON object: '{' expected");
    FlatObject out;
    skip_space();
    if (eat('}')) return end(std::move(out));
    for (;;) {
      skip_space();
      std::string key;
      if (!string(key)) return std::nullopt;
      skip_space();
      if (!eat(':')) return fail("':' expected after a key");
      skip_space();
      FlatValue v;
      if (!value(v)) return std::nullopt;
      if (out.count(key)) return fail(fmt::format("the key '{}' is given twice", key));
      if (out.size() >= kMaxKeys) return fail(fmt::format("more than {} keys", kMaxKeys));
      out.emplace(std::move(key), std::move(v));
      skip_space();
      if (eat('}')) return end(std::move(out));
      if (!eat(',')) return fail("',' or '}' expected");
    }
  }

 private:
  std::optional<FlatObject> end(FlatObject o) {
    skip_space();
    if (i_ != t_.size()) return fail("text after the object");
    return o;
  }
  std::nullopt_t fail(const std::string& what) {
    if (error_) *error_ = fmt::format("bad control message at byte {}: {}", i_, what);
    return std::nullopt;
  }
  bool fail_b(const std::string& what) {
    fail(what);
    return false;
  }
  void skip_space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool value(FlatValue& v) {
    if (i_ >= t_.size()) return fail_b("a value expected");
    const char c = t_[i_];
    if (c == '"') {
      v.kind = FlatValue::Kind::string;
      return string(v.text);
    }
    if (c == '{' || c == '[') return fail_b("nested objects and arrays are not control values");
    if (literal("true")) {
      v.kind = FlatValue::Kind::boolean;
      v.boolean = true;
      return true;
    }
    if (literal("false")) {
      v.kind = FlatValue::Kind::boolean;
      return true;
    }
    if (literal("null")) {
      v.kind = FlatValue::Kind::null;
      return true;
    }
    return number(v);
  }
  // JSON's number grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
  bool number(FlatValue& v) {
    const std::size_t start = i_;
    eat('-');
    if (i_ < t_.size() && t_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return fail_b("a number, string, true, false or null expected");
    }
    if (eat('.') && !digits()) return fail_b("digits expected after '.'");
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (!eat('+')) eat('-');
      if (!digits()) return fail_b("digits expected in the exponent");
    }
    if (i_ - start > 64) return fail_b("a number of more than 64 characters");
    const std::string s(t_.substr(start, i_ - start));
    v.kind = FlatValue::Kind::number;
    v.number = std::strtod(s.c_str(), nullptr);
    return true;
  }
  bool digits() {
    const std::size_t s = i_;
    while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
    return i_ > s;
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // A string; \u escapes are kept only for ASCII (control names and labels are ASCII).
  bool string(std::string& out) {
    if (!eat('"')) return fail_b("a string in double quotes expected");
    while (i_ < t_.size()) {
      const char c = t_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail_b("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      const char e = t_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > t_.size()) return fail_b("a \\u escape cut short");
          int code = 0;
          for (int k = 0; k < 4; ++k) {
            const int h = hex(t_[i_++]);
            if (h < 0) return fail_b("a bad \\u escape");
            code = code * 16 + h;
          }
          if (code == 0 || code > 0x7f) return fail_b("only ASCII \\u escapes (and not \\u0000) are accepted");
          out += char(code);
          break;
        }
        default: return fail_b("an unknown escape in a string");
      }
    }
    return fail_b("a string without its closing quote");
  }

  std::string_view t_;
  std::string* error_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<FlatObject> parse_flat_json(std::string_view text, std::string* error) {
  if (text.size() > kMaxMessageBytes) {
    if (error) *error = fmt::format("a control message of {} bytes (at most {})", text.size(), kMaxMessageBytes);
    return std::nullopt;
  }
  return Reader(text, error).object();
}

std::string flat_json_text(const FlatObject& o) {
  std::string s = "{";
  for (const auto& [k, v] : o) {
    if (s.size() > 1) s += ',';
    s += json_quote(k) + ':';
    switch (v.kind) {
      case FlatValue::Kind::string: s += json_quote(v.text); break;
      case FlatValue::Kind::number: s += fmt::format("{}", v.number); break;
      case FlatValue::Kind::boolean: s += v.boolean ? "true" : "false"; break;
      case FlatValue::Kind::null: s += "null"; break;
    }
  }
  return s + "}";
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", int(static_cast<unsigned char>(c)));
        else
          out += c;
    }
  }
  return out + "\"";
}

}  // namespace hw::live
