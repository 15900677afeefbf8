// The manifest of a tissue run's output folder: run.json, saying which run wrote the
// folder's files and which files those are.
//
// Why: a second run into a folder that holds a first run's outputs used to overwrite some
// of its files and leave others (frames past the new run's end, a checkpoint of the old
// run), one folder with two runs mixed. With the manifest a run can refuse a folder that
// another run owns and say which run that is (case, overrides, when, how far it got), and
// --overwrite can remove exactly the files a heartwave run wrote — never a user's own
// files that happen to lie in the folder.
//
// run.json (docs/outputs.md) is rewritten atomically when the run starts, at every
// checkpoint and when it ends. "files" lists the folder's files the run wrote, found by
// listing the folder (files that were there before the run began are not the run's), so
// outputs added later to the output manager are listed without a list to keep up to date.
// Files of the names heartwave writes (is_heartwave_output) count as a run's outputs too:
// a run killed between two manifest updates leaves no file unaccounted for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hw::io {

inline constexpr const char* manifest_name = "run.json";

struct RunManifest {
  std::string run_id;                  // unique per run; kept by --restart (the same run)
  std::string case_path;               // absolute path of the case, or "<built-in ...>"
  std::uint64_t case_hash = 0;         // the case identity a checkpoint must match
  std::vector<std::string> overrides;  // every --set KEY=VALUE
  std::string version;                 // heartwave's version
  std::string started;                 // UTC, ISO 8601, when the run (first) started
  std::string state = "running";       // running, stopped, failed, finished
  double t_ms = 0;                     // simulated time reached at the last update
  std::vector<std::string> files;      // names (in the folder) of the files the run wrote
};

std::string to_json(const RunManifest& m);
// InputError located at `path` when the text is not a manifest.
RunManifest parse_manifest(const std::string& text, const std::string& path);
// <dir>/run.json, or nothing when the folder has none. InputError when it is damaged.
std::optional<RunManifest> read_manifest(const std::string& dir);
// Writes <dir>/run.json atomically.
void write_manifest(const std::string& dir, const RunManifest& m);

// True for the names heartwave's tissue runs write: run.json, checkpoint.hwck, fields*,
// probes*.csv, ecg*.csv, maps*, activation.png, last_good.vti, <var>_NNNNN.png.
bool is_heartwave_output(const std::string& leaf);
// The regular files directly in `dir` (names only, sorted); empty when dir does not exist.
std::vector<std::string> files_in(const std::string& dir);

// A new run id: UTC time, process id and random bits ("20261126T214301Z-1234-9f3a2c").
std::string new_run_id();
// The current UTC time as ISO 8601 ("2026-11-26T21:43:01Z").
std::string utc_now();
// heartwave's version (the project's version in CMakeLists.txt).
std::string heartwave_version();

}  // namespace hw::io
