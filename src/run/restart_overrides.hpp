// The --set overrides a restart runs with.
//
// Why: a checkpoint continues one run, and that run was started with overrides (a shorter
// t_end, another output folder, a changed conductivity). `--restart CKPT` alone must run
// with all of them — a restart that forgot output.directory wrote into the case's default
// folder over another run — and a restart given another value of a key that changes the
// physics cannot continue the run: it is refused naming the key and both values, where it
// used to be refused only as a case-hash mismatch.
#pragma once

#include <string>
#include <vector>

namespace hw::run {

// The key of "KEY=VALUE" (before the first '=', trimmed) and its value (trimmed).
std::string override_key(const std::string& set);
std::string override_value(const std::string& set);

// False for the keys a continuation may change without changing the run's results so far:
// time.t_end and the output.* keys. case_identity leaves those out.
bool changes_physics(const std::string& key);

// The checkpoint's overrides with the command line's on top: a key given again takes the
// new value (time.t_end, output.*) and new keys are appended, in order. InputError located
// at `checkpoint` when a physics key is given with another value than the checkpoint's
// run had, or was not set by that run (the message names the key and both values).
std::vector<std::string> merge_restart_overrides(const std::vector<std::string>& from_checkpoint,
                                                 const std::vector<std::string>& given,
                                                 const std::string& checkpoint);

}  // namespace hw::run
