#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <stdexcept>

namespace reflectd {

void Sha256::FreeMd::operator()(evp_md_st* md) const { EVP_MD_free(md); }

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const { EVP_MD_CTX_free(context); }

Sha256::Sha256() : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), context_(EVP_MD_CTX_new()) {
  if (!md_ || !context_) throw std::runtime_error("libcrypto: no SHA-256 implementation");
}

Sha256::~Sha256() = default;

std::string Sha256::hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestInit_ex(context_.get(), md_.get(), nullptr) != 1 ||
      EVP_DigestUpdate(context_.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(context_.get(), digest.data(), &length) != 1) {
    throw std::runtime_error("EVP_Digest(sha256) failed");
  }
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(length) * 2, '\0');
  for (std::size_t i = 0; i < length; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0x0f];
  }
  return out;
}

std::string sha256_hex(std::string_view data) { return Sha256().hex(data); }

}  // namespace reflectd
