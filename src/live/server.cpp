#include "live/server.hpp"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "core/error.hpp"

std::string hw::live::random_token() {
  unsigned char b[16];
  std::ifstream in("/dev/urandom", std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(b), sizeof b)) throw hw::Error("live: cannot read /dev/urandom for the page's token");
  std::string s;
  for (unsigned char c : b) s += fmt::format("{:02x}", c);
  return s;
}

bool hw::live::same_token(const std::string& a, const std::string& b) {
  // Every byte of the longer is looked at, whatever differs first.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= unsigned(x ^ y);
  }
  return diff == 0 && !a.empty();
}

#if HW_HAVE_BEAST

#include <deque>
#include <thread>
#include <utility>  // Boost 1.74's asio uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include "live/assets.hpp"
#include "live/flat_json.hpp"

namespace hw::live {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

struct Shared {
  Hub& hub;
  std::string token;
  std::string host;  // as bound
  int port = 0;
  bool any_host = false;  // bound to every address: the Host header is not checked
};

// One tab's socket: controls in, and on a 15 ms tick whatever the hub has newer (the hello,
// replies, the status, the latest frame) out. A tick while a write is under way does
// nothing, so a slow tab skips frames and nothing queues without bound.
class Socket : public std::enable_shared_from_this<Socket> {
 public:
  Socket(tcp::socket&& s, Shared& sh) : ws_(std::move(s)), sh_(sh), timer_(ws_.get_executor()) {}
  ~Socket() {
    if (counted_) sh_.hub.watch(-1);
  }

  void run(http::request<http::string_body> req) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    // Up to 16 times a control's limit reaches the parser, which refuses it with a message;
    // beyond that the socket closes (nothing larger is ever buffered).
    ws_.read_message_max(16 * kMaxMessageBytes);
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->sh_.hub.watch(+1);
      self->counted_ = true;
      self->read();
      self->tick();
    });
  }

 private:
  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      if (!self->ws_.got_text()) {
        self->local_reply("the live view takes text messages (JSON) only");
      } else if (!self->sh_.hub.push_control(beast::buffers_to_string(self->in_.data()))) {
        self->local_reply("too many controls waiting: the run applies them between steps; try again");
      }
      self->in_.consume(self->in_.size());
      self->read();
    });
  }
  void local_reply(const std::string& why) {
    if (out_.size() < 64)
      out_.push_back({std::make_shared<const std::string>(
                          fmt::format("{{\"type\":\"reply\",\"id\":\"\",\"ok\":false,\"message\":{}}}", json_quote(why))),
                      false});
  }
  void close() {
    closed_ = true;
    timer_.cancel();
  }
  void tick() {
    if (closed_) return;
    timer_.expires_after(std::chrono::milliseconds(15));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      self->pump();
    });
  }
  void pump() {
    Hub::News n = sh_.hub.news(cursor_);
    if (n.hello) out_.push_back({n.hello, false});
    for (auto& r : n.replies) out_.push_back({r, false});
    if (n.status) out_.push_back({n.status, false});
    if (n.frame) out_.push_back({n.frame, true});
    write_next();
  }
  void write_next() {
    if (closed_) return;
    if (out_.empty()) return tick();
    auto [msg, binary] = out_.front();
    out_.pop_front();
    ws_.binary(binary);
    ws_.async_write(net::buffer(*msg), [self = shared_from_this(), msg = msg](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->write_next();
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  Shared& sh_;
  net::steady_timer timer_;
  beast::flat_buffer in_;
  Hub::Cursor cursor_;
  std::deque<std::pair<std::shared_ptr<const std::string>, bool>> out_;
  bool counted_ = false, closed_ = false;
};

// One HTTP connection: the page's files, or the upgrade to a Socket.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket&& s, Shared& sh) : stream_(std::move(s)), sh_(sh) {}
  void run() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(8192);
    parser_->body_limit(1024);
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      self->answer(self->parser_->release());
    });
  }

  void send(http::status st, const std::string& type, std::string body, bool keep, const std::string& location = "") {
    auto res = std::make_shared<http::response<http::string_body>>(st, 11);
    res->set(http::field::server, "heartwave");
    res->set(http::field::content_type, type);
    res->set(http::field::cache_control, "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->set("Referrer-Policy", "no-referrer");  // the token is in the address
    res->set("Content-Security-Policy",
             "default-src 'self'; connect-src 'self' ws: ; img-src 'self' data: blob:; style-src 'self'; frame-ancestors 'none'");
    if (!location.empty()) res->set(http::field::location, location);
    res->body() = std::move(body);
    res->keep_alive(keep);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec) return;
      if (res->keep_alive()) self->read();
      else self->stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    });
  }

  void answer(http::request<http::string_body> req) {
    const bool keep = req.keep_alive();
    // The Host header names this server (DNS rebinding: another name resolving here is refused).
    const std::string host(req[http::field::host]);
    if (!sh_.any_host && host != fmt::format("{}:{}", sh_.host, sh_.port) && host != fmt::format("localhost:{}", sh_.port))
      return send(http::status::forbidden, "text/plain", "this live view answers only to its own address\n", false);
    std::string target(req.target());
    target = target.substr(0, target.find('?'));
    if (target.empty() || target[0] != '/') return send(http::status::bad_request, "text/plain", "bad request\n", false);
    // "/TOKEN" + rest
    const std::size_t slash = target.find('/', 1);
    const std::string first = target.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    const std::string rest = slash == std::string::npos ? "" : target.substr(slash);
    if (!same_token(first, sh_.token))
      return send(http::status::forbidden, "text/plain",
                  "a live view's address holds its token: open the link the run printed\n", keep);
    if (websocket::is_upgrade(req)) {
      const std::string origin(req[http::field::origin]);
      if (rest != "/ws" || (!origin.empty() && origin != "http://" + host))
        return send(http::status::forbidden, "text/plain", "websocket refused\n", false);
      std::make_shared<Socket>(stream_.release_socket(), sh_)->run(std::move(req));
      return;
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return send(http::status::method_not_allowed, "text/plain", "GET only\n", keep);
    if (rest.empty()) return send(http::status::found, "text/plain", "", keep, "/" + sh_.token + "/");
    const std::string name = rest == "/" ? "index.html" : rest.substr(1);
    for (const Asset& a : page_assets())
      if (a.name == name) return send(http::status::ok, mime_type(a.name), a.bytes, keep);
    send(http::status::not_found, "text/plain", "not found\n", keep);
  }

  beast::tcp_stream stream_;
  Shared& sh_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

}  // namespace

