#pragma once
// Sweeps for ablations (issue 18, docs/config.md): `sweep:` in a job spec is a small grid,
//
//   sweep:
//     env: {LR: [1e-4, 3e-4], WD: [0, 0.1]}
//     args: ["--seed 1", "--seed 2"]
//
// read and checked with the rest of the spec (file:line:col), and expanded at submit into one
// job per point: every combination of the env values, times each argument string appended to
// the command. Point i (from 1, the first env key varying slowest, the args fastest) is named
// <name>-<i>, sets its env values over the spec's env, and has the spec's name as its group and
// its values as its sweep_point (`LR=1e-4 --seed 1`).

#include <cstddef>
#include <vector>

#include "scheduler/spec/job_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

inline constexpr std::size_t kMaxSweepPoints = 256;

void read_sweep(const yaml::MapView& job, JobSpec& spec);

// The jobs a spec stands for: itself when it has no sweep, else one per point (none of them
// with a sweep). The spec must have been read by the parser (which bounds the grid).
std::vector<JobSpec> expand_sweep(const JobSpec& spec);

}  // namespace orch
