#include "model/emit/identifiers.hpp"

#include <cstdio>

namespace hw::model {

static bool is_alnum(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

std::string sanitise_identifier(std::string_view name, std::size_t max_len) {
  std::string out;
  for (unsigned char ch : name) {
    if (out.size() >= max_len) break;
    if (is_alnum(ch)) {
      out.push_back(static_cast<char>(ch));
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');  // every other byte (and runs of them) becomes one '_'
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty()) return "x";
  if (out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), 'n');
  if (out.size() > max_len) out.resize(max_len);
  while (out.size() > 1 && out.back() == '_') out.pop_back();
  return out;
}

std::string sanitise_comment(std::string_view text, std::size_t max_len) {
  static constexpr std::string_view kSafe = " _-+.,:;()[]{}=<>'!#%&|^~@$";
  std::string out;
  for (unsigned char ch : text) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    if (is_alnum(ch) || kSafe.find(static_cast<char>(ch)) != std::string_view::npos)
      out.push_back(static_cast<char>(ch));
    else if (ch == '\n' || ch == '\t' || ch == '\r')
      out.push_back(' ');
    else
      out.push_back('_');
  }
  return out;
}

std::string c_string_literal(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char ch : bytes) {
    if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\' && ch != '?') {
      out.push_back(static_cast<char>(ch));
    } else {
      // Three-digit octal escapes end by themselves: no following character can extend them.
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(ch));
      out += buf;
      // Long texts stay readable: each source line becomes its own adjacent literal.
      if (ch == '\n') out += "\"\n    \"";
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace hw::model
