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

#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

// The directory behind a PersistentVolumeClaim.
std::string claim_dir(const std::string& state_dir, const std::string& ns,
                      const std::string& claim);

// Makes the first container's volumeMounts of `pod`; "" or why not.
std::string mount_volumes(const nlohmann::json& pod, const std::string& pod_dir,
                          const std::string& state_dir);

}  // namespace orch::fake_kube
