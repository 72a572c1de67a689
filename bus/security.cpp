#include "bus/security.hpp"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace reflectd::bus {
namespace {

using config::ConfigError;

std::string where(std::string_view origin, const YAML::Mark& mark) {
  std::ostringstream out;
  out << origin;
  if (!mark.is_null()) out << ':' << (mark.line + 1) << ':' << (mark.column + 1);
  return out.str();
}

[[noreturn]] void fail(std::string_view origin, const YAML::Node& node, std::string_view what) {
  throw ConfigError(where(origin, node.Mark()) + ": " + std::string(what));
}

// The wire format's namespace rule (docs/WIRE.md).
bool valid_namespace(std::string_view ns) {
  if (ns.empty() || ns.size() > 64) return false;
  return std::all_of(ns.begin(), ns.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == ':' ||
           c == '-';
  });
}

std::string scalar(std::string_view origin, const YAML::Node& node, std::string_view field) {
  if (!node.IsScalar()) fail(origin, node, std::string(field) + ": must be a string");
  return node.Scalar();
}

void parse_namespaces(std::string_view origin, const YAML::Node& value, const std::string& label,
                      Principal& p) {
  if (!value.IsSequence() || value.size() == 0) {
    fail(origin, value,
         label + ": must be a non-empty list of namespaces, or [\"*\"] for every namespace");
  }
  p.all_namespaces = false;
  for (const auto& item : value) {
    const std::string ns = scalar(origin, item, label);
    if (ns == "*") {
      if (value.size() != 1)
        fail(origin, item, label + ": \"*\" (every namespace) must be the only entry");
      p.all_namespaces = true;
    } else if (!valid_namespace(ns)) {
      fail(origin, item,
           label + ": '" + ns + "' is not a namespace (1-64 characters of [A-Za-z0-9._:-])");
    } else {
      p.namespaces.push_back(ns);
    }
  }
}

Principal parse_entry(std::string_view origin, const YAML::Node& entry, std::size_t index,
                      const PrincipalListFormat& format) {
  const std::string at = std::string(format.list) + "[" + std::to_string(index) + "]";
  const std::string id_field(format.id_field);
  if (!entry.IsMap())
    fail(origin, entry,
         at + ": must be a mapping with " + id_field + ", agent_id, namespaces, max_sensitivity");
  Principal p;
  p.admin = false;
  bool have_key = false, have_agent = false, have_ns = false, have_level = false;
  for (const auto& field : entry) {
    const std::string name = field.first.Scalar();
    const YAML::Node& value = field.second;
    const std::string label = at + "." + name;
    if (name == id_field) {
      p.public_key = scalar(origin, value, label);
      if (!format.valid_id(p.public_key))
        fail(origin, value, label + ": " + std::string(format.id_rule));
      have_key = true;
    } else if (name == "agent_id") {
      p.agent_id = scalar(origin, value, label);
      if (p.agent_id.empty() || p.agent_id.size() > 256)
        fail(origin, value, label + ": must be 1 to 256 characters");
      have_agent = true;
    } else if (name == "namespaces") {
      parse_namespaces(origin, value, label, p);
      have_ns = true;
    } else if (name == "max_sensitivity") {
      const std::string level = scalar(origin, value, label);
      const auto rank = sensitivity_rank(level);
      if (!rank)
        fail(origin, value, label + ": must be one of public|low|medium|high|hyper (seed 002)");
      p.clearance = *rank;
      have_level = true;
    } else if (name == "admin") {
      if (!value.IsScalar() || (value.Scalar() != "true" && value.Scalar() != "false")) {
        fail(origin, value, label + ": must be true or false");
      }
      p.admin = value.Scalar() == "true";
    } else {
      fail(origin, field.first,
           label + ": unknown field (known: " + id_field +
               ", agent_id, namespaces, max_sensitivity, admin)");
    }
  }
  const auto missing = [&](bool have, const std::string& what) {
    if (!have) fail(origin, entry, at + ": " + what + " is required");
  };
  missing(have_key, id_field);
  missing(have_agent, "agent_id");
  missing(have_ns, "namespaces");
  missing(have_level, "max_sensitivity");
  return p;
}

// "tcp://HOST:PORT" -> HOST without IPv6 brackets.
std::string tcp_host(std::string_view endpoint) {
  std::string_view rest = endpoint.substr(6);
  if (const auto semi = rest.find(';'); semi != std::string_view::npos)
    rest = rest.substr(semi + 1);
  const auto colon = rest.rfind(':');
  std::string_view host = colon == std::string_view::npos ? rest : rest.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::string(host);
}

