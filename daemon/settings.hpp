#pragma once
// Maps the validated configuration onto the libraries' option structs. The daemon, the
// benchmarks and tests build their options here, so a config key means the same everywhere.

#include <string>

#include "config/config.hpp"
#include "store/lifecycle.hpp"
#include "store/writer.hpp"

namespace reflectd::daemon {

/// The decay profiles of `decay.episodic.*` and `decay.semantic.*`.
store::DecayProfiles decay_profiles(const config::DecayConfig& decay);

/// Writer options for the database at `path` (already resolved, see resolve_store_path()).
store::WriterOptions writer_options(const config::Config& config, const std::string& path);

}  // namespace reflectd::daemon
