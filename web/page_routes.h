#pragma once
// The status page's routes: GET / (the page) and GET /ui/{file} (its scripts, styles and uPlot),
// answered from the files embedded at build time (page_assets.h). Open routes: the page holds
// no data; it asks for an API token and reads everything through the REST API with it.

#include "web/router.h"

namespace orch {

// The page's Content-Security-Policy: its own scripts, styles and API only; no inline code,
// no frames, no form posts, no other origin.
inline constexpr const char* kPageContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

RouteTable page_routes();

}  // namespace orch
