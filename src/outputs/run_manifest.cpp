// run.json: writing, reading and the names of a run's outputs; see run_manifest.hpp.
#include "outputs/run_manifest.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "cell/json_writer.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

#ifndef HEARTWAVE_VERSION
#define HEARTWAVE_VERSION "unknown"
#endif

namespace hw::io {
namespace {

namespace fs = std::filesystem;

// The little JSON that run.json needs: objects, arrays, strings, numbers, true/false/null.
struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  // An object's members as two lists: std::vector may hold the incomplete Json, but
  // std::pair<std::string, Json> may not (clang rejects it).
  std::vector<std::string> keys;
  std::vector<Json> values;
  const Json* find(const std::string& k) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return &values[i];
    return nullptr;
  }
};

class JsonReader {
 public:
  JsonReader(const std::string& s, const std::string& path) : s_(s), path_(path) {}
  Json document() {
    Json v = value();
    space();
    if (at_ != s_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw InputError(SourceLoc{path_, 0, 0},
                     fmt::format("not a heartwave run manifest ({} at byte {}); remove it or use --overwrite", why, at_));
  }
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool eat(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < s_.size() && s_[at_] != '"') {
      char c = s_[at_++];
      if (c == '\\') {
        if (at_ >= s_.size()) break;
        const char e = s_[at_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'u': {
            if (at_ + 4 > s_.size()) fail("short \\u escape");
            const unsigned cp = std::stoul(s_.substr(at_, 4), nullptr, 16);
            at_ += 4;
            if (cp < 0x80) out += char(cp);
            else if (cp < 0x800) out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
            else out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
            continue;
          }
          default: c = e;  // \" \\ \/
        }
      }
      out += c;
    }
    if (at_ >= s_.size()) fail("unterminated string");
    ++at_;
    return out;
  }
  Json value() {
    space();
    Json v;
    if (at_ >= s_.size()) fail("unexpected end");
    const char c = s_[at_];
    if (c == '{') {
      ++at_;
      v.kind = Json::Kind::object;
      if (eat('}')) return v;
      do {
        std::string k = string();
        expect(':');
        Json member = value();
        v.keys.push_back(std::move(k));
        v.values.push_back(std::move(member));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++at_;
      v.kind = Json::Kind::array;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::Kind::string;
      v.text = string();
    } else if (s_.compare(at_, 4, "true") == 0 || s_.compare(at_, 5, "false") == 0) {
      v.kind = Json::Kind::boolean;
      v.number = s_[at_] == 't';
      at_ += s_[at_] == 't' ? 4 : 5;
    } else if (s_.compare(at_, 4, "null") == 0) {
      at_ += 4;
    } else {
      std::size_t used = 0;
      try {
        v.number = std::stod(s_.substr(at_, 40), &used);
      } catch (const std::exception&) {
        fail("expected a value");
      }
      v.kind = Json::Kind::number;
      at_ += used;
    }
    return v;
  }
  const std::string& s_;
  std::string path_;
  std::size_t at_ = 0;
};

}  // namespace

std::string to_json(const RunManifest& m) {
  cell::JsonWriter j;
  j.begin_object();
  j.key("format").value("heartwave-run-1");
  j.key("run_id").value(m.run_id);
  j.key("case").value(m.case_path);
  j.key("case_hash").value(fmt::format("{:016x}", m.case_hash));
  j.key("overrides").begin_array();
  for (const auto& s : m.overrides) j.value(s);
  j.end_array();
  j.key("heartwave_version").value(m.version);
  j.key("started").value(m.started);
  j.key("state").value(m.state);
  j.key("t_ms").value(m.t_ms);
  j.key("files").begin_array();
  for (const auto& f : m.files) j.value(f);
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

RunManifest parse_manifest(const std::string& text, const std::string& path) {
  const Json doc = JsonReader(text, path).document();
  const auto bad = [&](const std::string& why) -> RunManifest {
    throw InputError(SourceLoc{path, 0, 0},
                     "not a heartwave run manifest (" + why + "); remove it or use --overwrite");
  };
  const Json* format = doc.find("format");
  if (doc.kind != Json::Kind::object || !format || format->text != "heartwave-run-1")
    return bad("no \"format\": \"heartwave-run-1\"");
  RunManifest m;
  const auto str = [&](const char* k) {
    const Json* v = doc.find(k);
    return v && v->kind == Json::Kind::string ? v->text : std::string();
  };
  const auto list = [&](const char* k) {
    std::vector<std::string> out;
    if (const Json* v = doc.find(k))
      for (const auto& i : v->items)
        if (i.kind == Json::Kind::string) out.push_back(i.text);
    return out;
  };
  m.run_id = str("run_id");
  m.case_path = str("case");
  m.case_hash = std::strtoull(str("case_hash").c_str(), nullptr, 16);
  m.overrides = list("overrides");
  m.version = str("heartwave_version");
  m.started = str("started");
  m.state = str("state");
  if (const Json* t = doc.find("t_ms")) m.t_ms = t->number;
  m.files = list("files");
  return m;
}

std::optional<RunManifest> read_manifest(const std::string& dir) {
  const fs::path p = fs::path(dir) / manifest_name;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_manifest(s.str(), p.string());
}

void write_manifest(const std::string& dir, const RunManifest& m) {
  write_file_atomic((fs::path(dir) / manifest_name).string(), to_json(m), /*durable=*/false);
}

bool is_heartwave_output(const std::string& leaf) {
  static const std::regex names(
      R"((run\.json|checkpoint\.hwck|fields\.pvd|fields_\d+\.vti|fields(_from_\d+)?\.(h5|xdmf))"
      R"(|(probes|ecg)(_from_\d+)?\.csv|maps\.vti|maps_summary\.csv|activation\.png|last_good\.vti)"
      R"(|[A-Za-z_][A-Za-z0-9_]*_\d{5}\.png)"
      // what an atomic write leaves when killed between its temp file and the rename
      R"(|(run\.json|checkpoint\.hwck|fields\.pvd|fields\.xdmf)\.tmp\w{6}))");
  return std::regex_match(leaf, names);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string new_run_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  return fmt::format("{}-{}-{:06x}", buf, static_cast<long>(::getpid()), rd() & 0xFFFFFFu);
}

std::string heartwave_version() { return HEARTWAVE_VERSION; }

}  // namespace hw::io
