#include "pkg/serving/server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/log/log.h"
#include "pkg/serving/health.h"
#include "pkg/serving/tls.h"
#include "pkg/serving/x509.h"
#include "tests/support/certs.h"
#include "tests/support/eventually.h"

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

// One TLS connection; trusts only `caPem` when given (else verifies nothing) and presents
// `client` when given. Throws when the handshake fails.
struct TlsConnection {
  TlsConnection(uint16_t port, const std::string& caPem = {},
                const test::CertifiedKey* client = nullptr)
      : ctx(context(caPem, client)), stream(ioc, ctx) {
    stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    stream.handshake(ssl::stream_base::client);
  }
  static ssl::context context(const std::string& caPem, const test::CertifiedKey* client) {
    ssl::context ctx(ssl::context::tls_client);
    if (!caPem.empty()) {
      ctx.add_certificate_authority(net::buffer(caPem));
      ctx.set_verify_mode(ssl::verify_peer);
    }
    if (client != nullptr) {
      ctx.use_certificate_chain(net::buffer(client->certificatePem));
      ctx.use_private_key(net::buffer(client->privateKeyPem), ssl::context::pem);
    }
    return ctx;
  }
  net::io_context ioc;
  ssl::context ctx;
  ssl::stream<tcp::socket> stream;
};

Answer get(uint16_t port, const std::string& target, http::verb method = http::verb::get,
           const std::string& extraHeader = {}) {
  TlsConnection c(port);
  return exchange(c.stream, method, target, extraHeader);
}

// An HTTPS GET that trusts only `caPem`; throws when the handshake fails.
Answer getTls(uint16_t port, const std::string& target, const std::string& caPem) {
  TlsConnection c(port, caPem);
  return exchange(c.stream, http::verb::get, target);
}

Handler echo() {
  return [](const Request& request) {
    return Response{200, "text/plain", "you asked for " + std::string(request.target)};
  };
}

Options selfSigned() {
  Options options;
  auto pem = generateSelfSigned("localhost", {"127.0.0.1"});
  if (!pem.ok()) throw std::runtime_error(pem.error().message);
  options.tls.inMemory = *pem;
  return options;
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
  auto server = startOrDie(selfSigned(), echo());
  ASSERT_NE(server->port(), 0);
  TlsConnection c(server->port());
  EXPECT_EQ(exchange(c.stream, http::verb::get, "/metrics").body, "you asked for /metrics");
  EXPECT_EQ(exchange(c.stream, http::verb::get, "/readyz?verbose").body,
            "you asked for /readyz?verbose");
}

TEST(Server, TheSelfSignedCertificateVerifiesForLocalhostAgainstItsOwnCa) {
  auto pem = generateSelfSigned("localhost", {"127.0.0.1"});
  ASSERT_TRUE(pem.ok()) << pem.error().message;
  // The chain is the leaf then its CA: a client that trusts the CA verifies the leaf.
  const std::string ca =
      pem->certificate.substr(pem->certificate.find("-----END CERTIFICATE-----") +
                              std::string("-----END CERTIFICATE-----\n").size());
  Options options;
  options.tls.inMemory = *pem;
  auto server = startOrDie(options, echo());
  EXPECT_EQ(getTls(server->port(), "/livez", ca).status, 200);
}

TEST(Server, RefusesPlainHttp) {
  auto server = startOrDie(selfSigned(), echo());
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server->port()));
  EXPECT_THROW(exchange(socket, http::verb::get, "/metrics"), std::exception);
}

TEST(Server, HonoursTheMinimumTlsVersion) {
  Options options = selfSigned();
  options.tls.minVersion = TLS1_3_VERSION;
  auto server = startOrDie(options, echo());
  net::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ssl::stream<tcp::socket> stream(ioc, ctx);
  stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server->port()));
  EXPECT_THROW(stream.handshake(ssl::stream_base::client), std::exception);
}

