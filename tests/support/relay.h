#pragma once
// TcpRelay: a TCP relay on an ephemeral loopback port in front of a server, for tests that need to
// see or disturb the connections a client opens: count them, cut them all at once (as a server or
// a load balancer closing idle keep-alive connections does), or hang one mid-request.

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/loopback.h"

namespace berth::test {

class TcpRelay {
 public:
  explicit TcpRelay(uint16_t upstreamPort);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  // 0 when the relay could not listen.
  uint16_t port() const { return listener_.port(); }
  // Connections accepted and connected upstream so far.
  int accepted() const { return accepted_.load(); }
  // Closes every relayed connection; the client has seen the FIN when this returns.
  void closeAll();
  // From now on, a connection whose client sends bytes containing `needle` stops relaying in both
  // directions, without closing, until the relay is destroyed: a server that hangs mid-request.
  void stall(std::string needle);

 private:
  struct Link {
    int client;
    int upstream;
    bool open = true;  // guarded by mu_; the relay thread closes the descriptors after clearing it
  };

  void acceptLoop();
  void relay(Link& link);

  const uint16_t upstream_port_;
  LoopbackListener listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread accept_thread_;
  std::vector<std::thread> relays_;  // touched by the accept thread only, until it is joined
  std::mutex mu_;
  std::list<Link> links_;  // a list: relay threads hold references to their link
  std::string needle_;
};

}  // namespace berth::test
