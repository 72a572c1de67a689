#pragma once
// Who reads: the caller's clearance and namespaces, as every read applies them in its SQL
// (docs/SECURITY.md). The daemon builds one from bus::Principal; the read library does not
// depend on the bus.

#include <string>
#include <vector>

namespace reflectd::recall {

struct ReadScope {
  /// Seed 002 sensitivity rank the caller may read in full: 0 public .. 4 hyper. Rows one
  /// rank above come back redacted, rows two or more above are never read.
  int clearance = 4;
  bool all_namespaces = true;
  std::vector<std::string> namespaces;  ///< When !all_namespaces.
};

/// "[redacted: above your clearance]": the text shown in place of a redacted record.
inline constexpr const char* kRedacted = "[redacted: above your clearance]";

}  // namespace reflectd::recall
