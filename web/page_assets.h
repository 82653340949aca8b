#pragma once
// The status page's files (web/page/), embedded into the binary at build time by
// web/page/embed_files.cmake: the page works on a machine with no internet.

#include <span>
#include <string_view>

namespace orch {

struct PageAsset {
  std::string_view path;          // "/" or "/ui/<file>"
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

// Every file of the page, the page itself ("/") first.
std::span<const PageAsset> page_assets();

}  // namespace orch
