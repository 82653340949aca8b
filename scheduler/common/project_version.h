#pragma once
// This release's version, the one the top CMakeLists.txt gives project(VERSION): what code
// that is not built with ORCH_VERSION (a compile definition of the CLI only) names, such as the
// agent image's tag (cluster_spec.h). tests/unit/kube/kube_agent_manifest_test.cpp checks that
// the two agree.
#define ORCH_PROJECT_VERSION "0.1.0"
