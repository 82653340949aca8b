#pragma once
// A manifest: what a checkpoint or dataset consists of, file by file (relative path, size,
// SHA-256), computed at the site where a copy lives (adapters: sha256sum over SSH on the login
// node, or here for local sites). A copy is `verified` when the manifest observed at its site
// matches the registered one. Pure data and comparison; no I/O.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

struct ManifestFile {
  std::string path;  // relative to the copy's root, '/'-separated; "" when the copy is one file
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex; empty when this listing did not hash the file
};

struct Manifest {
  bool directory = false;           // the copy is a directory (else one file, path "")
  std::vector<ManifestFile> files;  // sorted by path, no duplicates

  std::uint64_t total_bytes() const;
};

nlohmann::json manifest_to_json(const Manifest& m);
// Refuses a malformed manifest (ErrorKind::invalid naming the field).
Result<Manifest> manifest_from_json(const nlohmann::json& j);

struct ManifestDiff {
  bool matches = true;
  // The first difference, for people: "file shard-1.bin: size 1024, expected 2048",
  // "file opt.pt: SHA-256 a1b2c3d4…, expected 9f8e7d6c…", "file model.bin is missing",
  // "unexpected file x.tmp", "a file where a directory was expected".
  std::string difference;
  int differences = 0;  // how many files differ in all
};

// Compares what a site shows (observed) with the registered manifest (expected): the same set
// of files with the same sizes, and the same SHA-256 for every file the observed listing hashed
// (an audit hashes only a sample; an unhashed file is compared by size only).
ManifestDiff compare_manifest(const Manifest& expected, const Manifest& observed);

}  // namespace orch