void check_binds(const SecuritySettings& s, std::string_view key,
                 const std::vector<std::string>& endpoints) {
  if (s.curve || s.insecure) return;
  for (const auto& endpoint : endpoints) {
    if (is_tcp(endpoint) && !is_loopback_tcp(endpoint)) {
      throw ConfigError(std::string(key) + ": endpoint " + endpoint +
                        " binds a non-loopback address without CURVE; set "
                        "security.curve_secret_key_file and security.authorized_keys_file, or "
                        "security.insecure: true to accept unauthenticated clients");
    }
  }
}

// bus.subscribe_server_keys against bus.subscribe (docs/SECURITY.md); fills
// s.subscribe_server_keys when CURVE is on.
void check_subscribe_keys(SecuritySettings& s, const config::Config& config) {
  const auto& endpoints = config.bus.subscribe;
  const auto& entries = config.bus.subscribe_server_keys;
  const auto is_set = [](const std::string& entry) { return !entry.empty(); };
  if (!entries.empty() && entries.size() != endpoints.size()) {
    throw ConfigError("bus.subscribe_server_keys: has " + std::to_string(entries.size()) +
                      " entries but bus.subscribe has " + std::to_string(endpoints.size()) +
                      " endpoints; give one per endpoint, in the same order (\"\" for ipc/inproc)");
  }
  if (!s.curve) {
    if (std::any_of(entries.begin(), entries.end(), is_set)) {
      throw ConfigError(
          "bus.subscribe_server_keys: publisher keys need CURVE; set "
          "security.curve_secret_key_file (the daemon's keypair, used as the client key) "
          "and security.authorized_keys_file");
    }
    return;
  }
  s.subscribe_server_keys.assign(endpoints.size(), std::string{});
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const std::string& endpoint = endpoints[i];
    const std::string entry = i < entries.size() ? entries[i] : std::string{};
    const std::string at = "bus.subscribe_server_keys[" + std::to_string(i) + "]";
    if (!is_tcp(endpoint)) {
      if (!entry.empty()) {
        throw ConfigError(at + ": endpoint " + endpoint +
                          " is not tcp: CURVE applies to tcp endpoints only (ipc/inproc publishers "
                          "are the local operator); use \"\"");
      }
      continue;
    }
    if (entry.empty()) {
      if (s.insecure) continue;
      throw ConfigError("bus.subscribe: endpoint " + endpoint +
                        ": with CURVE the daemon connects to a tcp publisher as a CURVE client and "
                        "needs the publisher's public key: set " +
                        at +
                        " (40 Z85 characters or its certificate file), or security.insecure: true "
                        "to read it without CURVE as the local operator");
    }
    std::string key;
    try {
      key = resolve_public_key(entry);
    } catch (const std::runtime_error& error) {
      throw ConfigError(at + ": " + error.what());
    }
    if (s.keys->find(key) == nullptr) {
      throw ConfigError(
          at + ": the publisher key " + key + " of endpoint " + endpoint +
          " is not in the authorized keys (" + config.security.authorized_keys_file +
          "); add an entry for it: its agent_id, namespaces and max_sensitivity apply "
          "to the events read from that endpoint");
    }
    s.subscribe_server_keys[i] = std::move(key);
  }
}

}  // namespace

bool Principal::may_use(std::string_view ns) const {
  return all_namespaces || std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end();
}

std::string Principal::namespace_list() const {
  if (all_namespaces) return "*";
  std::string out;
  for (const auto& ns : namespaces) out += (out.empty() ? "" : ", ") + ns;
  return out;
}

AuthorizedKeys AuthorizedKeys::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open the authorized-keys file");
  std::stringstream text;
  text << in.rdbuf();
  return load_string(text.str(), path);
}

std::vector<Principal> load_principal_list(std::string_view yaml, std::string_view origin,
                                           const PrincipalListFormat& format) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    throw ConfigError(where(origin, error.mark) + ": invalid YAML: " + error.msg);
  }
  const std::string list(format.list);
  if (!root.IsMap()) fail(origin, root, "must be a mapping with a \"" + list + "\" list");
  for (const auto& field : root) {
    if (field.first.Scalar() != list)
      fail(origin, field.first, field.first.Scalar() + ": unknown field (known: " + list + ")");
  }
  const YAML::Node entries = root[list];
  if (!entries || !(entries.IsSequence() || entries.IsNull()))
    fail(origin, root, list + ": must be a list of entries");
  std::vector<Principal> out;
  std::set<std::string, std::less<>> seen;
  std::size_t index = 0;
  for (const auto& entry : entries) {
    Principal p = parse_entry(origin, entry, index, format);
    if (!seen.insert(p.public_key).second) {
      fail(origin, entry,
           list + "[" + std::to_string(index) + "]." + std::string(format.id_field) +
               ": listed twice");
    }
    out.push_back(std::move(p));
    ++index;
  }
  return out;
}

