// The live view's page (src/live/page/), embedded in the binary at build time
// (cmake/embed_assets.cmake): the server reads no file at run time, and the page downloads
// nothing from elsewhere.
#pragma once

#include <string>
#include <vector>

namespace hw::live {

struct Asset {
  std::string name;   // "index.html", "app.js", ...
  std::string bytes;
};

const std::vector<Asset>& page_assets();

// The MIME type the server sends for a file name.
inline const char* mime_type(const std::string& name) {
  auto ends = [&](const char* e) {
    const std::string s(e);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".png")) return "image/png";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace hw::live
