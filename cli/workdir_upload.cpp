#include "cli/workdir_upload.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "cli/client_call.h"
#include "cli/workdir_pack.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {

std::string resolve_workdir(const std::string& spec_file, const std::string& source) {
  namespace fs = std::filesystem;
  if (source.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home && *home) return (fs::path(home) / source.substr(2)).lexically_normal().string();
  }
  const fs::path path(source);
  if (path.is_absolute()) return path.lexically_normal().string();
  fs::path dir = fs::path(spec_file).parent_path();
  if (dir.empty()) dir = ".";
  std::string out = (dir / path).lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

int prepare_workdir(const ClientOptions& o, const std::string& spec_file,
                    const std::string& spec_text, std::uint64_t limit, std::string& query,
                    std::ostream& err) {
  query.clear();
  auto spec = parse_job_spec(spec_text, spec_file);
  if (!spec || spec->workdir.source.empty()) return kExitOk;  // the server says what is wrong
  const std::string root = resolve_workdir(spec_file, spec->workdir.source);
  auto packed = pack_workdir(root, limit);
  if (!packed) {
    err << "error: " << packed.error().message << '\n';
    return kExitUsage;
  }
  for (const std::string& s : packed->skipped) {
    err << "workdir: left out " << s << ": only files, directories and symlinks are sent\n";
  }
  const std::string target = "/api/v1/code/" + packed->sha256;
  HttpResponse response;
  std::ostringstream quiet;
  const int rc = call(o, "GET", target, response, quiet);
  if (rc == kExitUnreachable) {
    err << quiet.str();
    return rc;
  }
  if (rc == kExitOk) {
    err << "workdir " << root << ": unchanged (" << packed->sha256.substr(0, 12)
        << "), not sent again\n";
  } else if (response.status == 404) {
    ClientOptions upload = o;
    // A minute per 64 MiB on top of the usual wait, for slow links.
    upload.timeout_ms += static_cast<int>(packed->archive.size() / (64ULL << 20) * 60000);
    if (int put = call(upload, "PUT", target, response, err, packed->archive, "application/x-tar");
        put != kExitOk) {
      return put;
    }
    err << "workdir " << root << ": sent " << human_bytes(packed->archive.size()) << " ("
        << packed->files << " files, " << packed->sha256.substr(0, 12) << ")\n";
  } else {
    err << quiet.str();
    return rc;
  }
  query = "&workdir=sha256:" + packed->sha256;
  return kExitOk;
}

}  // namespace orch
