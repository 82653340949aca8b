#pragma once
// NVIDIA DCGM's diagnostic (`dcgmi diag -r LEVEL -j`): the arguments, a pure parser of its JSON
// report into one result per test and GPU, and the probe's `dcgm` check. Tested on real reports'
// shapes (tests/fixtures/dcgm/) and fuzzed (tests/fuzz/fuzz_dcgm_diag.cpp).
//
// Two shapes are read: DCGM 2.x/3.x, `{"DCGM GPU Diagnostic": {"test_categories": [{"category",
// "tests": [{"name", "results": [{"gpu_ids", "status", "warnings", "info"}]}]}], "version"}}`,
// and DCGM 4.x, the same under "DCGM Diagnostic" with results per entity (`entity_group`,
// `entity_id`) and warnings as objects (`{"warning": ..., "error_id": ...}`). Text dcgmi prints
// before the document ("Successfully ran diagnostic for group.") is skipped.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/probe_check.h"

namespace orch::agent {

struct DcgmTestResult {
  std::string name;        // as DCGM names it: "PCIe", "Memory", "software", ...
  std::optional<int> gpu;  // absent for a whole-node test (the software checks)
  std::string result;      // pass | fail | warn | skip
  std::string info;        // its warnings, then its info lines, joined by "; " (cut to 500 bytes)
};

struct DcgmDiag {
  std::vector<DcgmTestResult> tests;
  std::string version;  // DCGM's, when printed
  std::string error;    // why no report could be read ("" when it could)
};

// The argument list after the program name: diag -r LEVEL -j.
std::vector<std::string> dcgmi_diag_arguments(int level);

DcgmDiag parse_dcgm_diag_json(std::string_view text);

// "dcgm": fails when any test failed on any GPU, naming each (`dcgm diag -r 2: PCIe failed on
// GPU 0: <info>`), or when no report could be read (`why` then says what went wrong running it).
Check dcgm_check(const DcgmDiag& diag, int level, const std::string& why = "");

}  // namespace orch::agent
