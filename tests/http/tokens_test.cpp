#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "http/tokens.hpp"

using reflectd::http::Tokens;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    Tokens::load_string(yaml, "t.yaml");
  } catch (const reflectd::config::ConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("http tokens: a token is found by its SHA-256, with the entry's rights") {
  // printf %s secret-one | sha256sum
  const Tokens tokens = Tokens::load_string(
      "tokens:\n"
      "  - sha256: ea77193cc4e6f18656f3130e296203880c4b9b3772afc855211b82fdd46e9185\n"
      "    agent_id: reader\n"
      "    namespaces: [alpha, beta]\n"
      "    max_sensitivity: low\n"
      "  - sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "    agent_id: admin\n"
      "    namespaces: [\"*\"]\n"
      "    max_sensitivity: hyper\n"
      "    admin: true\n",
      "t.yaml");
  REQUIRE(tokens.size() == 2);
  const reflectd::bus::Principal* p = tokens.find("secret-one");
  REQUIRE(p != nullptr);
  CHECK(p->agent_id == "reader");
  CHECK(p->public_key == "token:ea77193cc4e6");
  CHECK_FALSE(p->is_local_operator());
  CHECK_FALSE(p->admin);
  CHECK(p->may_use("beta"));
  CHECK_FALSE(p->may_use("gamma"));
  CHECK(p->clearance == 1);
  // The second entry is the empty token's hash.
  const reflectd::bus::Principal* admin = tokens.find("");
  REQUIRE(admin != nullptr);
  CHECK(admin->admin);
  CHECK(admin->all_namespaces);
  // The hash itself is not a token.
  CHECK(tokens.find("ea77193cc4e6f18656f3130e296203880c4b9b3772afc855211b82fdd46e9185") == nullptr);
  CHECK(tokens.find("secret-two") == nullptr);
}

TEST_CASE("http tokens: malformed files name the line, the field and the rule") {
  CHECK(error_of("tokens:\n  - sha256: abc\n    agent_id: a\n    namespaces: [x]\n"
                 "    max_sensitivity: low\n") ==
        "t.yaml:2:13: tokens[0].sha256: must be the SHA-256 of the token, 64 lowercase hex "
        "digits (printf %s TOKEN | sha256sum)");
  CHECK(error_of("tokens:\n  - sha256: "
                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                 "    namespaces: [x]\n    max_sensitivity: low\n") ==
        "t.yaml:2:5: tokens[0]: agent_id is required");
  CHECK(error_of("keys: []\n") == "t.yaml:1:1: keys: unknown field (known: tokens)");
  CHECK_THROWS_WITH(Tokens::load_file("/nonexistent/tokens.yaml"),
                    "/nonexistent/tokens.yaml: cannot open the HTTP tokens file");
}
