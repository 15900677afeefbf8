// See output_folder.hpp.
#include "run/output_folder.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "outputs/run_manifest.hpp"

namespace hw::run {

namespace fs = std::filesystem;

namespace {

std::string shown(const std::string& dir) { return dir.empty() ? "." : dir; }

// The earlier run's files in the folder: its manifest's list and every heartwave name.
std::vector<std::string> previous_outputs(const std::string& dir, const std::optional<io::RunManifest>& owner) {
  std::set<std::string> out;
  const std::vector<std::string> present = io::files_in(dir);
  if (owner)
    for (const auto& f : owner->files)
      if (std::binary_search(present.begin(), present.end(), f)) out.insert(f);
  for (const auto& f : present)
    if (io::is_heartwave_output(f)) out.insert(f);
  return {out.begin(), out.end()};
}

std::string describe_owner(const io::RunManifest& m) {
  std::string sets;
  for (const auto& s : m.overrides) sets += " --set " + s;
  return fmt::format("run {} of {}{} (heartwave {}, started {}, {} at t = {} ms)", m.run_id, m.case_path, sets,
                     m.version, m.started, m.state, m.t_ms);
}

// The folder's manifest; a damaged one counts as none when `tolerant` (--overwrite removes
// it with the other outputs), else its InputError says to remove it or use --overwrite.
std::optional<io::RunManifest> read_owner(const std::string& dir, bool tolerant) {
  try {
    return io::read_manifest(dir);
  } catch (const InputError&) {
    if (!tolerant) throw;
    return std::nullopt;
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

void check_output_folder(const std::string& dir_in, const SourceLoc& at, const FolderIntent& intent) {
  const std::string dir = shown(dir_in);
  std::error_code ec;
  const auto err = [&](const std::string& what) { throw InputError(at, "output.directory: " + what); };
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    err(fmt::format("{} is a file, not a folder; give a folder (--set output.directory=NAME) or move the file", dir));
  if (!fs::exists(dir, ec)) {
    // It will be created: its nearest existing ancestor must be a folder we may write in.
    fs::path p = fs::absolute(dir, ec).parent_path();
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    if (!fs::is_directory(p, ec))
      err(fmt::format("{} cannot be created: {} is a file, not a folder", dir, p.string()));
    if (::access(p.c_str(), W_OK | X_OK) != 0)
      err(fmt::format("{} cannot be created: the folder {} cannot be written (permissions)", dir, p.string()));
    return;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    err(fmt::format("the folder {} cannot be written (permissions); choose another output.directory", dir));

  const std::optional<io::RunManifest> owner = read_owner(dir, intent.overwrite);
  const std::vector<std::string> previous = previous_outputs(dir, owner);
  for (const auto& f : previous)
    if (::access((fs::path(dir) / f).c_str(), W_OK) != 0)
      err(fmt::format("{}/{} (an output of an earlier run) cannot be rewritten (permissions)", dir, f));
  if (previous.empty() || intent.overwrite) return;

  if (!intent.restart_path.empty()) {
    // Continuing: the folder must be this run's (its manifest's id), or, with no manifest
    // (written before manifests), the folder the checkpoint was taken from.
    if (owner && !intent.resume_run_id.empty() && owner->run_id == intent.resume_run_id) return;
    if (!owner && same_file(fs::path(intent.restart_path).parent_path().empty()
                                ? "." : fs::path(intent.restart_path).parent_path().string(), dir))
      return;
  }
  const bool finished = owner && owner->state == "finished";
  const std::string what_to_do =
      intent.caller == FolderIntent::Caller::python
          ? fmt::format("pass overwrite=True to clear that run's outputs (files of other names stay), {} it with "
                        "heartwave.Run(case, restart=\"{}/checkpoint.hwck\"){}, or give another folder: "
                        "overrides={{\"output.directory\": NAME}} in Case.from_file",
                        finished ? "extend" : "continue", dir,
                        finished ? " and a case whose time.t_end is later" : "")
          : fmt::format("use --overwrite to clear that run's outputs (files of other names stay), {} it with "
                        "--restart {}/checkpoint.hwck{}, or give another folder: --set output.directory=NAME",
                        finished ? "extend" : "continue", dir, finished ? " --set time.t_end=LATER" : "");
  if (owner)
    err(fmt::format("the folder {} holds the outputs of another {}{}; {}", dir, describe_owner(*owner),
                    intent.restart_path.empty() ? "" : ", not of the run the checkpoint continues", what_to_do));
  std::string some;
  for (std::size_t i = 0; i < previous.size() && i < 4; ++i) some += (i ? ", " : "") + previous[i];
  err(fmt::format("the folder {} holds outputs of an earlier heartwave run ({}{}; {} files) but no {}; {}", dir, some,
                  previous.size() > 4 ? ", ..." : "", previous.size(), io::manifest_name, what_to_do));
}

std::vector<std::string> clear_previous_outputs(const std::string& dir_in, const std::string& keep) {
  const std::string dir = shown(dir_in);
  std::vector<std::string> removed;
  for (const auto& f : previous_outputs(dir, read_owner(dir, true))) {
    const fs::path p = fs::path(dir) / f;
    if (!keep.empty() && same_file(p.string(), keep)) continue;
    std::error_code ec;
    if (fs::remove(p, ec)) removed.push_back(f);
    else if (ec)
      throw InputError(SourceLoc{p.string(), 0, 0}, "--overwrite: cannot remove this output of the earlier run: " +
                                                         ec.message());
  }
  return removed;
}

}  // namespace hw::run
