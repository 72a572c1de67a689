#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace reflectd::config {
namespace {

std::string where(std::string_view origin, const YAML::Mark& mark) {
  std::ostringstream out;
  out << origin;
  if (!mark.is_null()) out << ':' << (mark.line + 1) << ':' << (mark.column + 1);
  return out.str();
}

[[noreturn]] void fail(std::string_view origin, const YAML::Mark& mark, std::string_view key,
                       std::string_view problem) {
  throw ConfigError(where(origin, mark) + ": " + std::string(key) + ": " + std::string(problem));
}

const KeySpec* find_key(std::string_view path) {
  for (const KeySpec& spec : key_table()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

bool is_section(std::string_view prefix) {
  return std::any_of(key_table().begin(), key_table().end(), [&](const KeySpec& spec) {
    return spec.path.size() > prefix.size() && spec.path.starts_with(prefix) &&
           spec.path[prefix.size()] == '.';
  });
}

std::vector<std::string_view> split_choices(std::string_view choices) {
  std::vector<std::string_view> out;
  while (!choices.empty()) {
    const auto bar = choices.find('|');
    out.push_back(choices.substr(0, bar));
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return out;
}

// Returns an empty string when `endpoint` is acceptable to bind or connect, else the problem.
std::string endpoint_problem(std::string_view endpoint) {
  constexpr std::size_t kIpcPathMax = 107;  // sun_path minus the terminating NUL.
  if (endpoint.starts_with("ipc://")) {
    const auto path = endpoint.substr(6);
    if (path.empty()) return "ipc endpoint needs a path";
    if (path.size() > kIpcPathMax) return "ipc path is longer than 107 bytes";
    return {};
  }
  if (endpoint.starts_with("inproc://")) {
    return endpoint.size() > 9 ? std::string{} : "inproc endpoint needs a name";
  }
  if (endpoint.starts_with("tcp://")) {
    const auto address = endpoint.substr(6);
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return "tcp endpoint needs host:port";
    const auto port = address.substr(colon + 1);
    if (port == "*") return {};
    int value = 0;
    const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || ptr != port.data() + port.size() || value < 1 || value > 65535) {
      return "tcp port must be 1-65535 or *";
    }
    return {};
  }
  return "must start with tcp://, ipc:// or inproc://";
}

std::string format_real(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::vector<std::string> read_list(const YAML::Node& node, std::string_view origin,
                                   std::string_view key) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) fail(origin, node.Mark(), key, "must be a list of strings");
  for (const auto& item : node) {
    if (!item.IsScalar()) fail(origin, item.Mark(), key, "list items must be strings");
    out.push_back(item.Scalar());
  }
  return out;
}

void apply(Config& config, const KeySpec& spec, const YAML::Node& node, std::string_view origin) {
  const std::string_view key = spec.path;
  switch (spec.type) {
    case KeyType::kString: {
      // A string whose default is written quoted (an optional file, an endpoint that "" turns
      // off) may be empty: "not set".
      const bool may_be_empty = spec.default_yaml.starts_with('"');
      if (!node.IsScalar() || (node.Scalar().empty() && !may_be_empty)) {
        fail(origin, node.Mark(), key,
             may_be_empty ? "must be a string" : "must be a non-empty string");
      }
      std::get<std::string& (*)(Config&)>(spec.field)(config) = node.Scalar();
      return;
    }
    case KeyType::kEnum: {
      const auto choices = split_choices(spec.choices);
      if (!node.IsScalar() ||
          std::find(choices.begin(), choices.end(), node.Scalar()) == choices.end()) {
        fail(origin, node.Mark(), key, "must be one of " + std::string(spec.choices));
      }
      std::get<std::string& (*)(Config&)>(spec.field)(config) = node.Scalar();
      return;
    }
    case KeyType::kInteger: {
      std::int64_t value = 0;
      const std::string text = node.IsScalar() ? node.Scalar() : std::string{};
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        fail(origin, node.Mark(), key, "must be an integer");
      }
      if (value < spec.min || value > spec.max) {
        fail(origin, node.Mark(), key,
             "must be between " + std::to_string(spec.min) + " and " + std::to_string(spec.max));
      }
      std::get<std::int64_t& (*)(Config&)>(spec.field)(config) = value;
      return;
    }
    case KeyType::kReal: {
      double value = 0;
      const std::string text = node.IsScalar() ? node.Scalar() : std::string{};
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() ||
          !std::isfinite(value)) {
        fail(origin, node.Mark(), key, "must be a number");
      }
      if (value < spec.real_min || value > spec.real_max) {
        fail(
            origin, node.Mark(), key,
            "must be between " + format_real(spec.real_min) + " and " + format_real(spec.real_max));
      }
      std::get<double& (*)(Config&)>(spec.field)(config) = value;
      return;
    }
    case KeyType::kBoolean: {
      bool value = false;
      if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
        fail(origin, node.Mark(), key, "must be true or false");
      }
      std::get<bool& (*)(Config&)>(spec.field)(config) = value;
      return;
    }
    case KeyType::kStringList:
    case KeyType::kEndpointList: {
      auto values = read_list(node, origin, key);
      if (spec.type == KeyType::kEndpointList) {
        std::size_t index = 0;
        for (const auto& value : values) {
          if (auto problem = endpoint_problem(value); !problem.empty()) {
            fail(origin, node[index].Mark(), key, "'" + value + "': " + problem);
          }
          ++index;
        }
      }
      std::get<std::vector<std::string>& (*)(Config&)>(spec.field)(config) = std::move(values);
      return;
    }
  }
}

