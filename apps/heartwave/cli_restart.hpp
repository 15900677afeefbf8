// `heartwave run --restart CKPT`: which case and overrides a restart runs with, and the
// command printed on Ctrl-C that continues a run.
//
// Why in the CLI: the library's Run takes a case and overrides; where they come from when
// the user gives only a checkpoint (its origin, outputs/checkpoint.hpp), and what a
// command line that works as printed looks like, are the front end's business.
#pragma once

#include <string>
#include <vector>

namespace hw::cli {

// Reads the checkpoint's origin. When it has one (a version-3 checkpoint): `file` empty
// becomes the case the checkpoint's run used (the built-in case stays empty), a case whose
// text differs from that run's is refused, and `sets` become the checkpoint's overrides
// with the command line's merged on top (run/restart_overrides.hpp: a different physics
// value is refused naming the key and both values). Prints what it took unless quiet.
// `builtin_text` is the built-in case's text. Returns the run's id ("" for an older
// checkpoint, which runs with the command line's case and overrides only, as before).
std::string resolve_restart(const std::string& checkpoint, std::string& file, std::vector<std::string>& sets,
                            const std::string& builtin_text, bool quiet);

// The whole text of a file.
std::string read_text(const std::string& path);

// The command that continues a stopped run, as it can be pasted into a shell:
// "heartwave run [CASE] --restart CKPT" and the engine options that were not the default.
// The checkpoint carries the overrides, so none is repeated.
std::string continue_command(const std::string& file, const std::string& checkpoint, const std::string& backend,
                             int threads, int device);

// `s` as one shell word: unchanged when it is plain, else in single quotes.
std::string shell_quote(const std::string& s);

}  // namespace hw::cli
