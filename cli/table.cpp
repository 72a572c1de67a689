#include "cli/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>

namespace reflectd::cli {

using json = nlohmann::json;

namespace {

bool continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

std::string pad(std::string_view text, std::size_t width, Align align) {
  const std::size_t used = display_width(text);
  const std::string blanks(width > used ? width - used : 0, ' ');
  return align == Align::kLeft ? std::string(text) + blanks : blanks + std::string(text);
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char byte) { return !continuation(byte); }));
}

std::string clip(std::string_view text, std::size_t max_width) {
  std::string line;
  line.reserve(text.size());
  for (const char byte : text) {
    const auto code = static_cast<unsigned char>(byte);
    line.push_back(code < 0x20 || code == 0x7F ? ' ' : byte);
  }
  if (display_width(line) <= max_width) return line;
  if (max_width == 0) return {};
  // Keep max_width - 1 code points, then the ellipsis.
  std::size_t kept = 0;
  std::size_t end = 0;
  while (end < line.size()) {
    if (!continuation(line[end])) {
      if (kept == max_width - 1) break;
      ++kept;
    }
    ++end;
  }
  line.resize(end);
  return line + "…";
}

std::string cell(const json& object, std::string_view key) {
  const json* value = member(object, key);
  if (value == nullptr) return "-";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

std::string fixed(const json& object, std::string_view key, int decimals) {
  const json* value = member(object, key);
  if (value == nullptr || !value->is_number()) return "-";
  return fmt::format("{:.{}f}", value->get<double>(), decimals);
}

std::string rfc3339_utc(std::int64_t epoch_us) {
  const auto seconds = static_cast<std::time_t>(epoch_us / 1'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer.data();
}

void Table::add(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].max_width > 0) cells[i] = clip(cells[i], columns_[i].max_width);
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> widths;
  for (const Column& column : columns_) widths.push_back(display_width(column.header));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  }
  std::string out;
  const auto line = [&](const auto& text_of) {
    std::string text;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) text += "  ";
      text += pad(text_of(i), widths[i], columns_[i].align);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + '\n';
  };
  line([&](std::size_t i) -> std::string_view { return columns_[i].header; });
  for (const auto& row : rows_) line([&](std::size_t i) -> std::string_view { return row[i]; });
  return out;
}

}  // namespace reflectd::cli