TEST(Server, HandsTheClientCertificateAndTheHeadersToTheHandler) {
  const test::TestPki pki = test::makeTestPki();
  const test::CertifiedKey stranger =
      test::issueClientCertificate(test::makeCa("other"), "mallory", "system:masters");
  auto pool = CertificatePool::fromPem(pki.ca.certificatePem, "the CA");
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  Options options = selfSigned();
  options.tls.requestClientCertificates = true;
  auto server = startOrDie(options, [&pool](const Request& request) {
    std::string remote;
    for (const auto& [name, value] : request.headers) {
      if (name == "X-Extra") remote = " as " + std::string(value);
    }
    if (request.peer == nullptr) return Response{200, "text/plain", "none" + remote};
    std::string groups;
    for (const auto& g : request.peer->organizations) groups += g;
    const std::optional<std::string> err = (*pool)->verify(*request.peer);
    return Response{200, "text/plain",
                    (err ? "unverified (" + *err + ") " : "verified ") + request.peer->commonName +
                        " " + groups};
  });
  {
    TlsConnection c(server->port());
    EXPECT_EQ(exchange(c.stream, http::verb::get, "/", "alice").body, "none as alice");
  }
  {
    TlsConnection c(server->port(), "", &pki.client);
    EXPECT_EQ(exchange(c.stream, http::verb::get, "/").body, "verified berth-test system:masters");
  }
  {
    TlsConnection c(server->port(), "", &stranger);
    EXPECT_EQ(exchange(c.stream, http::verb::get, "/").body,
              "unverified (x509: certificate signed by unknown authority) mallory system:masters");
  }
}

TEST(Server, RefusesMethodsOtherThanGetAndHead) {
  auto server = startOrDie(selfSigned(), echo());
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::post).status, 405);
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::delete_).status, 405);
}

TEST(Server, RejectsOversizedHeaders) {
  auto server = startOrDie(selfSigned(), echo());
  EXPECT_EQ(get(server->port(), "/metrics", http::verb::get, std::string(20000, 'x')).status, 431);
  // And keeps serving others.
  EXPECT_EQ(get(server->port(), "/healthz").status, 200);
}

// Idle TCP connections that never start a TLS handshake, as a flooding client holds them.
std::vector<std::unique_ptr<tcp::socket>> holdIdle(net::io_context& ioc, uint16_t port, int n) {
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < n; ++i) {
    held.push_back(std::make_unique<tcp::socket>(ioc));
    held.back()->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  }
  return held;
}

int healthzStatus(uint16_t port) {
  try {
    return get(port, "/healthz").status;
  } catch (const std::exception&) {
    return 0;
  }
}

TEST(Server, HealthProbesAnswerWhileOneClientHoldsHundredsOfIdleConnections) {
  auto server = startOrDie(selfSigned(), echo());
  net::io_context ioc;
  auto held = holdIdle(ioc, server->port(), 300);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(healthzStatus(server->port()), 200) << "probe " << i;
}

TEST(Server, AtTheConnectionCapTheOldestIdleConnectionMakesRoom) {
  Options options = selfSigned();
  options.maxConnections = 8;
  auto server = startOrDie(options, echo());
  net::io_context ioc;
  auto held = holdIdle(ioc, server->port(), 20);
  // Every probe gets in, though the flood keeps the server at its cap.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(healthzStatus(server->port()), 200) << "probe " << i;
  // The first connections were closed to make room: reading one sees the end of the stream.
  EXPECT_TRUE(test::eventually([&] {
    beast::error_code ec;
    std::array<char, 1> byte{};
    held.front()->read_some(net::buffer(byte), ec);
    return ec == net::error::eof || ec == net::error::connection_reset;
  }));
}

// Raw bytes over TLS; returns everything the server sent before closing.
std::string rawExchange(uint16_t port, const std::string& bytes) {
  TlsConnection c(port);
  net::write(c.stream, net::buffer(bytes));
  std::string out;
  std::array<char, 4096> chunk{};
  for (;;) {
    beast::error_code ec;
    const size_t n = c.stream.read_some(net::buffer(chunk), ec);
    out.append(chunk.data(), n);
    if (ec) break;
  }
  return out;
}

TEST(Server, MalformedRequestsGetGoStyle400AndTheConnectionCloses) {
  auto server = startOrDie(selfSigned(), echo());
  const std::string kBadRequests[] = {
      "garbage\r\n\r\n",
      "GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
  };
  for (const std::string& bad : kBadRequests) {
    SCOPED_TRACE(bad);
    const std::string answer = rawExchange(server->port(), bad);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 Bad Request\r\n")) << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
    EXPECT_TRUE(answer.ends_with("\r\n\r\n400 Bad Request")) << answer;
  }
}

