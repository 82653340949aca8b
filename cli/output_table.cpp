#include "cli/output_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace orch {
namespace {

// Display width in code points (UTF-8 continuation bytes do not count).
std::size_t width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string clean(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  return text;
}

std::string number(double value, int precision) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, value);
  std::string out = buffer;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

}  // namespace

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), headers_.size()));
  for (auto& c : cells) c = clean(std::move(c));
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(headers_.size(), 0);
  for (std::size_t i = 0; i < headers_.size(); ++i) widths[i] = width(headers_[i]);
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(row[i]));
    }
  }
  const auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string& text = i < row.size() ? row[i] : std::string();
      line += text;
      if (i + 1 < widths.size()) line += std::string(widths[i] - width(text) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

const nlohmann::json& member(const nlohmann::json& obj, const std::string& key) {
  static const nlohmann::json null_value;
  if (!obj.is_object()) return null_value;
  auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

std::string cell(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return number(value.get<double>(), 3);
  return value.dump();
}

std::string field(const nlohmann::json& obj, const std::string& key) {
  return cell(member(obj, key));
}

std::string decimal(const nlohmann::json& value, int precision) {
  if (!value.is_number()) return "-";
  return number(value.get<double>(), precision);
}

std::string percent(const nlohmann::json& value) {
  if (!value.is_number()) return "-";
  return number(value.get<double>() * 100.0, 1) + "%";
}

std::string timestamp(const nlohmann::json& ms) {
  if (!ms.is_number() || ms.get<double>() <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(ms.get<double>() / 1000.0);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &tm);
  return buffer;
}

const nlohmann::json& items(const nlohmann::json& body, const std::string& key) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (body.is_array()) return body;
  const nlohmann::json& list = member(body, key);
  return list.is_array() ? list : empty;
}

std::string text(const nlohmann::json& obj, const std::string& key) {
  const auto& value = member(obj, key);
  return value.is_string() ? value.get<std::string>() : "";
}

}  // namespace orch
