// The live view's cost to the stepping (docs/live.md, docs/benchmarks.md): steps per second
// of a case stepped as `heartwave run` steps it without the view (the activation map's sink
// where the case asks for it, probes read at their interval),
// then served live with nobody watching, then served live to one WebSocket client that
// reads every frame (30 frames/s at most: a frame, the pseudo-ECG and the status each time),
// in alternating rounds so that a machine's changing load falls on each alike.
//
//   bench_live CASE [--seconds S] [--rounds R] [--threads T] [--backend cpu|cuda] [--set KEY=VALUE]...
//              [--describe 1]   (the last round also prints the engine's description and where
//                                the live loop's time went)
//
// The client is a thread of this process reading and dropping the messages (what a browser
// does besides drawing): the server's and the stepping's work are what is measured.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <memory>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "live/server.hpp"
#include "live/session.hpp"
#include "run/case_file.hpp"
#include "tissue/engine.hpp"
#include "tissue/simulation.hpp"
#include "tissue/sinks.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace beast = boost::beast;
namespace net = boost::asio;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The case stepped as `heartwave run` steps it, with the observers its [output] asks for
// that live where V lives (the activation map's sink) and its probes read at their
// interval, but no view: the run without the live view.
double bare(const hw::tissue::TissueCase& c, const hw::tissue::SimulationOptions& so, double seconds, bool describe) {
  hw::tissue::Simulation sim(c, so);
  std::shared_ptr<hw::tissue::ActivationSink> maps;
  if (c.output.activation_map) {
    hw::tissue::ActivationMaps m;
    m.threshold = float(c.output.activation_threshold);
    m.act.assign(sim.grid().size(), NAN);
    maps = sim.attach_activation(m);
  }
  std::vector<std::pair<std::string, std::size_t>> reads;
  for (const auto& p : c.output.probes) {
    const auto& g = sim.grid();
    reads.emplace_back("V", g.index(std::min(int(p.position[0] / g.h[0]), g.n[0] - 1),
                                    std::min(int(p.position[1] / g.h[1]), g.n[1] - 1),
                                    std::min(int(p.position[2] / g.h[2]), g.n[2] - 1)));
  }
  const auto probes = sim.attach_probes(reads);
  const double every = std::max(c.output.probe_interval, sim.dt());
  std::vector<double> got;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < seconds) {
    sim.run_until(sim.time() + every);
    probes->read(got);
  }
  const double rate = double(sim.steps_done()) / seconds_since(t0);
  if (describe) std::printf("  without the view: %s\n", sim.describe().c_str());
  return rate;
}

struct LiveRate {
  double steps_per_s = 0, frames_per_s = 0, frame_kb = 0;
};

LiveRate live(const hw::tissue::TissueCase& c, const hw::tissue::SimulationOptions& so, double seconds, bool watched,
              bool describe) {
  hw::live::LiveOptions o;
  o.sim = so;
  hw::live::Hub hub;
  hw::live::LiveRun run(c, o, &hub);
  auto server_owner = std::make_unique<hw::live::Server>(hub, hw::live::ServerOptions{"127.0.0.1", 0, ""});
  hw::live::Server& server = *server_owner;
  std::atomic<long> frames{0}, frame_bytes{0};
  std::thread client;
  if (watched) {
    client = std::thread([&] {
      try {
        net::io_context ioc;
        beast::websocket::stream<net::ip::tcp::socket> ws(ioc);
        ws.next_layer().connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server.port())});
        ws.handshake(fmt::format("127.0.0.1:{}", server.port()), "/" + server.token() + "/ws");
        beast::flat_buffer b;
        for (;;) {
          ws.read(b);
          if (!ws.got_text()) {
            ++frames;
            frame_bytes += long(b.size());
          }
          b.consume(b.size());
        }
      } catch (const std::exception&) {
        // the server closed the socket: the round is over
      }
    });
    while (hub.watchers() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto t0 = Clock::now();
  run.serve([&] { return seconds_since(t0) >= seconds; });
  const double wall = seconds_since(t0);
  server_owner.reset();  // closes the client's socket
  if (client.joinable()) client.join();
  LiveRate r;
  r.steps_per_s = double(run.simulation().steps_done()) / wall;
  r.frames_per_s = double(frames) / wall;
  r.frame_kb = frames ? double(frame_bytes) / double(frames) / 1024 : 0;
  if (describe) {
    const auto& p = run.profile();
    std::printf("  live, %s: %.2f of %.2f s in %ld stepping calls (%.1f steps each), %.2f s in %ld frames; %s\n",
                watched ? "watched" : "unwatched", p.step_s, wall, p.step_calls,
                p.step_calls ? double(p.steps) / double(p.step_calls) : 0.0, p.frame_s, p.frames,
                run.simulation().describe().c_str());
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_live CASE [--seconds S] [--rounds R] [--threads T] [--backend cpu|cuda] "
                         "[--set KEY=VALUE]...\n");
    return 2;
  }
  double seconds = 10;
  int rounds = 3, threads = 1;
  std::string backend = "cpu";
  std::vector<std::string> sets;
  bool describe = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--seconds") seconds = std::stod(argv[i + 1]);
    else if (k == "--rounds") rounds = std::stoi(argv[i + 1]);
    else if (k == "--threads") threads = std::stoi(argv[i + 1]);
    else if (k == "--set") sets.push_back(argv[i + 1]);
    else if (k == "--backend") backend = argv[i + 1];
    else if (k == "--describe") describe = std::string(argv[i + 1]) != "0";
  }
  try {
    hw::tissue::TissueCase c = hw::io::read_case_file(argv[1], sets);
    // A live run pauses at the case's t_end (resume goes on), and a fast GPU reaches the
    // examples' t_end within a round (the spiral's 2,000 ms in 0.35 s on an H100): each run
    // here goes on for its seconds instead, as the run without the view does.
    c.time.t_end = 1e9;
    hw::tissue::SimulationOptions so;
    so.backend = hw::tissue::choose_backend(backend);
    so.threads = threads;
    so.adapt_threads = false;
    std::printf("case %s, %s, %d thread(s), %d rounds of %.0f s each\n", argv[1], backend.c_str(), threads, rounds,
                seconds);
    std::printf("%-6s %14s %16s %16s %10s %10s\n", "round", "run steps/s", "live, unwatched", "live, watched", "frames/s", "frame KB");
    double sb = 0, su = 0, sw = 0;
    for (int r = 0; r < rounds; ++r) {
      // The last round also says where the time went (printed above its row).
      const bool last = r + 1 == rounds && describe;
      const double b = bare(c, so, seconds, last);
      const LiveRate u = live(c, so, seconds, false, last);
      const LiveRate w = live(c, so, seconds, true, last);
      sb += b;
      su += u.steps_per_s;
      sw += w.steps_per_s;
      std::printf("%-6d %14.1f %16.1f %16.1f %10.1f %10.1f\n", r + 1, b, u.steps_per_s, w.steps_per_s, w.frames_per_s, w.frame_kb);
      std::fflush(stdout);
    }
    std::printf("mean   %14.1f %16.1f %16.1f   (watched: %+.1f %% against the run without the view, %+.1f %% against unwatched)\n", sb / rounds,
                su / rounds, sw / rounds, 100 * (sw / sb - 1), 100 * (sw / su - 1));
  } catch (const hw::Error& e) {
    std::fprintf(stderr, "bench_live: %s\n", e.what());
    return 1;
  }
  return 0;
}
