// The status page's routes: the page and its files come from the binary, with the page's own
// strict Content-Security-Policy, a validator that answers 304, and a 404 for any other file.
#include <gmock/gmock.h>

#include "web/page_assets.h"
#include "web/page_routes.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HttpResponse get(const Router& router, const std::string& path, const std::string& etag = "") {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  if (!etag.empty()) r.headers["if-none-match"] = etag;
  return router.dispatch(r);
}

class PageRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override { add_rows(router_, page_routes()); }
  Router router_;
};

TEST_F(PageRoutesTest, ThePageIsHtmlWithAStrictPolicyAndNoInlineCode) {
  const HttpResponse page = get(router_, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  const std::string csp = page.header("Content-Security-Policy");
  EXPECT_THAT(csp, HasSubstr("default-src 'none'"));
  EXPECT_THAT(csp, HasSubstr("script-src 'self'"));
  EXPECT_THAT(csp, HasSubstr("frame-ancestors 'none'"));
  EXPECT_THAT(csp, Not(HasSubstr("unsafe")));
  EXPECT_THAT(page.body, HasSubstr("<script src=\"/ui/page.js\" type=\"module\">"));
  // Nothing the policy would block: no inline script or style, no handler attributes.
  EXPECT_THAT(page.body, Not(HasSubstr("<script>")));
  EXPECT_THAT(page.body, Not(HasSubstr("<style")));
  EXPECT_THAT(page.body, Not(HasSubstr(" onclick=")));
}

TEST_F(PageRoutesTest, EveryFileIsServedWithItsTypeAndUPlotIsEmbedded) {
  bool uplot = false;
  for (const PageAsset& asset : page_assets()) {
    const HttpResponse r = get(router_, std::string(asset.path));
    EXPECT_EQ(r.status, 200) << asset.path;
    EXPECT_EQ(r.content_type, asset.content_type) << asset.path;
    EXPECT_EQ(r.body.size(), asset.body.size()) << asset.path;
    EXPECT_FALSE(r.body.empty()) << asset.path;
    if (asset.path == "/ui/uPlot.iife.min.js") uplot = r.body.find("uPlot") != std::string::npos;
  }
  EXPECT_TRUE(uplot);
  EXPECT_EQ(get(router_, "/ui/page.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(get(router_, "/ui/page.css").content_type, "text/css; charset=utf-8");
}

TEST_F(PageRoutesTest, ARevalidationWithTheSameTagIs304AndAnUnknownFile404) {
  const HttpResponse first = get(router_, "/ui/page.js");
  const std::string etag = first.header("ETag");
  ASSERT_FALSE(etag.empty());
  const HttpResponse again = get(router_, "/ui/page.js", etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(get(router_, "/ui/page.js", "\"other\"").status, 200);
  const HttpResponse missing = get(router_, "/ui/secrets.txt");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr("the page has no file /ui/secrets.txt"));
}

}  // namespace
}  // namespace orch
