// write temp → fsync → rename → fsync(dir): see atomic_file.hpp for why.
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::io {
namespace {

std::string sys_reason() { return std::strerror(errno); }

// Writes all of [p, p+n) to fd, retrying short writes and EINTR.
bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes, bool durable) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Same folder as the target so rename() never crosses a file system.
  std::string leaf = ".";
  leaf += target.filename().string();
  leaf += ".tmpXXXXXX";
  std::string tmpl = (dir / leaf).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw Error(fmt::format("cannot create a temporary file beside {}: {}", path, sys_reason()));
  auto fail = [&](const char* what) {
    std::string why = sys_reason();
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("cannot write {} ({}): {}", path, what, why));
  };
  if (!write_all(fd, bytes.data(), bytes.size())) fail("write");
  if (durable && ::fsync(fd) != 0) fail("fsync");
  // mkstemp makes the file 0600; outputs should read like any other file the user writes.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    std::string why = sys_reason();
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("cannot write {} (close): {}", path, why));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    std::string why = sys_reason();
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("cannot rename {} to {}: {}", tmpl, path, why));
  }
  if (durable) {
    // The rename itself lives in the folder; without this a crash may forget it.
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
}

std::vector<unsigned char> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {}: {}", path, sys_reason()));
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw Error(fmt::format("cannot read {}", path));
  in.seekg(0, std::ios::beg);
  std::vector<unsigned char> out(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(out.data()), size))
    throw Error(fmt::format("cannot read {}", path));
  return out;
}

void ensure_directory(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot create folder {}: {}", dir, ec.message()));
}

}  // namespace hw::io
