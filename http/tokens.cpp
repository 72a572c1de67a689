#include "http/tokens.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/sha256.hpp"

namespace reflectd::http {

bool is_sha256_hex(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Tokens Tokens::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config::ConfigError(path + ": cannot open the HTTP tokens file");
  std::stringstream text;
  text << in.rdbuf();
  return load_string(text.str(), path);
}

Tokens Tokens::load_string(std::string_view yaml, std::string_view origin) {
  static constexpr bus::PrincipalListFormat kFormat{
      "tokens", "sha256", is_sha256_hex,
      "must be the SHA-256 of the token, 64 lowercase hex digits (printf %s TOKEN | sha256sum)"};
  Tokens out;
  for (bus::Principal& p : bus::load_principal_list(yaml, origin, kFormat)) {
    std::string hash = std::move(p.public_key);
    p.public_key = "token:" + hash.substr(0, 12);
    out.by_hash_.emplace(std::move(hash), std::move(p));
  }
  return out;
}

const bus::Principal* Tokens::find(std::string_view token) const {
  Sha256 sha256;  // one fetch of OpenSSL's SHA-256 a request: a few µs
  const auto it = by_hash_.find(sha256.hex(token));
  return it == by_hash_.end() ? nullptr : &it->second;
}

}  // namespace reflectd::http
