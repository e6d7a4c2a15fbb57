#include "pkg/serving/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <array>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

namespace berth::serving {
namespace {

struct OpenSslFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using PrivateKey = std::unique_ptr<EVP_PKEY, OpenSslFree>;
using Certificate = std::unique_ptr<X509, OpenSslFree>;
using MemoryBio = std::unique_ptr<BIO, OpenSslFree>;

// Go's names of the TLS 1.2 suites and OpenSSL's for the same suite.
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kCipherSuites{{
    {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    // Go's older names of the two ChaCha20 suites.
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
}};

constexpr std::array<std::string_view, 3> kTls13Suites{
    "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"};

util::Error sslError(std::string_view what) {
  return util::Error{util::ErrorCode::Internal,
                     "generating a self-signed certificate: " + std::string(what) + " failed"};
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

bool addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

// An unsigned certificate for `key` named `commonName`, issued by `issuer` (itself when null).
Certificate makeCertificate(EVP_PKEY* key, const std::string& commonName, X509* issuer,
                            long serial) {
  Certificate cert(X509_new());
  if (cert == nullptr) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  return cert;
}

}  // namespace

util::Result<int> parseTlsVersion(std::string_view name) {
  if (name == "VersionTLS10") return TLS1_VERSION;
  if (name == "VersionTLS11") return TLS1_1_VERSION;
  if (name == "VersionTLS12" || name.empty()) return TLS1_2_VERSION;
  if (name == "VersionTLS13") return TLS1_3_VERSION;
  return util::invalidArgument("--tls-min-version: unknown tls version \"" + std::string(name) +
                               "\"");
}

util::Result<std::string> cipherListOf(const std::vector<std::string>& goNames) {
  std::string list;
  for (const std::string& name : goNames) {
    bool known = false;
    for (std::string_view tls13 : kTls13Suites) known = known || name == tls13;
    for (const auto& [go, openssl] : kCipherSuites) {
      if (name == go) {
        known = true;
        if (!list.empty()) list += ':';
        list += openssl;
      }
    }
    if (!known) {
      return util::invalidArgument("--tls-cipher-suites: cipher suite " + name +
                                   " not supported or doesn't exist");
    }
  }
  return list;
}

util::Result<CertificatePem> generateSelfSigned(const std::string& host,
                                                const std::vector<std::string>& ips) {
  const std::string stamp = std::to_string(std::time(nullptr));
  PrivateKey caKey(EVP_EC_gen("P-256"));
  PrivateKey key(EVP_EC_gen("P-256"));
  if (caKey == nullptr || key == nullptr) return sslError("EC key generation");
  Certificate ca = makeCertificate(caKey.get(), host + "-ca@" + stamp, nullptr, 1);
  if (ca == nullptr ||
      !addExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !addExtension(ca.get(), ca.get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      X509_sign(ca.get(), caKey.get(), EVP_sha256()) <= 0) {
    return sslError("signing the CA");
  }
  Certificate leaf = makeCertificate(key.get(), host + "@" + stamp, ca.get(), 2);
  std::string names = "DNS:" + host;
  for (const std::string& ip : ips) names += ",IP:" + ip;
  if (leaf == nullptr ||
      !addExtension(leaf.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !addExtension(leaf.get(), ca.get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment") ||
      !addExtension(leaf.get(), ca.get(), NID_ext_key_usage, "serverAuth") ||
      !addExtension(leaf.get(), ca.get(), NID_subject_alt_name, names) ||
      X509_sign(leaf.get(), caKey.get(), EVP_sha256()) <= 0) {
    return sslError("signing the serving certificate");
  }
  MemoryBio chain(BIO_new(BIO_s_mem()));
  MemoryBio keyText(BIO_new(BIO_s_mem()));
  if (chain == nullptr || keyText == nullptr || PEM_write_bio_X509(chain.get(), leaf.get()) != 1 ||
      PEM_write_bio_X509(chain.get(), ca.get()) != 1 ||
      PEM_write_bio_PrivateKey(keyText.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return sslError("PEM encoding");
  }
  return CertificatePem{bioText(chain.get()), bioText(keyText.get())};
}

util::Result<TlsFiles> selfSignedInDirectory(const std::string& dir, const std::string& pairName,
                                             const std::string& host,
                                             const std::vector<std::string>& ips) {
  TlsFiles files{dir + "/" + pairName + ".crt", dir + "/" + pairName + ".key"};
  if (std::ifstream(files.certFile) && std::ifstream(files.keyFile)) return files;
  auto generated = generateSelfSigned(host, ips);
  if (!generated.ok()) return generated.error();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return util::invalidArgument("--cert-dir " + dir + ": " + ec.message());
  auto write = [](const std::string& path, const std::string& text,
                  mode_t mode) -> util::Result<void> {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return util::invalidArgument("--cert-dir: cannot write " + path);
    ::chmod(path.c_str(), mode);
    return {};
  };
  if (auto w = write(files.keyFile, generated->privateKey, 0600); !w.ok()) return w.error();
  if (auto w = write(files.certFile, generated->certificate, 0644); !w.ok()) return w.error();
  return files;
}

}  // namespace berth::serving
