#pragma once
// UTF-8 validation (RFC 3629), for text that will be written as JSON: nlohmann::json::dump
// throws on invalid UTF-8, so every string a user gives (job specs, clusters files, names in
// URLs) is checked where it enters, and refused with the byte offset of the first bad byte.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace orch {

// The offset of the first byte that does not start or continue a well-formed UTF-8
// sequence, or nullopt when `text` is valid UTF-8. Refused as RFC 3629 requires: stray
// continuation bytes, 0xC0, 0xC1 and 0xF5..0xFF, overlong encodings, UTF-16 surrogates
// (U+D800..U+DFFF), code points above U+10FFFF and sequences cut short. A sequence that is
// cut short is reported at its first byte.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// `text` with every invalid sequence replaced by U+FFFD, for echoing untrusted names in
// messages that must stay valid UTF-8.
std::string to_valid_utf8(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a
// multi-byte sequence, for cutting long values short in messages.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

// What another system wrote (a site's reason for waiting: a tenant's cluster may write
// anything there) made fit to show in one line: valid UTF-8 (bad bytes as U+FFFD), every
// control character (C0, DEL, C1) and bidirectional override turned into a blank, runs of
// blanks made one, no blank at either end, and at most `max_bytes` bytes (cut at a character's
// start, then "...").
std::string shown_words(std::string_view text, std::size_t max_bytes);

}  // namespace orch
