// Whose is an output folder, and may this run write into it.
//
// Why before any work: a run of hours that fails at its first output because the folder is
// a file, or that silently mixes its frames with another run's, has wasted the hours or
// the other run's results. check_output_folder runs before the case is set up (the CLI
// calls it right after reading the case); clear_previous_outputs runs only once everything
// else was found right (run::Run), so a refused run has deleted nothing.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"

namespace hw::run {

// What the run means to do with the folder's earlier outputs.
struct FolderIntent {
  bool overwrite = false;     // --overwrite: clear the earlier run's outputs first
  std::string resume_run_id;  // --restart: the run the checkpoint belongs to ("" unknown)
  std::string restart_path;   // --restart: the checkpoint file ("" for a new run)
  // Whose words the advice uses: the command line's options, or the Python API's arguments.
  enum class Caller { cli, python } caller = Caller::cli;
};

// InputError located at `at`, naming the key output.directory and the folder, when the
// folder is a file, cannot be created or written, holds heartwave files that cannot be
// rewritten, or holds another run's outputs (the message says which run: its case,
// overrides, start time and how far it got, and what to do: --overwrite, --restart or
// another output.directory). Fine: a missing or empty folder, one with only files that are
// not heartwave's, the run's own folder when resuming it, and any folder with --overwrite.
void check_output_folder(const std::string& dir, const SourceLoc& at, const FolderIntent& intent);

// Removes from `dir` the files the earlier run wrote (its manifest's list) and any file of
// a name heartwave writes (io::is_heartwave_output), except `keep` (the checkpoint a
// restart reads). Other files stay. Returns the names removed.
std::vector<std::string> clear_previous_outputs(const std::string& dir, const std::string& keep = "");

}  // namespace hw::run
