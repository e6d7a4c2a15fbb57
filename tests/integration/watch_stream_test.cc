// Watches on the Beast transport against scripted servers: a server that floods events faster
// than they are consumed is held back by TCP flow control (the stream's buffer stays bounded),
// redirects are not followed (the token never reaches the target), a silent stream times out, and
// a stop request ends a blocked read.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <list>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/client/http_transport.h"
#include "pkg/client/rest.h"
#include "tests/support/eventually.h"
#include "tests/support/loopback.h"

namespace berth {
namespace {

using namespace std::chrono_literals;
using test::eventually;

constexpr auto kStreamDeadline = std::chrono::seconds(60);  // only against hangs

// An HTTP server scripted per connection: `answer` gets the socket and the request's head and
// writes the reply; the connection is closed when it returns.
class ScriptedServer {
 public:
  using Answer =
      std::function<void(int fd, const std::string& head, const std::atomic<bool>& stop)>;

  explicit ScriptedServer(Answer answer)
      : answer_(std::move(answer)), accept_thread_([this] { acceptLoop(); }) {}
  ~ScriptedServer() {
    stopping_ = true;
    accept_thread_.join();
    for (std::thread& t : connections_) {
      t.join();
    }
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  uint16_t port() const { return listener_.port(); }
  int accepted() const { return accepted_.load(); }
  std::vector<std::string> heads() const {
    std::lock_guard lock(mu_);
    return heads_;
  }

 private:
  void acceptLoop() {
    while (!stopping_) {
      pollfd p{listener_.fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) {
        continue;
      }
      const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        continue;
      }
      ++accepted_;
      connections_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && !stopping_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) {
        continue;
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        break;
      }
      head.append(buf, static_cast<size_t>(n));
    }
    {
      std::lock_guard lock(mu_);
      heads_.push_back(head);
    }
    answer_(fd, head, stopping_);
    ::close(fd);
  }

  Answer answer_;
  test::LoopbackListener listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  mutable std::mutex mu_;
  std::vector<std::string> heads_;      // guarded by mu_
  std::list<std::thread> connections_;  // touched by the accept thread only, until it is joined
  std::thread accept_thread_;           // last: it uses everything above
};

// Writes all of `data` without blocking in send; `blocked` is set when the peer's window is full
// (the socket would block). False when the peer went away or the server stops.
bool sendWhole(int fd, std::string_view data, std::atomic<bool>& blocked,
               const std::atomic<bool>& stop) {
  while (!data.empty()) {
    if (stop) {
      return false;
    }
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      blocked = true;
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 50);
      continue;
    }
    return false;
  }
  return true;
}

bool sendText(int fd, std::string_view text) {
  std::atomic<bool> blocked{false};
  const std::atomic<bool> stop{false};
  return sendWhole(fd, text, blocked, stop);
}

