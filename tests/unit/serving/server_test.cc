#include "pkg/serving/server.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "pkg/serving/health.h"
#include "tests/support/certs.h"

namespace berth::serving {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

struct Answer {
  int status = 0;
  std::string body;
};

template <class Stream>
Answer exchange(Stream& stream, http::verb method, const std::string& target,
                const std::string& extraHeader = {}) {
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "localhost");
  if (!extraHeader.empty()) req.set("X-Extra", extraHeader);
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  return Answer{static_cast<int>(res.result_int()), res.body()};
}

Answer get(uint16_t port, const std::string& target, http::verb method = http::verb::get,
           const std::string& extraHeader = {}) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  return exchange(socket, method, target, extraHeader);
}

// An HTTPS GET that trusts only `caPem`; throws when the handshake fails.
Answer getTls(uint16_t port, const std::string& target, const std::string& caPem) {
  net::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(caPem));
  ctx.set_verify_mode(ssl::verify_peer);
  ssl::stream<tcp::socket> stream(ioc, ctx);
  stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  stream.handshake(ssl::stream_base::client);
  return exchange(stream, http::verb::get, target);
}

Handler echo() {
  return [](std::string_view target) {
    return Response{200, "text/plain", "you asked for " + std::string(target)};
  };
}

std::unique_ptr<Server> startOrDie(Options options, Handler handler) {
  options.bindAddress = "127.0.0.1";
  auto server = Server::start(std::move(options), std::move(handler));
  if (!server.ok()) throw std::runtime_error(server.error().message);
  return std::move(*server);
}

void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

TEST(Server, AnswersGetsOnAFreePortWithKeepAlive) {
  auto server = startOrDie({}, echo());
  ASSERT_NE(server->port(), 0);
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server->port()));
  EXPECT_EQ(exchange(socket, http::verb::get, "/metrics").body, "you asked for /metrics");
  EXPECT_EQ(exchange(socket, http::verb::get, "/readyz?verbose").body,
            "you asked for /readyz?verbose");
}

TEST(Server, RefusesMethodsOtherThanGetAndHead) {
  auto server = startOrDie({}, echo());
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::post).status, 405);
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::delete_).status, 405);
}

TEST(Server, RejectsOversizedHeaders) {
  auto server = startOrDie({}, echo());
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::get, std::string(20000, 'x')).status, 431);
  // And keeps serving others.
  EXPECT_EQ(get(server->port(), "/healthz").status, 200);
}

TEST(Server, AHandlerThatThrowsAnswers500AndTheServerLives) {
  auto server = startOrDie({}, [](std::string_view target) -> Response {
    if (target == "/boom") throw std::runtime_error("boom");
    return Response{200, "text/plain", "fine"};
  });
  EXPECT_EQ(get(server->port(), "/boom").status, 500);
  EXPECT_EQ(get(server->port(), "/ok").body, "fine");
}

TEST(Server, FailsClearlyOnABusyPortOrBadAddress) {
  auto first = startOrDie({}, echo());
  Options same;
  same.bindAddress = "127.0.0.1";
  same.port = first->port();
  auto second = Server::start(same, echo());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("cannot listen on 127.0.0.1:"), std::string::npos);
  Options bad;
  bad.bindAddress = "not-an-ip";
  auto third = Server::start(bad, echo());
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().message, "--bind-address: invalid IP address \"not-an-ip\"");
}

TEST(Server, ServesHttpsAndPicksUpARotatedCertificate) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("berth-serving-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const test::TestPki first = test::makeTestPki();
  writeFile(dir / "tls.crt", first.server.certificatePem);
  writeFile(dir / "tls.key", first.server.privateKeyPem);
  Options options;
  options.tls = TlsFiles{(dir / "tls.crt").string(), (dir / "tls.key").string()};
  auto server = startOrDie(options, echo());
  EXPECT_TRUE(server->tls());
  EXPECT_EQ(getTls(server->port(), "/livez", first.ca.certificatePem).body, "you asked for /livez");

  // Rotation: a new pair from another CA; the next connection is served with it.
  const test::TestPki second = test::makeTestPki();
  writeFile(dir / "tls.crt", second.server.certificatePem);
  writeFile(dir / "tls.key", second.server.privateKeyPem);
  EXPECT_EQ(getTls(server->port(), "/livez", second.ca.certificatePem).status, 200);
  EXPECT_THROW(getTls(server->port(), "/livez", first.ca.certificatePem), std::exception);

  // A half-written rotation (key not matching) keeps the last good pair.
  writeFile(dir / "tls.key", first.server.privateKeyPem);
  EXPECT_EQ(getTls(server->port(), "/livez", second.ca.certificatePem).status, 200);
  server->stop();
  std::filesystem::remove_all(dir);
}

TEST(Server, RejectsAKeyThatDoesNotMatchTheCertificate) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("berth-serving-bad-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const test::TestPki pki = test::makeTestPki();
  writeFile(dir / "tls.crt", pki.server.certificatePem);
  writeFile(dir / "tls.key", pki.client.privateKeyPem);
  Options options;
  options.tls = TlsFiles{(dir / "tls.crt").string(), (dir / "tls.key").string()};
  auto server = Server::start(options, echo());
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("does not match the certificate"), std::string::npos);
  auto missing =
      Server::start(Options{.tls = TlsFiles{"/nonexistent.crt", "/nonexistent.key"}}, echo());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--tls-cert-file /nonexistent.crt: cannot be read");
  std::filesystem::remove_all(dir);
}

// --- Health endpoints
// ------------------------------------------------------------------------------

Check failing(std::string name) {
  return Check{std::move(name), [] { return util::Result<void>(util::invalidArgument("broken")); }};
}

TEST(HealthResponse, AllPassingIsPlainOk) {
  auto r = healthResponse("healthz", "/healthz", {pingCheck()});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
}

TEST(HealthResponse, VerboseListsEachCheck) {
  auto r = healthResponse("readyz", "/readyz?verbose",
                          {pingCheck(), Check{"shutdown", [] { return util::Result<void>(); }}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n");
}

TEST(HealthResponse, AFailingCheckIs500WithTheReasonWithheld) {
  auto r = healthResponse("readyz", "/readyz", {pingCheck(), failing("sched-handler-sync")});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body,
            "[+]ping ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n");
}

TEST(HealthResponse, ANamedCheckRunsAlone) {
  const std::vector<Check> checks{pingCheck(), failing("leaderElection")};
  EXPECT_EQ(healthResponse("livez", "/livez/ping", checks)->body, "ok");
  auto r = healthResponse("livez", "/livez/leaderElection", checks);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body, "internal server error: broken\n");
  EXPECT_EQ(healthResponse("livez", "/livez/nope", checks)->status, 404);
}

TEST(HealthResponse, OtherPathsAreNotThisEndpoints) {
  EXPECT_FALSE(healthResponse("livez", "/livezz", {pingCheck()}));
  EXPECT_FALSE(healthResponse("livez", "/metrics", {pingCheck()}));
}

}  // namespace
}  // namespace berth::serving
