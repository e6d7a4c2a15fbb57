#include "tests/support/certs.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <memory>
#include <stdexcept>

namespace berth::test {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using CertPtr = std::unique_ptr<X509, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;

void check(bool ok, const char* what) {
  if (!ok) {
    throw std::runtime_error(std::string("test PKI: ") + what + " failed");
  }
}

KeyPtr newKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EC key generation");
  return key;
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string keyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  return bioText(bio.get());
}

std::string certPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "PEM_write_bio_X509");
  return bioText(bio.get());
}

KeyPtr readKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(key != nullptr, "PEM_read_bio_PrivateKey");
  return key;
}

CertPtr readCert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  check(cert != nullptr, "PEM_read_bio_X509");
  return cert;
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr, "X509V3_EXT_conf_nid");
  check(X509_add_ext(cert, ext, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` with subject CN (and O when given), signed by issuer/issuerKey (itself
// when null).
CertPtr makeCert(EVP_PKEY* key, const std::string& cn, const std::string& org, X509* issuer,
                 EVP_PKEY* issuerKey, long serial) {
  CertPtr cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!org.empty()) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (issuer == nullptr) {
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    addExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    addExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    addExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  }
  check(X509_sign(cert.get(), issuerKey != nullptr ? issuerKey : key, EVP_sha256()) > 0,
        "X509_sign");
  return cert;
}

long nextSerial() {
  static std::atomic<long> serial{1000};
  return ++serial;
}

}  // namespace

CertifiedKey makeCa(const std::string& commonName) {
  KeyPtr key = newKey();
  CertPtr cert = makeCert(key.get(), commonName, "", nullptr, nullptr, nextSerial());
  return {certPem(cert.get()), keyPem(key.get())};
}

CertifiedKey issueClientCertificate(const CertifiedKey& ca, const std::string& commonName,
                                    const std::string& organization) {
  KeyPtr caKey = readKey(ca.privateKeyPem);
  CertPtr caCert = readCert(ca.certificatePem);
  KeyPtr key = newKey();
  CertPtr cert =
      makeCert(key.get(), commonName, organization, caCert.get(), caKey.get(), nextSerial());
  addExtension(cert.get(), caCert.get(), NID_ext_key_usage, "clientAuth");
  check(X509_sign(cert.get(), caKey.get(), EVP_sha256()) > 0, "X509_sign");
  return {certPem(cert.get()), keyPem(key.get())};
}

CertifiedKey issueServerCertificate(const CertifiedKey& ca, const std::string& commonName,
                                    const std::string& subjectAltNames) {
  KeyPtr caKey = readKey(ca.privateKeyPem);
  CertPtr caCert = readCert(ca.certificatePem);
  KeyPtr key = newKey();
  CertPtr server = makeCert(key.get(), commonName, "", caCert.get(), caKey.get(), nextSerial());
  if (!subjectAltNames.empty()) {
    addExtension(server.get(), caCert.get(), NID_subject_alt_name, subjectAltNames.c_str());
  }
  addExtension(server.get(), caCert.get(), NID_ext_key_usage, "serverAuth");
  check(X509_sign(server.get(), caKey.get(), EVP_sha256()) > 0, "X509_sign");
  return {certPem(server.get()), keyPem(key.get())};
}

TestPki makeTestPki() {
  TestPki pki;
  pki.ca = makeCa("berth-test-ca");
  pki.server = issueServerCertificate(pki.ca, "berth-apiserver", "IP:127.0.0.1,DNS:localhost");
  pki.client = issueClientCertificate(pki.ca, "berth-test", "system:masters");
  return pki;
}

}  // namespace berth::test
