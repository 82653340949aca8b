#include "web/page_routes.h"

#include <cstdio>
#include <functional>
#include <string>

#include "web/page_assets.h"

namespace orch {
namespace {

// A validator per file, so that a browser revalidates with If-None-Match and gets a 304.
std::string etag_of(const PageAsset& asset) {
  char text[24];
  std::snprintf(text, sizeof text, "\"%016zx\"", std::hash<std::string_view>{}(asset.body));
  return text;
}

HttpResponse serve(const HttpRequest& request, const std::string& path) {
  for (const PageAsset& asset : page_assets()) {
    if (asset.path != path) continue;
    const std::string etag = etag_of(asset);
    HttpResponse r;
    r.content_type = std::string(asset.content_type);
    r.headers.emplace_back("ETag", etag);
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.headers.emplace_back("Content-Security-Policy", kPageContentSecurityPolicy);
    if (request.header("if-none-match") == etag) {
      r.status = 304;
      return r;
    }
    r.body = std::string(asset.body);
    return r;
  }
  return problem_response(404, "the page has no file " + path);
}

}  // namespace

RouteTable page_routes() {
  return {{.method = "GET",
           .path = "/",
           .lane = Lane::read,
           .role = Role::open,
           .tag = "page",
           .summary = "The status page",
           .answer = Answer::html_or_file,
           .handler = [](const HttpRequest& request,
                         const PathParams&) { return serve(request, "/"); }},
          {.method = "GET",
           .path = "/ui/{file}",
           .lane = Lane::read,
           .role = Role::open,
           .tag = "page",
           .summary = "A file of the status page (script, style, uPlot)",
           .answer = Answer::html_or_file,
           .errors = {404},
           .handler = [](const HttpRequest& request, const PathParams& params) {
             return serve(request, "/ui/" + params.at("file"));
           }}};
}

}  // namespace orch
