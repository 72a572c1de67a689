#include "cli/line_reader.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "cli/event_line.hpp"

namespace reflectd::cli {
namespace {

std::optional<std::uint64_t> regular_file_size(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return std::nullopt;
  return size;
}

}  // namespace

LineReader::LineReader(std::vector<std::string> paths) : paths_(std::move(paths)) {
  if (paths_.empty()) paths_.emplace_back("-");
  bool sizes_known = true;
  for (const auto& path : paths_) {
    names_.push_back(path == "-" ? "<stdin>" : path);
    if (path == "-") {
      sizes_known = false;
      continue;
    }
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
      throw std::runtime_error(path + " is a directory");
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    const auto size = regular_file_size(path);
    sizes_known = sizes_known && size.has_value();
    total_bytes_ += size.value_or(0);
  }
  if (!sizes_known) total_bytes_ = 0;
}

bool LineReader::open_next() {
  if (current_ >= paths_.size()) return false;
  line_number_ = 0;
  if (paths_[current_] == "-") {
    in_ = &std::cin;
    return true;
  }
  file_.open(paths_[current_], std::ios::binary);
  if (!file_) {
    throw std::runtime_error("cannot open " + paths_[current_] + ": " + std::strerror(errno));
  }
  in_ = &file_;
  return true;
}

std::optional<InputLine> LineReader::next() {
  InputLine line;
  for (;;) {
    if (in_ == nullptr && !open_next()) return std::nullopt;
    if (std::getline(*in_, line.text)) break;
    if (in_->bad()) throw std::runtime_error("cannot read " + names_[current_]);
    if (file_.is_open()) file_.close();
    in_ = nullptr;
    ++current_;
  }
  line.file = static_cast<std::uint32_t>(current_);
  line.number = ++line_number_;
  line.text.resize(strip_cr(line.text).size());
  return line;
}

}  // namespace reflectd::cli