AuthorizedKeys AuthorizedKeys::load_string(std::string_view yaml, std::string_view origin) {
  static constexpr PrincipalListFormat kFormat{"keys", "public_key", is_z85_key,
                                               "must be a CURVE public key, 40 Z85 characters"};
  AuthorizedKeys out;
  for (Principal& p : load_principal_list(yaml, origin, kFormat)) {
    std::string key = p.public_key;
    out.by_key_.emplace(std::move(key), std::move(p));
  }
  for (const auto& [key, principal] : out.by_key_) {
    const auto [it, added] = out.by_agent_.emplace(principal.agent_id, key);
    if (!added) it->second.clear();  // which rights would apply is ambiguous
  }
  return out;
}

const Principal* AuthorizedKeys::find_agent(std::string_view agent_id) const {
  const auto it = by_agent_.find(agent_id);
  return it == by_agent_.end() || it->second.empty() ? nullptr : find(it->second);
}

const Principal* AuthorizedKeys::find(std::string_view public_key) const {
  const auto it = by_key_.find(public_key);
  return it == by_key_.end() ? nullptr : &it->second;
}

SecuritySettings load_security(const config::Config& config) {
  SecuritySettings s;
  const auto& c = config.security;
  s.insecure = c.insecure;
  if (c.curve_secret_key_file.empty() != c.authorized_keys_file.empty()) {
    throw ConfigError(
        "security: curve_secret_key_file and authorized_keys_file go together (CURVE needs the "
        "server key and the list of client keys); set both or neither");
  }
  if (!c.curve_secret_key_file.empty()) {
    try {
      s.server = read_cert(c.curve_secret_key_file, true);
    } catch (const std::runtime_error& error) {
      throw ConfigError(std::string("security.curve_secret_key_file: ") + error.what());
    }
    s.keys =
        std::make_shared<const AuthorizedKeys>(AuthorizedKeys::load_file(c.authorized_keys_file));
    s.curve = true;
  }
  check_binds(s, "bus.ingest", config.bus.ingest);
  check_binds(s, "bus.push", config.bus.push);
  check_binds(s, "bus.notify", config.bus.notify);
  check_binds(s, "bus.control", config.bus.control);
  check_subscribe_keys(s, config);
  return s;
}

std::string resolve_public_key(const std::string& entry) {
  if (is_z85_key(entry)) return entry;
  try {
    return read_cert(entry, false).public_key;
  } catch (const std::runtime_error& error) {
    throw std::runtime_error("'" + entry +
                             "' is neither a CURVE public key (40 Z85 characters) nor a readable "
                             "certificate file: " +
                             error.what());
  }
}

bool is_tcp(std::string_view endpoint) { return endpoint.starts_with("tcp://"); }

bool is_loopback_tcp(std::string_view endpoint) {
  if (!is_tcp(endpoint)) return false;
  const std::string host = tcp_host(endpoint);
  if (host == "localhost" || host == "lo") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::string authorize_event(store::EventRecord& event, const Principal& principal) {
  if (principal.is_local_operator()) return {};
  if (!principal.may_use(event.ns)) {
    return "namespace: agent '" + principal.agent_id + "' may not write to namespace '" + event.ns +
           "' (authorized: " + principal.namespace_list() + ")";
  }
  const int rank = sensitivity_rank(event.sensitivity).value_or(kMaxClearance);
  if (rank > principal.clearance) {
    return "sensitivity: '" + event.sensitivity + "' is above the max_sensitivity '" +
           std::string(kSensitivityLevels[principal.clearance]) + "' of agent '" +
           principal.agent_id + "'";
  }
  if (!event.agent_id.empty() && event.agent_id != principal.agent_id) {
    // Never trusted, but kept: the claim may matter to whoever investigates it.
    // The decoder wrote metadata_json, so it parses; the event path still never throws.
    nlohmann::json metadata = event.metadata_json.empty()
                                  ? nlohmann::json::object()
                                  : nlohmann::json::parse(event.metadata_json, nullptr, false);
    if (metadata.is_object()) {
      metadata["_claimed_agent_id"] = event.agent_id;
      event.metadata_json = metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  event.agent_id = principal.agent_id;
  return {};
}

}  // namespace reflectd::bus