struct Server::Impl {
  // Declared first, destroyed last: the io_context's end destroys the sockets' pending
  // handlers, whose sockets still tell the hub they stop watching.
  std::unique_ptr<Shared> shared;
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::thread thread;

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (!ec) std::make_shared<Connection>(std::move(s), *shared)->run();
      if (acceptor.is_open()) accept();
    });
  }
};

Server::Server(Hub& hub, const ServerOptions& o) : impl_(std::make_unique<Impl>()) {
  beast::error_code ec;
  const auto addr = net::ip::make_address(o.host, ec);
  if (ec) throw Error(fmt::format("live: '{}' is not an IP address (--live-host takes one, e.g. 127.0.0.1)", o.host));
  if (o.port < 0 || o.port > 65535) throw Error(fmt::format("live: port {} is out of range (0 to 65535)", o.port));
  const tcp::endpoint ep(addr, static_cast<unsigned short>(o.port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw Error(fmt::format("live: cannot listen on {}:{}: {}", o.host, o.port, ec.message()));
  impl_->shared = std::make_unique<Shared>(Shared{hub, o.token.empty() ? random_token() : o.token, o.host,
                                                  a.local_endpoint().port(), addr.is_unspecified()});
  impl_->accept();
  impl_->thread = std::thread([this] {
    // A handler that throws (it should not) loses its connection, not the server.
    for (;;) {
      try {
        impl_->ioc.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "live: a connection failed: %s\n", e.what());
      }
    }
  });
}

Server::~Server() {
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int Server::port() const { return impl_->shared->port; }
const std::string& Server::token() const { return impl_->shared->token; }
std::string Server::url() const {
  const std::string host = impl_->shared->any_host ? "127.0.0.1" : impl_->shared->host;
  return fmt::format("http://{}:{}/{}/", host, port(), token());
}

}  // namespace hw::live

#else  // built without Boost.Beast

namespace hw::live {

struct Server::Impl {};

Server::Server(Hub&, const ServerOptions&) {
  throw Error("live: this heartwave was built without Boost.Beast; install libboost-dev (tools/setup.sh does) and "
              "build again");
}
Server::~Server() = default;
int Server::port() const { return 0; }
const std::string& Server::token() const {
  static const std::string none;
  return none;
}
std::string Server::url() const { return ""; }

}  // namespace hw::live

#endif
