#pragma once
// A loopback TCP port for a child server (nats-server) that takes its port on the command line
// or in its config, for tests and benchmarks.
//
// Errors: throws std::runtime_error when no socket can be bound. Thread-safety: any thread.
// The port is free when the call returns; another process could still take it before the
// child binds it, which is why this is for tests and benchmarks only.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace reflectd {

/// The kernel's choice for 127.0.0.1 port 0, in host byte order.
inline int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace reflectd
