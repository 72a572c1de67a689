#pragma once
// SHA-256 through OpenSSL's EVP interface (libcrypto): used for event ids and content hashes.

#include <string>
#include <string_view>

namespace reflectd {

/// Returns the SHA-256 digest of `data` as 64 lowercase hex characters.
/// Thread-safe (no shared state). Throws std::runtime_error only if libcrypto fails internally.
std::string sha256_hex(std::string_view data);

}  // namespace reflectd
