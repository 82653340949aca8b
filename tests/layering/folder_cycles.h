#pragma once
// The declared folder graph and its cycles (the layering check, README.md here).
//
// Folder A -> folder B when A's README allows B: a folder name is B itself, a single header
// (`scheduler/cluster_port.h`) stands for its folder, `*` and A itself add no edge. A cycle
// (A -> B -> A) means neither folder can be built or understood without the other.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace layering {

using FolderGraph = std::map<std::string, std::set<std::string>>;

// The folders `folder`'s allowed names point at.
std::set<std::string> edges_of(const std::string& folder, const std::set<std::string>& allowed);

// Every cycle a depth-first walk of `graph` meets (folders in name order, so the same graph
// gives the same answer): each as its path, first folder repeated at the end.
std::vector<std::vector<std::string>> find_cycles(const FolderGraph& graph);

}  // namespace layering
