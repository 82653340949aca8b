#pragma once
// Builds ustar archives for the tests, hostile ones included: members are written as given,
// without the checks the packer and the server apply.

#include <gtest/gtest.h>

#include <string>

#include "scheduler/common/ustar.h"

namespace orch::testing_archive {

class ArchiveBuilder {
 public:
  ArchiveBuilder& file(const std::string& name, const std::string& data,
                       std::uint32_t mode = 0644) {
    add({name, ustar::Kind::file, mode, data.size(), ""});
    bytes_ += data + std::string(ustar::padding(data.size()), '\0');
    return *this;
  }
  ArchiveBuilder& dir(const std::string& name) {
    add({name, ustar::Kind::directory, 0755, 0, ""});
    return *this;
  }
  ArchiveBuilder& symlink(const std::string& name, const std::string& target) {
    add({name, ustar::Kind::symlink, 0777, 0, target});
    return *this;
  }
  // A header of any type flag (hard link '1', device '3', fifo '6', pax 'x', ...).
  ArchiveBuilder& typed(const std::string& name, char type, const std::string& link = "") {
    auto h = ustar::header({name, ustar::Kind::file, 0644, 0, link});
    EXPECT_TRUE(h.ok());
    std::string block = *h;
    block[156] = type;
    reseal(block);
    bytes_ += block;
    return *this;
  }
  ArchiveBuilder& raw(const std::string& bytes) {
    bytes_ += bytes;
    return *this;
  }
  std::string end() const { return bytes_ + ustar::end_of_archive(); }
  const std::string& so_far() const { return bytes_; }

  // Recomputes a header's checksum after a test changed it.
  static void reseal(std::string& block) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < 512; ++i) {
      sum += (i >= 148 && i < 156) ? 32 : static_cast<unsigned char>(block[i]);
    }
    char text[8];
    std::snprintf(text, sizeof text, "%06llo", static_cast<unsigned long long>(sum));
    block.replace(148, 6, text, 6);
    block[154] = '\0';
    block[155] = ' ';
  }

 private:
  void add(const ustar::Member& m) {
    auto h = ustar::header(m);
    ASSERT_TRUE(h.ok()) << h.error().message;
    bytes_ += *h;
  }
  std::string bytes_;
};

}  // namespace orch::testing_archive
