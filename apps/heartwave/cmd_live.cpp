// `heartwave run CASE --live` (and `heartwave live CASE`): the run serves its live view on
// 127.0.0.1 and steps until Ctrl-C; `heartwave run CASE --replay LOG` steps the case again
// with the controls of a live run's action log and writes where it ends (docs/live.md).
#include "cmd_live.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "live/server.hpp"
#include "live/session.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/vtk_writer.hpp"

namespace hw::cli {

namespace {

std::string in_output(const tissue::TissueCase& c, const std::string& name) {
  return (std::filesystem::path(c.output.directory.empty() ? "." : c.output.directory) / name).string();
}

}  // namespace

int live_case(const tissue::TissueCase& c, const LiveFlags& f, const tissue::SimulationOptions& sim, bool quiet) {
  live::LiveOptions o;
  o.sim = sim;
  o.log_path = in_output(c, "live-actions.jsonl");
  o.case_label = c.source_file.empty() ? "<built-in spiral2d.toml>" : c.source_file;
  o.fps = f.fps;
  live::Hub hub;
  live::LiveRun run(c, o, &hub);
  live::Server server(hub, {f.host, f.port, ""});
  if (!quiet) std::cout << "  engine    " << run.simulation().describe() << "\n";
  std::cout << fmt::format("live: serving the view of this run on {}:{} (Ctrl-C stops it)\n", f.host, server.port());
  std::cout << "live: open " << server.url() << "\n";
  std::cout << "live: every control is logged to " << o.log_path << " (heartwave run CASE --replay it)\n" << std::flush;
  const io::StopSignalGuard guard;
  run.serve([] { return io::stop_requested(); });
  std::cout << fmt::format("live: stopped at t = {:g} ms (step {})\n", run.simulation().time(), run.simulation().steps_done());
  return 0;
}

int replay_case(const tissue::TissueCase& c, const std::string& log, const tissue::SimulationOptions& sim, bool quiet) {
  live::LiveOptions o;
  o.sim = sim;
  std::size_t applied = 0;
  const auto run = live::replay(c, o, log, &applied);
  const tissue::Simulation& s = run->simulation();
  const std::string ckpt = in_output(c, "replay.hwck"), field = in_output(c, "replay-V.vti");
  std::filesystem::create_directories(std::filesystem::path(ckpt).parent_path());
  io::write_checkpoint(ckpt, s.save_state(), io::CheckpointMeta{0, s.time(), s.steps_done()});
  tissue::Field<float> v;
  s.voltage(v);
  io::write_vti(field, s.grid(), {{"V", &v}}, &s.mask());
  std::cout << fmt::format("replay: {} controls of {} applied; t = {:g} ms (step {})\n", applied, log, s.time(),
                           s.steps_done());
  if (!quiet) std::cout << fmt::format("replay: the state is in {} and V in {}\n", ckpt, field);
  return 0;
}

}  // namespace hw::cli
