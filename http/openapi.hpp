#pragma once
// GET /v1/openapi.json: the HTTP API described in OpenAPI 3.1 (spec.openapis.org/oas/v3.1.0),
// generated from the command table (model/commands.hpp) so that a command added there is
// described here by itself: a POST operation for each daemon command with its request fields
// as the body's JSON Schema, a GET operation with them as query parameters for those that are
// not admin, POST /v1/events (ingest) and GET /v1/events/{id}, bearer security, and the error
// responses of http/api.hpp.
//
// Pure; thread-safe.

#include <nlohmann/json.hpp>

namespace reflectd::http {

/// The document; the test hooks' routes only when `test_hooks`.
nlohmann::json openapi_document(bool test_hooks);

}  // namespace reflectd::http