TEST(Server, Http11WithoutHostIs400AndHttp10WithoutHostIsServed) {
  auto server = startOrDie(selfSigned(), echo());
  const std::string missing = rawExchange(server->port(), "GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(missing.starts_with("HTTP/1.1 400 Bad Request\r\n")) << missing;
  EXPECT_TRUE(missing.ends_with("\r\n\r\n400 Bad Request: missing required Host header"))
      << missing;
  const std::string twice =
      rawExchange(server->port(), "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  EXPECT_TRUE(twice.ends_with("400 Bad Request: too many Host headers")) << twice;
  const std::string old = rawExchange(server->port(), "GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(old.starts_with("HTTP/1.0 200 OK\r\n")) << old;
}

TEST(Server, ABodyOverTheLimitIs413) {
  auto server = startOrDie(selfSigned(), echo());
  const std::string body(5000, 'x');
  const std::string answer = rawExchange(
      server->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + body);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413 Request Entity Too Large\r\n")) << answer;
  EXPECT_EQ(healthzStatus(server->port()), 200);
}

// Lowers RLIMIT_NOFILE's soft limit to the lowest free descriptor, so that no descriptor can be
// opened until it is restored.
class NoMoreDescriptors {
 public:
  NoMoreDescriptors() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    const int next = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor
    ::close(next);
    struct rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(next);
    ::setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~NoMoreDescriptors() { restore(); }
  NoMoreDescriptors(const NoMoreDescriptors&) = delete;
  NoMoreDescriptors& operator=(const NoMoreDescriptors&) = delete;
  void restore() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  struct rlimit saved_ {};
};

// The ASan build also runs UBSan, whose vptr check tests memory through a pipe on its slow path:
// with no descriptor left, it reports a false "invalid vptr" in whatever thread starts then.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BERTH_UBSAN_NEEDS_DESCRIPTORS 1
#endif
#endif

TEST(Server, AcceptFailingWithEmfileBacksOffLogsOnceAndRecovers) {
#ifdef BERTH_UBSAN_NEEDS_DESCRIPTORS
  GTEST_SKIP() << "runs in the TSan and optimised builds: UBSan needs the descriptors it takes";
#endif
  std::mutex mu;
  std::vector<std::string> lines;
  log::setSink([&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.emplace_back(line);
  });
  auto logged = [&](std::string_view text) {
    std::lock_guard<std::mutex> lock(mu);
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  auto server = startOrDie(selfSigned(), echo());
  net::io_context ioc;
  // Sockets are made first; connecting them needs no new descriptor, accepting them does.
  std::vector<std::unique_ptr<tcp::socket>> pending;
  for (int i = 0; i < 3; ++i) {
    pending.push_back(std::make_unique<tcp::socket>(ioc));
    pending.back()->open(tcp::v4());
  }
  const auto began = std::chrono::steady_clock::now();
  {
    NoMoreDescriptors limit;
    for (auto& socket : pending) {
      socket->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server->port()));
    }
    EXPECT_TRUE(test::eventually([&] { return logged("retrying with backoff") > 0; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_TRUE(test::eventually([&] { return healthzStatus(server->port()) == 200; }));
  EXPECT_TRUE(test::eventually([&] { return logged("Accepting serving connections again") > 0; }));
  log::setSink({});
  EXPECT_EQ(logged("retrying with backoff"), 1);
  // 5 ms doubling to 1 s: at most 8 tries in the first 1.3 s, then one a second (a busy loop
  // makes thousands). A loaded machine only makes fewer.
  std::string again;
  for (const std::string& l : lines) {
    if (l.find("Accepting serving connections again") != std::string::npos) again = l;
  }
  const auto at = again.find("failures=");
  ASSERT_NE(at, std::string::npos) << again;
  const long failures = std::stol(again.substr(at + 9));
  EXPECT_GE(failures, 1);
  EXPECT_LE(failures, 9 + static_cast<long>(seconds) + 2) << again;
}

TEST(Server, AHandlerThatThrowsAnswers500AndTheServerLives) {
  auto server = startOrDie(selfSigned(), [](const Request& request) -> Response {
    if (request.target == "/boom") throw std::runtime_error("boom");
    return Response{200, "text/plain", "fine"};
  });
  EXPECT_EQ(get(server->port(), "/boom").status, 500);
  EXPECT_EQ(get(server->port(), "/ok").body, "fine");
}

TEST(Server, FailsClearlyOnABusyPortOrBadAddress) {
  auto first = startOrDie(selfSigned(), echo());
  Options same = selfSigned();
  same.bindAddress = "127.0.0.1";
  same.port = first->port();
  auto second = Server::start(same, echo());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("cannot listen on 127.0.0.1:"), std::string::npos);
  Options bad = selfSigned();
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
  options.tls.files = TlsFiles{(dir / "tls.crt").string(), (dir / "tls.key").string()};
  auto server = startOrDie(options, echo());
  EXPECT_EQ(getTls(server->port(), "/livez", first.ca.certificatePem).body, "you asked for /livez");

  // Rotation: a new pair from another CA; the next connection is served with it.
  const test::TestPki second = test::makeTestPki();
  writeFile(dir / "tls.crt", second.server.certificatePem);
  writeFile(dir / "tls.key", second.server.privateKeyPem);
  EXPECT_EQ(getTls(server->port(), "/livez", second.ca.certificatePem).status, 200);
  EXPECT_THROW(getTls(server->port(), "/livez", first.ca.certificatePem), std::exception);

  // A half-written rotation (key not matching) keeps the last good pair, as does garbage.
  writeFile(dir / "tls.key", first.server.privateKeyPem);
  EXPECT_EQ(getTls(server->port(), "/livez", second.ca.certificatePem).status, 200);
  writeFile(dir / "tls.crt", "not a certificate");
  EXPECT_EQ(getTls(server->port(), "/livez", second.ca.certificatePem).status, 200);
  server->stop();
  std::filesystem::remove_all(dir);
}

TEST(Server, RejectsUnreadableOrUnparsableFilesNamingThem) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("berth-serving-bad-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const test::TestPki pki = test::makeTestPki();
  writeFile(dir / "tls.crt", pki.server.certificatePem);
  writeFile(dir / "tls.key", pki.client.privateKeyPem);
  writeFile(dir / "garbage", "not PEM");
  Options options;
  options.tls.files = TlsFiles{(dir / "tls.crt").string(), (dir / "tls.key").string()};
  auto server = Server::start(options, echo());
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("does not match --tls-cert-file"), std::string::npos);
  options.tls.files = TlsFiles{"/nonexistent.crt", "/nonexistent.key"};
  auto missing = Server::start(options, echo());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--tls-cert-file /nonexistent.crt: cannot be read");
  options.tls.files = TlsFiles{(dir / "garbage").string(), (dir / "tls.key").string()};
  auto garbage = Server::start(options, echo());
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(garbage.error().message.starts_with("--tls-cert-file " + (dir / "garbage").string()))
      << garbage.error().message;
  std::filesystem::remove_all(dir);
}

TEST(CertDir, WritesAPairOnceAndReusesIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("berth-certdir-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto first = selfSignedInDirectory(dir.string(), "berth", "localhost", {"127.0.0.1"});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->certFile, (dir / "berth.crt").string());
  EXPECT_EQ(first->keyFile, (dir / "berth.key").string());
  std::ifstream in(first->certFile);
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  auto again = selfSignedInDirectory(dir.string(), "berth", "localhost", {"127.0.0.1"});
  ASSERT_TRUE(again.ok());
  std::ifstream in2(again->certFile);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in2)), {}), written);
  EXPECT_EQ(std::filesystem::status(first->keyFile).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::remove_all(dir);
}

TEST(TlsFlags, ParsesUpstreamVersionNames) {
  EXPECT_EQ(*parseTlsVersion("VersionTLS12"), TLS1_2_VERSION);
  EXPECT_EQ(*parseTlsVersion("VersionTLS13"), TLS1_3_VERSION);
  EXPECT_EQ(*parseTlsVersion("VersionTLS10"), TLS1_VERSION);
  auto bad = parseTlsVersion("TLS12");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--tls-min-version: unknown tls version \"TLS12\"");
}

TEST(TlsFlags, MapsGoCipherSuiteNamesToOpenSsl) {
  EXPECT_EQ(*cipherListOf({"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                           "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "TLS_AES_128_GCM_SHA256"}),
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
  auto bad = cipherListOf({"TLS_FAKE"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--tls-cipher-suites: cipher suite TLS_FAKE not supported or doesn't exist");
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

TEST(HealthResponse, ExcludedChecksAreSkippedAndUnknownOnesWarned) {
  const std::vector<Check> checks{pingCheck(), failing("shutdown")};
  auto r = healthResponse("readyz", "/readyz?exclude=shutdown&verbose", checks);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "[+]ping ok\n[+]shutdown excluded: ok\nreadyz check passed\n");
  EXPECT_EQ(healthResponse("readyz", "/readyz?exclude=shutdown", checks)->body, "ok");
  auto unknown = healthResponse("readyz", "/readyz?exclude=shutdown&exclude=nope&verbose", checks);
  EXPECT_EQ(unknown->body,
            "[+]ping ok\n[+]shutdown excluded: ok\nwarn: some health checks cannot be excluded: "
            "no matches for \"nope\"\nreadyz check passed\n");
}

TEST(HealthResponse, OtherPathsAreNotThisEndpoints) {
  EXPECT_FALSE(healthResponse("livez", "/livezz", {pingCheck()}));
  EXPECT_FALSE(healthResponse("livez", "/metrics", {pingCheck()}));
}

}  // namespace
}  // namespace berth::serving
