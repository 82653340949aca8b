#include "adapters/kubernetes/kube_copy_plan.h"

#include <map>

namespace orch::kube {
namespace {

std::map<std::string, const ManifestFile*> by_path(const Manifest& m) {
  std::map<std::string, const ManifestFile*> out;
  for (const ManifestFile& f : m.files) out[f.path] = &f;
  return out;
}

}  // namespace

CopyPlan plan_copy(const Manifest& source, const Manifest& arrived, bool checksum) {
  CopyPlan plan;
  const auto there = by_path(arrived);
  bool any = false;
  for (const ManifestFile& f : source.files) {
    const auto it = there.find(f.path);
    if (it == there.end() || it->second->size > f.size) {
      plan.whole.push_back(f.path);
      plan.bytes_to_send += f.size;
      any = any || it != there.end();
      continue;
    }
    any = true;
    const std::uint64_t have = it->second->size;
    plan.bytes_there += have;
    if (have < f.size) {
      plan.tails.push_back({f.path, have, f.size});
      plan.bytes_to_send += f.size - have;
    } else if (checksum) {
      plan.compare.push_back(f.path);
    }
  }
  plan.fresh = !any || source.directory != arrived.directory;
  if (plan.fresh) {
    plan.whole.clear();
    plan.tails.clear();
    plan.compare.clear();
    plan.bytes_there = 0;
    plan.bytes_to_send = source.total_bytes();
  }
  return plan;
}

std::vector<std::string> hash_mismatches(const Manifest& source, const Manifest& arrived,
                                         const std::vector<std::string>& names) {
  const auto src = by_path(source);
  const auto dst = by_path(arrived);
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const auto a = src.find(name);
    const auto b = dst.find(name);
    const bool same = a != src.end() && b != dst.end() && !a->second->sha256.empty() &&
                      a->second->sha256 == b->second->sha256 && a->second->size == b->second->size;
    if (!same) out.push_back(name);
  }
  return out;
}

std::string tar_name_list(const std::vector<std::string>& paths, const std::string& base) {
  std::string out;
  for (const std::string& p : paths) {
    out += p.empty() ? base : "./" + p;
    out.push_back('\0');
  }
  return out;
}

}  // namespace orch::kube
