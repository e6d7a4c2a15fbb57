#include "tests/support/relay.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string_view>

namespace berth::test {

TcpRelay::TcpRelay(uint16_t upstreamPort) : upstream_port_(upstreamPort) {
  if (listener_.port() != 0) accept_thread_ = std::thread([this] { acceptLoop(); });
}

TcpRelay::~TcpRelay() {
  stopping_ = true;
  if (accept_thread_.joinable()) accept_thread_.join();
  for (std::thread& t : relays_) t.join();
}

void TcpRelay::closeAll() {
  std::lock_guard lock(mu_);
  for (Link& link : links_) {
    if (link.open) {
      ::shutdown(link.client, SHUT_RDWR);
      ::shutdown(link.upstream, SHUT_RDWR);
    }
  }
}

void TcpRelay::stall(std::string needle) {
  std::lock_guard lock(mu_);
  needle_ = std::move(needle);
}

void TcpRelay::acceptLoop() {
  while (!stopping_) {
    pollfd p{listener_.fd(), POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int client = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int upstream = connectLoopback(upstream_port_);
    if (upstream < 0) {
      ::close(client);
      continue;
    }
    ++accepted_;
    Link* link = nullptr;
    {
      std::lock_guard lock(mu_);
      link = &links_.emplace_back(Link{client, upstream});
    }
    relays_.emplace_back([this, link] { relay(*link); });
  }
}

void TcpRelay::relay(Link& link) {
  char buffer[16384];
  bool stalled = false;
  for (bool open = true; open && !stopping_;) {
    if (stalled) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    pollfd p[2] = {{link.client, POLLIN, 0}, {link.upstream, POLLIN, 0}};
    if (::poll(p, 2, 20) <= 0) continue;
    for (int i = 0; i < 2 && open && !stalled; ++i) {
      if (p[i].revents == 0) continue;
      const ssize_t n = ::recv(p[i].fd, buffer, sizeof buffer, 0);
      if (n > 0 && i == 0) {
        std::lock_guard lock(mu_);
        stalled =
            !needle_.empty() && std::string_view(buffer, static_cast<size_t>(n)).find(needle_) !=
                                    std::string_view::npos;
      }
      if (stalled) break;
      open = n > 0 && ::send(p[1 - i].fd, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
    }
  }
  std::lock_guard lock(mu_);
  link.open = false;
  ::close(link.client);
  ::close(link.upstream);
}

}  // namespace berth::test
