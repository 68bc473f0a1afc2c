// KeyedHmac: a keyed EVP_MAC context made once, duplicated once per thread, and
// re-initialised with no key for each computation (OpenSSL then reuses the key's
// precomputed inner and outer states).
#include "cache/keyed_hmac.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <atomic>
#include <stdexcept>

namespace nfsgw::cache {
namespace {

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};
using MacPtr = std::unique_ptr<EVP_MAC, MacDeleter>;
using MacCtxPtr = std::unique_ptr<EVP_MAC_CTX, MacDeleter>;

std::atomic<std::uint64_t> next_instance{1};

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string("HMAC-SHA256: ") + what); }

/// This thread's context, for the KeyedHmac whose instance number it records.
struct ThreadContext {
  std::uint64_t instance = 0;
  MacCtxPtr ctx;
};
thread_local ThreadContext this_thread_ctx;

}  // namespace

struct KeyedHmac::Template {
  MacPtr mac;
  MacCtxPtr keyed;
};

KeyedHmac::KeyedHmac(std::span<const std::uint8_t> key)
    : template_(std::make_unique<Template>()), instance_(next_instance.fetch_add(1)) {
  template_->mac.reset(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!template_->mac) fail("OpenSSL has no HMAC");
  template_->keyed.reset(EVP_MAC_CTX_new(template_->mac.get()));
  if (!template_->keyed) fail("out of memory");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (!EVP_MAC_init(template_->keyed.get(), key.data(), key.size(), params)) fail("cannot set the key");
}

KeyedHmac::~KeyedHmac() {
  // Another thread's context of this key is freed when that thread next uses a
  // different key or exits; the instance number keeps it from being reused.
  if (this_thread_ctx.instance == instance_) this_thread_ctx = {};
}

KeyedHmac::Digest KeyedHmac::operator()(const void* data, std::size_t n) const {
  ThreadContext& t = this_thread_ctx;
  if (t.instance != instance_ || !t.ctx) {
    t.ctx.reset(EVP_MAC_CTX_dup(template_->keyed.get()));
    if (!t.ctx) fail("out of memory");
    t.instance = instance_;
  } else if (!EVP_MAC_init(t.ctx.get(), nullptr, 0, nullptr)) {
    fail("cannot reset the context");
  }
  Digest out{};
  std::size_t len = 0;
  if (!EVP_MAC_update(t.ctx.get(), static_cast<const unsigned char*>(data), n) ||
      !EVP_MAC_final(t.ctx.get(), out.data(), &len, out.size()) || len != out.size()) {
    t = {};
    fail("computation failed");
  }
  return out;
}

KeyedHmac::Digest hmac_sha256(std::span<const std::uint8_t> key, const void* data, std::size_t n) {
  return KeyedHmac(key)(data, n);
}

}  // namespace nfsgw::cache
