// The live view's commands (cmd_live.cpp): `run --live` / `live`, and `run --replay`.
#pragma once

#include <string>

#include "tissue/case.hpp"
#include "tissue/simulation.hpp"

namespace hw::cli {

struct LiveFlags {
  std::string host = "127.0.0.1";
  int port = 0;
  double fps = 30;
};

// Serves the live view of case c until Ctrl-C (exit 0).
int live_case(const tissue::TissueCase& c, const LiveFlags& f, const tissue::SimulationOptions& sim, bool quiet);
// Replays a live run's action log on case c; writes replay.hwck and replay-V.vti.
int replay_case(const tissue::TissueCase& c, const std::string& log, const tissue::SimulationOptions& sim, bool quiet);

}  // namespace hw::cli
