#pragma once
// Plain TCP sockets on 127.0.0.1 for tests that put a relay between a client and a server.

#include <netinet/in.h>

#include <cstdint>

namespace berth::test {

sockaddr_in loopback(uint16_t port);

// A connected socket to 127.0.0.1:port, or -1.
int connectLoopback(uint16_t port);

// A listening socket on an ephemeral loopback port; port() is 0 when it could not listen.
class LoopbackListener {
 public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace berth::test
