#include "http/static_files.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace reflectd::http {
namespace {

constexpr std::string_view kConsolePrefix = "/console/";

// Scripts, styles, images and API calls from the daemon only; uPlot and cytoscape set element
// styles, hence 'unsafe-inline' for styles (not for scripts).
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "
    "data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

std::string content_type_of(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".json", "application/json"},
      {".ico", "image/x-icon"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (name.ends_with(extension)) return std::string(type);
  }
  return "application/octet-stream";
}

StaticFiles StaticFiles::load(const std::string& dir) {
  StaticFiles out;
  std::error_code error;
  if (dir.empty() || !std::filesystem::is_directory(dir, error)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) throw std::runtime_error("console: cannot read " + entry.path().string());
    std::stringstream text;
    text << in.rdbuf();
    const std::string name = entry.path().filename().string();
    out.files_.emplace(name, Response(200, text.str(), content_type_of(name),
                                      {{"Content-Security-Policy", kPolicy},
                                       {"X-Content-Type-Options", "nosniff"},
                                       {"X-Frame-Options", "DENY"},
                                       {"Cache-Control", "no-cache"}}));
  }
  return out;
}

const Response* StaticFiles::find(std::string_view path) const {
  std::string_view name;
  if (path == "/") {
    name = "index.html";
  } else if (path.starts_with(kConsolePrefix)) {
    name = path.substr(kConsolePrefix.size());
  } else {
    return nullptr;
  }
  const auto it = files_.find(name);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace reflectd::http
