#include "cli/message_builder.hpp"

#include "cli/event_line.hpp"

namespace reflectd::cli {

MessageBuilder::MessageBuilder(LineReader& reader, BatchLimits limits)
    : reader_(reader), limits_(limits) {}

std::optional<MessageBuilder::Line> MessageBuilder::take() {
  if (held_) {
    std::optional<Line> line = std::move(held_);
    held_.reset();
    return line;
  }
  while (std::optional<InputLine> input = reader_.next()) {
    const LineCheck check = check_line(input->text);
    if (check.shape == LineShape::kBlank) continue;
    Line line{{input->file, input->number},
              {},
              check.shape == LineShape::kObject,
              input->text.size() + 1};
    // The id makes resends and re-runs idempotent: without one the daemon derives it from
    // fields that include the receive time when the event has no timestamp.
    line.text = line.object && !check.has_id ? with_line_id(input->text) : std::move(input->text);
    return line;
  }
  return std::nullopt;
}

OutgoingMessage MessageBuilder::alone(Line&& line) {
  OutgoingMessage message;
  message.payload = std::move(line.text);
  message.events.push_back(line.where);
  message.input_bytes = line.input_bytes;
  message.raw_line = !line.object;
  return message;
}

std::optional<OutgoingMessage> MessageBuilder::next() {
  std::optional<Line> first = take();
  if (!first) return std::nullopt;
  if (!first->object || limits_.max_events <= 1) return alone(std::move(*first));

  OutgoingMessage message;
  message.payload = "[" + first->text;
  message.events.push_back(first->where);
  message.input_bytes = first->input_bytes;
  while (message.events.size() < limits_.max_events) {
    std::optional<Line> line = take();
    if (!line) break;
    // +2: the comma and the closing bracket.
    if (!line->object || message.payload.size() + line->text.size() + 2 > limits_.max_bytes) {
      held_ = std::move(line);
      break;
    }
    message.payload.append(",").append(line->text);
    message.events.push_back(line->where);
    message.input_bytes += line->input_bytes;
  }
  message.payload.append("]");
  return message;
}

}  // namespace reflectd::cli
