#pragma once
// A pod's volumes on this machine. Every pod of the fake is a local process, so a volume is a
// directory and a mount is a symbolic link at the container's mountPath pointing to it:
// - persistentVolumeClaim: <state-dir>/volumes/<namespace>/<claimName>, made on first use (as a
//   dynamically provisioned claim) and shared by every pod that mounts the claim;
// - hostPath: the path itself (it must exist when the type is Directory);
// - emptyDir: <pod dir>/volumes/<name>; medium Memory at /dev/shm is the machine's /dev/shm.
// A mountPath that exists and is not a link to the same directory cannot be mounted: the pod
// waits with CreateContainerConfigError and a message saying so (tests choose mount paths in
// their temporary directories). Exec'd commands (pods/exec) see the same links.
//
// An emptyDir (other than /dev/shm) is the pod's own: a real container has its own mount
// namespace, so two pods of a gang that mount an emptyDir at the same path each see their own.
// The fake has one filesystem, so it makes no link for an emptyDir: instead every occurrence of
// its mountPath (as a whole path or a prefix of one: "/orchestrate/agent" or
// "/orchestrate/agent/x", not "/orchestrate/agents") in the container's command, args, env values
// and workingDir, and in the commands exec'd in the pod, is rewritten to the pod's directory of
// that volume. A path the process builds itself from pieces is not rewritten.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

// The directory behind a PersistentVolumeClaim.
std::string claim_dir(const std::string& state_dir, const std::string& ns,
                      const std::string& claim);

// Makes the volumeMounts of the pod's init containers and first container; "" or why not.
std::string mount_volumes(const nlohmann::json& pod, const std::string& pod_dir,
                          const std::string& state_dir);

// mountPath -> the pod's directory, for each emptyDir `container` mounts (not /dev/shm).
using MountRewrites = std::vector<std::pair<std::string, std::string>>;
MountRewrites private_mounts(const nlohmann::json& pod, const nlohmann::json& container,
                             const std::string& pod_dir);

// `text` with each mountPath of `rewrites` that stands as a path (at the start or after a
// character that cannot be in a path, and followed by the end, '/' or such a character)
// replaced by its directory.
std::string rewrite_private_mounts(const std::string& text, const MountRewrites& rewrites);

}  // namespace orch::fake_kube
