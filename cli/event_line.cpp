#include "cli/event_line.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>

#include "common/sha256.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

// Finds a top-level "id" key. check_line() has already seen the opening '{', so a successful
// strict parse means the line is exactly one object.
class IdProbe final : public nlohmann::json_sax<json> {
 public:
  bool has_id() const { return has_id_; }

  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return nest(1); }
  bool end_object() override { return nest(-1); }
  bool start_array(std::size_t /*elements*/) override { return nest(1); }
  bool end_array() override { return nest(-1); }
  bool key(string_t& name) override {
    if (depth_ == 1 && name == "id") has_id_ = true;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) override {
    return false;
  }

 private:
  bool nest(int delta) {
    depth_ += delta;
    return true;
  }

  int depth_ = 0;
  bool has_id_ = false;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

LineCheck check_line(std::string_view line) {
  std::size_t first = 0;
  while (first < line.size() && is_space(line[first])) ++first;
  if (first == line.size()) return {LineShape::kBlank, false};
  if (line[first] != '{') return {LineShape::kOther, false};
  IdProbe probe;
  // strict = true: text after the object makes the line invalid.
  if (!json::sax_parse(line, &probe, json::input_format_t::json, true)) {
    return {LineShape::kOther, false};
  }
  return {LineShape::kObject, probe.has_id()};
}

std::string line_id(std::string_view line) { return "line:" + sha256_hex(line); }

std::string with_line_id(std::string_view line) {
  const std::size_t brace = line.find('{');
  std::size_t next = brace + 1;
  while (next < line.size() && is_space(line[next])) ++next;
  const bool empty_object = next < line.size() && line[next] == '}';
  std::string out;
  out.reserve(line.size() + 80);
  out.append(line.substr(0, brace + 1));
  out.append(R"("id":")").append(line_id(line)).append(empty_object ? R"(")" : R"(",)");
  out.append(line.substr(brace + 1));
  return out;
}

std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace reflectd::cli
