// See cli_restart.hpp.
#include "cli_restart.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "outputs/checkpoint.hpp"
#include "run/restart_overrides.hpp"

namespace hw::cli {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string resolve_restart(const std::string& ckpt, std::string& file, std::vector<std::string>& sets,
                            const std::string& builtin_text, bool quiet) {
  const io::Checkpoint ck = io::read_checkpoint_origin(ckpt);
  const io::CheckpointOrigin& o = ck.origin;
  if (!o.known()) return "";
  const SourceLoc at{ckpt, 0, 0};
  const std::string its_case = o.case_path.empty() ? "the built-in case" : o.case_path;
  if (file.empty() && !o.case_path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(o.case_path, ec))
      throw InputError(at, fmt::format("checkpoint: its run's case file {} is gone; give the case file: "
                                       "heartwave run CASE --restart {}",
                                       o.case_path, ckpt));
    file = o.case_path;
  }
  const std::string text = file.empty() ? builtin_text : read_text(file);
  if (o.case_text_hash != 0 && io::fnv1a64(text) != o.case_text_hash)
    throw InputError(at, fmt::format("checkpoint: written by a run of {}, and {} is not that case's text as it "
                                     "was then{}; a restart continues the same case: restore it, or start a new run "
                                     "without --restart",
                                     its_case, file.empty() ? "the built-in case" : file,
                                     !file.empty() && fs::path(file) == fs::path(o.case_path) ? " (the file changed)"
                                                                                               : ""));
  sets = run::merge_restart_overrides(o.overrides, sets, ckpt);
  if (!quiet) {
    std::string s;
    for (const auto& x : o.overrides) s += " --set " + shell_quote(x);
    std::cout << fmt::format("restart: continuing run {} of {}{}\n", o.run_id, its_case,
                             s.empty() ? "" : " with" + s);
  }
  return o.run_id;
}

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789_./:=@%+-,") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string continue_command(const std::string& file, const std::string& ckpt, const std::string& backend,
                             int threads, int device) {
  std::string cmd = "heartwave run ";
  if (!file.empty()) cmd += shell_quote(file) + " ";
  cmd += "--restart " + shell_quote(ckpt);
  if (backend != "auto") cmd += " --backend " + backend;
  if (threads > 0) cmd += fmt::format(" --threads {}", threads);
  if (device > 0) cmd += fmt::format(" --device {}", device);
  return cmd;
}

}  // namespace hw::cli
