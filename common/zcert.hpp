#pragma once
// CURVE key files in the ZeroMQ certificate format (CZMQ zcert, ZPL text, RFC 4 of
// rfc.zeromq.org), so keys made by `reflectctl keygen`, `zcert` or pyzmq's
// zmq.auth.create_certificates interoperate:
//
//   #   ZeroMQ CURVE **Secret** Certificate
//   metadata
//   curve
//       public-key = "<40 Z85 characters>"
//       secret-key = "<40 Z85 characters>"
//
// The public file has the same layout without secret-key.
//
// Error policy: read_cert() and write_cert() throw std::runtime_error naming the file (and the
// line for syntax errors). Thread-safety: pure functions; generate_cert() calls libzmq.

#include <string>
#include <string_view>

namespace reflectd {

/// A CURVE keypair as Z85 text (40 characters each). `secret_key` is empty for a public
/// certificate.
struct CurveCert {
  std::string public_key;
  std::string secret_key;
};

/// True when `key` is 40 characters of the Z85 alphabet (a 32-byte CURVE key).
bool is_z85_key(std::string_view key);

/// A fresh keypair from libzmq (zmq_curve_keypair). Throws std::runtime_error when libzmq
/// was built without CURVE.
CurveCert generate_cert();

/// Parses a certificate file. With `need_secret` a missing secret-key is an error. The
/// public key of a secret certificate must match its secret key (zmq_curve_public).
CurveCert read_cert(const std::string& path, bool need_secret);

/// Writes `cert` to `path` (mode 0600) and its public half to `path + ".pub"` (mode 0644).
/// Refuses to replace existing files unless `force`. Files are written to a temporary name
/// and renamed, so a crash never leaves half a key.
void write_cert_pair(const std::string& path, const CurveCert& cert, bool force);

}  // namespace reflectd
