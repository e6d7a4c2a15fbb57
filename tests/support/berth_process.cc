#include "tests/support/berth_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

extern char** environ;

namespace berth::test {

using json = nlohmann::json;
using namespace std::chrono_literals;

util::Result<void> writeKubeconfig(const std::string& path, const std::string& serverUrl) {
  const json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "e2e"}, {"cluster", {{"server", serverUrl}}}}}},
      {"users", {{{"name", "e2e"}, {"user", json::object()}}}},
      {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"user", "e2e"}}}}}},
      {"current-context", "e2e"}};
  std::ofstream out(path, std::ios::trunc);
  out << config.dump();
  out.close();
  if (!out)
    return util::Error{util::ErrorCode::Unavailable, "kubeconfig " + path + ": write failed"};
  return {};
}

std::optional<std::string> logField(std::string_view line, std::string_view key) {
  const std::string marker = " " + std::string(key) + "=";
  const size_t at = line.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t start = at + marker.size();
  if (start >= line.size()) return std::string();
  if (line[start] != '"') {
    const size_t end = line.find(' ', start);
    return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
  }
  // klog quotes strings as JSON does: find the closing quote past any escaped ones.
  size_t end = start + 1;
  while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
  if (end >= line.size()) return std::nullopt;
  const json value = json::parse(line.substr(start, end - start + 1), nullptr, false);
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

namespace {

std::string fingerprintOf(X509* cert) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (X509_digest(cert, EVP_sha256(), digest, &size) != 1) return "";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

}  // namespace

std::string certificateFingerprint(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = bio != nullptr ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr;
  std::string out = cert != nullptr ? fingerprintOf(cert) : "";
  X509_free(cert);
  BIO_free(bio);
  return out;
}

util::Result<HttpReply> httpsGet(uint16_t port, const std::string& path,
                                 const std::string& authorization,
                                 std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& headers,
                                 const CertifiedKey* clientCertificate) {
  const std::string url = "https://127.0.0.1:" + std::to_string(port) + path;
  auto failed = [&url](const std::string& what) {
    return util::Error{util::ErrorCode::Unavailable, "GET " + url + ": " + what};
  };
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed(std::string("socket: ") + std::strerror(errno));
  struct Closer {
    int fd;
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    ~Closer() {
      if (ssl != nullptr) SSL_free(ssl);
      if (ctx != nullptr) SSL_CTX_free(ctx);
      ::close(fd);
    }
  } closer{fd};
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return failed(std::string("connect: ") + std::strerror(errno));
  }
  // The daemon's certificate is self-signed unless a test gives it one: the test reads who it
  // names instead of verifying it.
  closer.ctx = SSL_CTX_new(TLS_client_method());
  if (closer.ctx != nullptr && clientCertificate != nullptr) {
    const std::string& pem = clientCertificate->certificatePem;
    const std::string& keyPem = clientCertificate->privateKeyPem;
    BIO* certBio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* cert =
        certBio != nullptr ? PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr) : nullptr;
    BIO* keyBio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
    EVP_PKEY* key =
        keyBio != nullptr ? PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr) : nullptr;
    const bool loaded = cert != nullptr && key != nullptr &&
                        SSL_CTX_use_certificate(closer.ctx, cert) == 1 &&
                        SSL_CTX_use_PrivateKey(closer.ctx, key) == 1;
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(certBio);
    BIO_free(keyBio);
    if (!loaded) return failed("cannot load the client certificate");
  }
  closer.ssl = closer.ctx != nullptr ? SSL_new(closer.ctx) : nullptr;
  if (closer.ssl == nullptr) return failed("SSL_new failed");
  SSL_set_fd(closer.ssl, fd);
  SSL_set_tlsext_host_name(closer.ssl, "localhost");
  if (SSL_connect(closer.ssl) != 1) return failed("TLS handshake failed");
  HttpReply out;
  if (X509* cert = SSL_get1_peer_certificate(closer.ssl)) {
    char name[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof name);
    out.peerCommonName = name;
    out.peerFingerprint = fingerprintOf(cert);
    X509_free(cert);
  }
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nConnection: close\r\n";
  if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
  for (const std::string& header : headers) request += header + "\r\n";
  request += "\r\n";
  // A write the server cut short (it refused an oversized request) still leaves its answer
  // to read.
  SSL_write(closer.ssl, request.data(), static_cast<int>(request.size()));
  std::string reply;
  char buffer[4096];
  for (;;) {
    const int n = SSL_read(closer.ssl, buffer, sizeof buffer);
    if (n <= 0) break;  // the server closes after a Content-Length body
    reply.append(buffer, static_cast<size_t>(n));
  }
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody".
  const size_t headerEnd = reply.find("\r\n\r\n");
  if (!reply.starts_with("HTTP/1.") || reply.size() < 12 || headerEnd == std::string::npos) {
    return failed("not an HTTP reply: " + reply.substr(0, 200));
  }
  out.code = std::atoi(reply.c_str() + 9);
  out.body = reply.substr(headerEnd + 4);
  return out;
}

util::Result<std::unique_ptr<BerthProcess>> BerthProcess::spawn(
    const std::string& binary, const std::vector<std::string>& args, std::string logPath) {
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return util::Error{util::ErrorCode::Unavailable,
                       "spawning " + binary + ": " + std::strerror(err)};
  }
  return std::unique_ptr<BerthProcess>(new BerthProcess(pid, std::move(logPath)));
}

BerthProcess::~BerthProcess() {
  if (!exit_code_) kill();
}

void BerthProcess::reaped(int status) {
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool BerthProcess::running() {
  if (exit_code_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  reaped(status);
  return false;
}

std::optional<int> BerthProcess::waitForExit(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
  return exit_code_;
}

int BerthProcess::terminate(std::chrono::milliseconds limit) {
  if (running()) ::kill(pid_, SIGTERM);
  if (auto code = waitForExit(limit)) return *code;
  kill();
  return -1;
}

void BerthProcess::kill() {
  if (exit_code_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_) reaped(status);
}

std::string BerthProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string BerthProcess::logTail(size_t maxChars) const {
  std::string text = log();
  if (text.size() > maxChars) text = "..." + text.substr(text.size() - maxChars);
  return text;
}

std::optional<std::string> BerthProcess::waitForLogLine(const std::vector<std::string>& needles,
                                                        std::chrono::milliseconds limit) {
  auto find = [&]() -> std::optional<std::string> {
    std::istringstream lines(log());
    for (std::string line; std::getline(lines, line);) {
      if (lines.eof()) break;  // a line still being written
      bool all = true;
      for (const std::string& needle : needles) all = all && line.find(needle) != std::string::npos;
      if (all) return line;
    }
    return std::nullopt;
  };
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    // Checked after the exit is seen, so a line written just before exiting is not missed.
    const bool exited = !running();
    if (auto line = find()) return line;
    if (exited || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace berth::test
