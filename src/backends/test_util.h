// Helpers shared by the backends unit tests: a tiny PNG and a local HTTP server on a free port.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "visalign/imaging/image.h"

namespace visalign::backends::testing {

inline std::string TinyPng(uint8_t r = 10, uint8_t g = 200, uint8_t b = 30) {
  imaging::Image img(4, 4);
  for (int i = 0; i < 16; ++i) {
    img.rgb[i * 3] = r;
    img.rgb[i * 3 + 1] = g;
    img.rgb[i * 3 + 2] = b;
  }
  return imaging::EncodePng(img).value();
}

// A loopback port nothing listens on (bound, then closed again).
inline int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// An httplib server on 127.0.0.1:<free port>, serving until destroyed.
class LocalServer {
 public:
  LocalServer() { port_ = server.bind_to_any_port("127.0.0.1"); }
  void Start() {
    thread_ = std::thread([this] { server.listen_after_bind(); });
    // stop() before the accept loop runs would be lost: wait until it does.
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LocalServer() {
    server.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  httplib::Server server;

 private:
  int port_ = 0;
  std::thread thread_;
};

}  // namespace visalign::backends::testing
