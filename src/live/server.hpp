// The live view's server: HTTP for the page and a WebSocket per tab for frames, status and
// controls, on one thread of its own (Boost.Beast; docs/live.md says why).
//
// Safety, as docs/live.md lists it: it binds 127.0.0.1 unless told otherwise; every request
// carries the run's random token as the first segment of its path (/TOKEN/, /TOKEN/app.js,
// /TOKEN/ws), compared in constant time; it serves only the embedded page's files and the
// socket, never a file of the disk; the Host header must name the address it serves (a
// page of another site cannot reach it by DNS rebinding), and a socket's Origin must be the
// page's own. A control is at most 4 KB of text (a socket sending 64 KB at once is closed); what it asks passes
// live/controls before the run sees it.
#pragma once

#include <memory>
#include <string>

#include "live/hub.hpp"

namespace hw::live {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;       // 0: one the system picks
  std::string token;  // empty: a new random one
};

// A random token of 32 hex digits from the system's random source.
std::string random_token();

// Compares in time that depends only on the lengths, not on where they differ.
bool same_token(const std::string& a, const std::string& b);

class Server {
 public:
  // Binds and starts serving on a thread of its own; hw::Error when it cannot bind (with the
  // address) or when heartwave was built without Boost.Beast (libboost-dev).
  Server(Hub& hub, const ServerOptions& o);
  ~Server();  // stops the thread and closes every socket
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  const std::string& token() const;
  // http://HOST:PORT/TOKEN/
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hw::live
