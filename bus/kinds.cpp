#include "bus/kinds.hpp"

#include <array>
#include <cctype>

namespace reflectd::bus {
namespace {

using store::StorageClass;

constexpr std::array<KindInfo, 25> kKinds{{
    // LedgerMind (seed 000); semantic per KIND_STORAGE_MAP.
    {"decision", StorageClass::kSemantic},
    {"proposal", StorageClass::kSemantic},
    {"intervention", StorageClass::kSemantic},
    {"constraint", StorageClass::kSemantic},
    {"assumption", StorageClass::kSemantic},
    {"error", StorageClass::kEpisodic},
    {"config_change", StorageClass::kEpisodic},
    {"result", StorageClass::kEpisodic},
    {"context_snapshot", StorageClass::kEpisodic},
    {"context_injection", StorageClass::kEpisodic},
    {"task", StorageClass::kEpisodic},
    {"call", StorageClass::kEpisodic},
    {"commit_change", StorageClass::kEpisodic},
    {"prompt", StorageClass::kEpisodic},
    {"reflection_summary", StorageClass::kEpisodic},
    // SHODH memory types (seed 004) that LedgerMind lacks.
    {"observation", StorageClass::kEpisodic},
    {"learning", StorageClass::kEpisodic},
    {"discovery", StorageClass::kEpisodic},
    {"pattern", StorageClass::kEpisodic},
    {"context", StorageClass::kEpisodic},
    {"code_edit", StorageClass::kEpisodic},
    {"file_access", StorageClass::kEpisodic},
    {"search", StorageClass::kEpisodic},
    {"command", StorageClass::kEpisodic},
    {"conversation", StorageClass::kEpisodic},
}};

constexpr std::array<std::string_view, 10> kSources{
    "user", "agent", "system", "reflection_engine", "bridge",     // LedgerMind
    "api",  "file",  "web",    "ai_generated",      "inferred"};  // SHODH

}  // namespace

std::string normalise_enum_spelling(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 4);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool upper = std::isupper(c) != 0;
    if (upper && i > 0 && std::islower(static_cast<unsigned char>(text[i - 1])) != 0) {
      out.push_back('_');
    }
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

std::optional<KindInfo> find_kind(std::string_view text) {
  const std::string key = normalise_enum_spelling(text);
  for (const KindInfo& kind : kKinds) {
    if (kind.name == key) return kind;
  }
  return std::nullopt;
}

std::optional<std::string_view> find_source(std::string_view text) {
  const std::string key = normalise_enum_spelling(text);
  for (std::string_view source : kSources) {
    if (source == key) return source;
  }
  return std::nullopt;
}

std::string_view kind_list() {
  return "decision|proposal|intervention|constraint|assumption|error|config_change|result|"
         "context_snapshot|context_injection|task|call|commit_change|prompt|reflection_summary|"
         "observation|learning|discovery|pattern|context|code_edit|file_access|search|command|"
         "conversation";
}

std::string_view source_list() {
  return "user|agent|system|reflection_engine|bridge|api|file|web|ai_generated|inferred";
}

}  // namespace reflectd::bus
