#pragma once
// The fake's images (ClusterOptions::image_map, agent_binary): the fake has no container
// runtime, so a container runs a program of this machine. A mapped image says which: a
// directory stands for the image's root filesystem (an absolute command P runs <dir>/P), a file
// is the image's one program (a command whose last component is the file's name, or a
// container without a command, runs it: its ENTRYPOINT). An image whose name contains
// "orchestrate-agent" and is not in the map is the agent image (agents/Dockerfile) and maps to
// agent_binary, this build's agent. Unmapped images run their command as found on this machine.

#include <map>
#include <string>
#include <vector>

namespace orch::fake_kube {

struct ImageMap {
  std::map<std::string, std::string> images;  // "name[:tag]" -> directory or file
  std::string agent_binary;                   // "" : the agent image is not mapped
};

// The path an image maps to ("" when it is not mapped): the entry for the whole reference,
// else for the name without its tag, else agent_binary for an agent image.
std::string mapped_path(const ImageMap& map, const std::string& image);

// `argv` (the container's command and args, expanded; empty when it has no command) made to
// run `mapped`. "" or why not (containerd's "no such file or directory" shape).
std::string resolve_in_image(const std::string& mapped, std::vector<std::string>& argv);

// "--image-map IMAGE=PATH" read into the map; throws std::runtime_error when there is no '='
// or either side is empty.
void add_image_mapping(ImageMap& map, const std::string& flag);

}  // namespace orch::fake_kube
