#include "tests/support/file_digest.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

namespace integ {
namespace {
struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;
}  // namespace

void write_random_file(const std::string& path, std::uint64_t size, std::uint64_t seed) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) throw std::runtime_error("cannot create " + path);
  // xorshift64*: fast, and every 8-byte word differs, so no block is all zeros.
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  std::vector<std::uint64_t> buf(1 << 17);  // 1 MiB
  std::uint64_t left = size;
  while (left > 0) {
    for (auto& w : buf) {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      w = x * 0x2545F4914F6CDD1Dull;
    }
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size() * 8));
    if (std::fwrite(buf.data(), 1, n, f.get()) != n) throw std::runtime_error("short write to " + path);
    left -= n;
  }
  if (std::fflush(f.get()) != 0) throw std::runtime_error("flush failed for " + path);
}

struct Sha256::Ctx {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md{EVP_MD_CTX_new(), EVP_MD_CTX_free};
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) { EVP_DigestInit_ex(ctx_->md.get(), EVP_sha256(), nullptr); }
Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t n) { EVP_DigestUpdate(ctx_->md.get(), data, n); }

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md.get(), md, &len);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

std::string sha256_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw std::runtime_error("cannot read " + path);
  Sha256 sha;
  std::vector<unsigned char> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) sha.update(buf.data(), n);
  if (std::ferror(f.get())) throw std::runtime_error("read error on " + path);
  return sha.hex();
}

long long file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return st.st_size;
}

}  // namespace integ
