// Fuzz target: YAML text through config::load_string(), the loader behind `reflectd
// --config`, `--check-config` and SIGHUP reloads (yaml-cpp, then validation against the key
// table). Checks: the only exception is config::ConfigError and its message names the
// origin; a config that loads satisfies every key's declared type and range; loading is
// deterministic. Seeds: fuzz/corpus/config_loader_fuzz/ (config/reflectd.yaml among them).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <variant>

#include "config/config.hpp"
#include "fuzz/fuzz_check.hpp"

namespace {

using reflectd::config::Config;
using reflectd::config::KeySpec;
using reflectd::config::KeyType;

bool one_of(std::string_view choices, const std::string& value) {
  while (true) {
    const auto bar = choices.find('|');
    if (choices.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) return false;
    choices.remove_prefix(bar + 1);
  }
}

void check_in_range(Config& config, const KeySpec& spec) {
  const std::string key(spec.path);
  switch (spec.type) {
    case KeyType::kString: {
      const auto& value = std::get<std::string& (*)(Config&)>(spec.field)(config);
      // Only keys whose default is "" (optional files such as security.*) may be empty.
      FUZZ_CHECK(!value.empty() || spec.default_yaml == "\"\"", "%s is empty", key.c_str());
      break;
    }
    case KeyType::kEnum: {
      const auto& value = std::get<std::string& (*)(Config&)>(spec.field)(config);
      FUZZ_CHECK(one_of(spec.choices, value), "%s = '%s'", key.c_str(), value.c_str());
      break;
    }
    case KeyType::kInteger: {
      const auto value = std::get<std::int64_t& (*)(Config&)>(spec.field)(config);
      FUZZ_CHECK(value >= spec.min && value <= spec.max, "%s = %lld", key.c_str(),
                 static_cast<long long>(value));
      break;
    }
    case KeyType::kReal: {
      const auto value = std::get<double& (*)(Config&)>(spec.field)(config);
      FUZZ_CHECK(std::isfinite(value) && value >= spec.real_min && value <= spec.real_max,
                 "%s = %g", key.c_str(), value);
      break;
    }
    case KeyType::kBoolean: break;
    case KeyType::kStringList:
    case KeyType::kEndpointList: {
      const auto& values = std::get<std::vector<std::string>& (*)(Config&)>(spec.field)(config);
      if (spec.type == KeyType::kEndpointList) {
        for (const auto& value : values) {
          FUZZ_CHECK(value.find("://") != std::string::npos, "%s endpoint '%s'", key.c_str(),
                     value.c_str());
        }
      }
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  Config config;
  try {
    config = reflectd::config::load_string(yaml, "<fuzz>");
  } catch (const reflectd::config::ConfigError& error) {
    const std::string message = error.what();
    FUZZ_CHECK(message.starts_with("<fuzz>") && message.size() > 8, "error '%s'", message.c_str());
    return 0;
  } catch (const std::exception& error) {
    FUZZ_CHECK(false, "not a ConfigError: %s", error.what());
  }
  for (const KeySpec& spec : reflectd::config::key_table()) check_in_range(config, spec);
  const Config again = reflectd::config::load_string(yaml, "<fuzz>");
  FUZZ_CHECK(reflectd::config::changed_keys(config, again).empty(), "loading is not deterministic");
  return 0;
}
