#pragma once
// The files reflectd writes next to its database (the database, -wal, -shm, a rollback journal)
// hold agents' memories: they are created with mode 0600 under this guard.

#include <sys/stat.h>

namespace reflectd::store {

/// Sets the process's umask for its lifetime and restores the previous one. The umask is
/// process-wide: not thread-safe against other threads creating files; used at startup and by
/// offline commands only.
class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : previous_(::umask(mask)) {}
  ~UmaskGuard() { ::umask(previous_); }
  UmaskGuard(const UmaskGuard&) = delete;
  UmaskGuard& operator=(const UmaskGuard&) = delete;
  UmaskGuard(UmaskGuard&&) = delete;
  UmaskGuard& operator=(UmaskGuard&&) = delete;

 private:
  mode_t previous_;
};

}  // namespace reflectd::store
