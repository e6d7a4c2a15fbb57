#include "pkg/serving/x509.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <utility>
#include <vector>

namespace berth::serving {
namespace {

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(STACK_OF(X509) * p) const { sk_X509_pop_free(p, X509_free); }
};
using OwnedX509 = std::unique_ptr<X509, X509Free>;

OwnedX509 fromDer(const std::string& der) {
  const auto* data = reinterpret_cast<const unsigned char*>(der.data());
  return OwnedX509(d2i_X509(nullptr, &data, static_cast<long>(der.size())));
}

}  // namespace

struct CertificatePool::Impl {
  Impl() = default;
  ~Impl() { X509_STORE_free(store); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  X509_STORE* store = X509_STORE_new();
};

CertificatePool::CertificatePool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CertificatePool::~CertificatePool() = default;

util::Result<CertificatePoolPtr> CertificatePool::fromPem(std::string_view pem,
                                                          std::string_view what) {
  auto impl = std::make_unique<Impl>();
  std::unique_ptr<BIO, X509Free> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (impl->store == nullptr || bio == nullptr) {
    return util::Error{util::ErrorCode::Internal, std::string(what) + ": out of memory"};
  }
  size_t count = 0;
  for (;;) {
    OwnedX509 cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) break;
    X509_STORE_add_cert(impl->store, cert.get());
    ++count;
  }
  // The loop ends on the first block that is not a certificate: it must be the end of the text.
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  const bool atEnd = ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  if (count == 0 || (err != 0 && !atEnd)) {
    return util::invalidArgument(std::string(what) + ": data does not contain any valid RSA or " +
                                 "ECDSA certificates");
  }
  return CertificatePoolPtr(new CertificatePool(std::move(impl)));
}

std::optional<std::string> CertificatePool::verify(const PeerCertificate& peer) const {
  if (peer.chainDer.empty()) return "no client certificate";
  OwnedX509 leaf = fromDer(peer.chainDer.front());
  std::unique_ptr<STACK_OF(X509), X509Free> intermediates(sk_X509_new_null());
  if (leaf == nullptr || intermediates == nullptr) return "x509: malformed certificate";
  for (size_t i = 1; i < peer.chainDer.size(); ++i) {
    OwnedX509 cert = fromDer(peer.chainDer[i]);
    if (cert == nullptr || sk_X509_push(intermediates.get(), cert.get()) == 0) {
      return "x509: malformed certificate";
    }
    static_cast<void>(cert.release());  // the stack owns it now
  }
  std::unique_ptr<X509_STORE_CTX, X509Free> ctx(X509_STORE_CTX_new());
  if (ctx == nullptr ||
      X509_STORE_CTX_init(ctx.get(), impl_->store, leaf.get(), intermediates.get()) != 1) {
    return "x509: verification could not start";
  }
  // The leaf must be good for client authentication (Go: ExtKeyUsageClientAuth).
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) == 1) return std::nullopt;
  const int code = X509_STORE_CTX_get_error(ctx.get());
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "x509: certificate signed by unknown authority";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "x509: certificate has expired or is not yet valid";
    case X509_V_ERR_INVALID_PURPOSE:
      return "x509: certificate specifies an incompatible key usage";
    default:
      return std::string("x509: ") + X509_verify_cert_error_string(code);
  }
}

}  // namespace berth::serving