void visit(Config& config, const YAML::Node& map, const std::string& prefix,
           std::string_view origin) {
  for (const auto& entry : map) {
    const YAML::Node& key_node = entry.first;
    if (!key_node.IsScalar()) fail(origin, key_node.Mark(), prefix, "keys must be strings");
    const std::string path = prefix.empty() ? key_node.Scalar() : prefix + "." + key_node.Scalar();
    if (const KeySpec* spec = find_key(path)) {
      apply(config, *spec, entry.second, origin);
    } else if (is_section(path)) {
      if (entry.second.IsNull()) continue;
      if (!entry.second.IsMap()) fail(origin, entry.second.Mark(), path, "must be a mapping");
      visit(config, entry.second, path, origin);
    } else {
      fail(origin, key_node.Mark(), path, "unknown key");
    }
  }
}

Config load_node(const YAML::Node& root, std::string_view origin) {
  Config config = defaults();
  if (root.IsNull()) return config;
  if (!root.IsMap()) fail(origin, root.Mark(), "(top level)", "must be a mapping of sections");
  visit(config, root, "", origin);
  return config;
}

std::string value_text(const Config& config, const KeySpec& spec) {
  auto& mutable_config = const_cast<Config&>(config);  // NOLINT: field accessors are shared.
  return std::visit(
      [&](auto accessor) -> std::string {
        const auto& value = accessor(mutable_config);
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(value);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_real(value);
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else {
          std::string out = "[";
          for (std::size_t i = 0; i < value.size(); ++i) {
            out += (i ? ", \"" : "\"") + value[i] + "\"";
          }
          return out + "]";
        }
      },
      spec.field);
}

void wrap_comment(std::ostringstream& out, std::string_view text, std::string_view indent) {
  constexpr std::size_t kWidth = 92;
  std::string line;
  std::istringstream words{std::string(text)};
  std::string word;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > kWidth) {
      out << indent << "# " << line << '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out << indent << "# " << line << '\n';
}

std::string describe_type(const KeySpec& spec) {
  std::string text;
  switch (spec.type) {
    case KeyType::kString: text = "string"; break;
    case KeyType::kEnum: text = "one of " + std::string(spec.choices); break;
    case KeyType::kInteger:
      text = "integer " + std::to_string(spec.min) + ".." + std::to_string(spec.max);
      if (!spec.unit.empty()) text += " " + std::string(spec.unit);
      break;
    case KeyType::kReal:
      text = "number " + format_real(spec.real_min) + ".." + format_real(spec.real_max);
      if (!spec.unit.empty()) text += " " + std::string(spec.unit);
      break;
    case KeyType::kBoolean: text = "true|false"; break;
    case KeyType::kStringList: text = "list of strings"; break;
    case KeyType::kEndpointList: text = "list of ZeroMQ endpoints"; break;
  }
  return text + (spec.live ? "; applied on reload (SIGHUP)" : "; needs a restart");
}

}  // namespace

Config defaults() {
  Config config;
  for (const KeySpec& spec : key_table()) {
    apply(config, spec, YAML::Load(std::string(spec.default_yaml)), "<built-in default>");
  }
  return config;
}

Config load_file(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(path + ": cannot open the configuration file");
  } catch (const YAML::Exception& error) {
    throw ConfigError(where(path, error.mark) + ": invalid YAML: " + error.msg);
  }
  return load_node(root, path);
}

Config load_string(std::string_view yaml, std::string_view origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    throw ConfigError(where(origin, error.mark) + ": invalid YAML: " + error.msg);
  }
  return load_node(root, origin);
}

std::string render_example() {
  std::ostringstream out;
  out << "# reflectd configuration. Generated from the key table (config/keys.cpp) by\n"
         "# `reflectd --print-default-config`; every value shown is the built-in default.\n"
         "# Check a file with `reflectd --check-config --config FILE`.\n";
  std::vector<std::string_view> open_sections;
  for (const KeySpec& spec : key_table()) {
    std::vector<std::string_view> parts;
    for (std::string_view rest = spec.path;;) {
      const auto dot = rest.find('.');
      parts.push_back(rest.substr(0, dot));
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    const std::vector<std::string_view> sections(parts.begin(), parts.end() - 1);
    std::size_t common = 0;
    while (common < sections.size() && common < open_sections.size() &&
           sections[common] == open_sections[common]) {
      ++common;
    }
    for (std::size_t depth = common; depth < sections.size(); ++depth) {
      if (depth == 0) out << '\n';
      out << std::string(depth * 2, ' ') << sections[depth] << ":\n";
    }
    open_sections = sections;
    const std::string indent(sections.size() * 2, ' ');
    wrap_comment(out, spec.description, indent);
    out << indent << "# " << describe_type(spec) << '\n';
    out << indent << parts.back() << ": " << spec.default_yaml << "\n";
  }
  return out.str();
}

std::vector<std::string_view> changed_keys(const Config& a, const Config& b) {
  std::vector<std::string_view> out;
  for (const KeySpec& spec : key_table()) {
    if (value_text(a, spec) != value_text(b, spec)) out.push_back(spec.path);
  }
  return out;
}

std::string resolve_store_path(const std::string& path, const char* state_directory) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || state_directory == nullptr || *state_directory == '\0') return path;
  // $STATE_DIRECTORY may list several directories separated by ':'; the first is ours.
  std::string_view dirs(state_directory);
  return (std::filesystem::path(std::string(dirs.substr(0, dirs.find(':')))) / p).string();
}

}  // namespace reflectd::config
