#include "device/embedded.hpp"

#include <sstream>

namespace hw::gpu {

std::string inline_embedded_includes(const std::string& source) {
  std::istringstream in(source);
  std::string out, line;
  while (std::getline(in, line)) {
    const auto open = line.find("#include \"");
    const auto close = open == std::string::npos ? open : line.find('"', open + 10);
    const std::string name = close == std::string::npos ? "" : line.substr(open + 10, close - open - 10);
    const std::string* text = nullptr;
    for (const auto& [file, body] : embedded_sources())
      if (file == name) text = &body;
    if (open == 0 && text) {
      // Without its `#pragma once`, which in a main file only draws a warning.
      std::string body = *text;
      if (const auto at = body.find("#pragma once\n"); at != std::string::npos) body.erase(at, 13);
      out += "// ---- " + name + " (heartwave's source, inlined) ----\n" + body;
      if (!body.empty() && body.back() != '\n') out += '\n';
      out += "// ---- end of " + name + " ----\n";
    } else {
      out += line + '\n';
    }
  }
  return out;
}

}  // namespace hw::gpu