std::string chunkOf(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

constexpr std::string_view kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

// One ADDED event line of about 2.4 KB (the probe's flood), for pod p<i>.
std::string eventLine(int i) {
  const std::string name = "p" + std::to_string(i);
  return R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default","resourceVersion":")" + std::to_string(i + 1) +
         R"(","annotations":{"pad":")" + std::string(2300, 'x') + "\"}}}}\n";
}

client::RestClientPtr makeWatchClient(uint16_t port, client::Duration watchIdleTimeout = 12min) {
  client::RestConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  config.bearerToken = "redirect-secret-token";
  config.qps = -1;
  client::RestOptions options;
  options.retry.maxRetries = 0;
  options.watchIdleTimeout = watchIdleTimeout;
  auto c = client::RestClient::create(config, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? *std::move(c) : nullptr;
}

TEST(WatchStream, AFloodIsHeldBackByFlowControlAndTheBufferStaysBounded) {
  // Far more than the kernel's socket buffers on both ends hold (a few MiB each).
  constexpr int kEvents = 16000;
  const size_t eventBytes = eventLine(kEvents).size();
  std::atomic<bool> blocked{false};
  std::atomic<int> sent{0};
  ScriptedServer server([&](int fd, const std::string&, const std::atomic<bool>& stop) {
    if (!sendText(fd, kStreamHead)) return;
    for (int i = 0; i < kEvents; ++i) {
      if (!sendWhole(fd, chunkOf(eventLine(i)), blocked, stop)) return;
      ++sent;
    }
    sendText(fd, "0\r\n\r\n");
  });
  auto c = makeWatchClient(server.port());
  ASSERT_NE(c, nullptr);
  auto stream = c->watch(client::kPods, "", {});
  ASSERT_TRUE(stream.ok()) << stream.error().toString();
  auto first = (*stream)->next();
  ASSERT_TRUE(first.ok()) << first.error().toString();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((**first).object["metadata"]["name"], "p0");

  // While berth reads nothing, the server can send only what the sockets hold: it blocks.
  ASSERT_TRUE(eventually([&] { return blocked.load(); }, kStreamDeadline))
      << "the server sent all " << sent.load() << " events without blocking: berth read ahead";
  EXPECT_LT(sent.load(), kEvents);

  for (int i = 1; i < kEvents; ++i) {
    auto event = (*stream)->next();
    ASSERT_TRUE(event.ok()) << "event " << i << ": " << event.error().toString();
    ASSERT_TRUE(event->has_value()) << "event " << i;
    ASSERT_EQ((**event).object["metadata"]["name"], "p" + std::to_string(i));
  }
  auto end = (*stream)->next();
  ASSERT_TRUE(end.ok()) << end.error().toString();
  EXPECT_FALSE(end->has_value());
  // One event being framed, one block read from the body, and the transport's read-ahead of one
  // socket read: never the backlog.
  EXPECT_GT((*stream)->mostBufferedBytes(), 0u);
  EXPECT_LE((*stream)->mostBufferedBytes(),
            eventBytes + 3 * client::HttpTransport::Stream::kBlockBytes);
}

TEST(WatchStream, ARedirectIsNotFollowedAndTheTokenStaysWithTheServer) {
  ScriptedServer target([](int fd, const std::string&, const std::atomic<bool>&) {
    sendText(fd, std::string(kStreamHead) + "0\r\n\r\n");
  });
  const std::string location = "http://127.0.0.1:" + std::to_string(target.port());
  ScriptedServer origin([&](int fd, const std::string& head, const std::atomic<bool>&) {
    const std::string path = head.substr(4, head.find(' ', 4) - 4);
    sendText(fd, "HTTP/1.1 301 Moved Permanently\r\nLocation: " + location + path +
                     "\r\nContent-Length: 0\r\n\r\n");
  });
  auto c = makeWatchClient(origin.port());
  ASSERT_NE(c, nullptr);

  auto watch = c->watch(client::kPods, "", {});
  ASSERT_FALSE(watch.ok());
  EXPECT_TRUE(watch.error().isStatus(301)) << watch.error().toString();
  const std::string host = "127.0.0.1:" + std::to_string(target.port());
  EXPECT_NE(watch.error().toString().find("redirected to host \"" + host + "\""), std::string::npos)
      << watch.error().toString();

  auto get = c->get(client::kPods, "default", "web");
  ASSERT_FALSE(get.ok());
  EXPECT_TRUE(get.error().isStatus(301)) << get.error().toString();

  EXPECT_EQ(target.accepted(), 0);
  ASSERT_EQ(origin.heads().size(), 2u);
  EXPECT_NE(origin.heads()[0].find("Authorization: Bearer redirect-secret-token"),
            std::string::npos);
}

TEST(WatchStream, ASilentStreamFailsAfterTheIdleTimeout) {
  ScriptedServer server([](int fd, const std::string&, const std::atomic<bool>& stop) {
    sendText(fd, kStreamHead);
    while (!stop) {
      std::this_thread::sleep_for(10ms);
    }
  });
  auto c = makeWatchClient(server.port(), /*watchIdleTimeout=*/300ms);
  ASSERT_NE(c, nullptr);
  auto stream = c->watch(client::kPods, "", {});
  ASSERT_TRUE(stream.ok()) << stream.error().toString();
  auto event = (*stream)->next();
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_EQ(event.error().toString(), "connection: reading the response: timed out after 300ms");
}

TEST(WatchStream, AStopRequestEndsABlockedRead) {
  std::atomic<bool> answered{false};
  ScriptedServer server([&](int fd, const std::string&, const std::atomic<bool>& stop) {
    sendText(fd, kStreamHead);
    answered = true;
    while (!stop) {
      std::this_thread::sleep_for(10ms);
    }
  });
  auto c = makeWatchClient(server.port());
  ASSERT_NE(c, nullptr);
  std::stop_source stop;
  auto stream = c->watch(client::kPods, "", {}, stop.get_token());
  ASSERT_TRUE(stream.ok()) << stream.error().toString();
  auto next = std::async(std::launch::async, [&] { return (*stream)->next(); });
  ASSERT_TRUE(eventually([&] { return answered.load(); }, kStreamDeadline));
  stop.request_stop();
  ASSERT_EQ(next.wait_for(kStreamDeadline), std::future_status::ready);
  auto event = next.get();
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.error().kind, client::ApiFailure::Kind::Cancelled);
}

}  // namespace
}  // namespace berth
