// See xml_text.hpp.
#include "model/emit/xml_text.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace hw::model::xml_text {

std::string number(double v) {
  char buf[64];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even as references.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out += c;
    }
  }
  return out;
}

std::string identifier(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out += c;
    else if (c == '/') out += "_per_";
    else if (c == '^' || c == '+') continue;
    else if (c == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) out += "minus";
    else out += '_';
  }
  if (out.empty()) return "unnamed";
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

}  // namespace hw::model::xml_text
