#pragma once
// The subset of .gitignore rules that `orchestrate job submit` honours when it packs a
// `workdir:` (cli/workdir_pack.h), in both `.gitignore` and `.orchignore` files of any
// directory of the tree (docs/config.md "workdir"):
//
//   - blank lines and lines starting with "#" are skipped; "\#" and "\!" start a pattern with
//     that character; trailing spaces are dropped
//   - "!" before a pattern re-includes what an earlier pattern left out (not below a directory
//     that is left out: it is never entered)
//   - a trailing "/" matches directories only
//   - a pattern with a "/" at its start or in its middle is anchored to the directory of its
//     file; one without matches a name at any depth below it
//   - "*" matches anything but "/", "?" one character but "/", "[abc]", "[a-z]" and "[!a]" one
//     of a set; "**/" at the start, "/**" at the end and "/**/" in the middle match any number
//     of directories
//
// The last pattern that matches decides; a deeper file's patterns come after a shallower's,
// and a directory's .orchignore after its .gitignore. Pure: the packer reads the files.

#include <string>
#include <string_view>
#include <vector>

namespace orch {

// Whether a glob pattern (the syntax above, without "!" or the trailing "/") matches path.
bool glob_match(std::string_view pattern, std::string_view path);

class IgnoreRules {
 public:
  // Adds the lines of an ignore file found in directory `base` (relative to the tree's root;
  // "" for the root).
  void add_file(const std::string& base, std::string_view text);
  // Whether the path (relative to the root) is left out.
  bool ignored(const std::string& path, bool is_dir) const;

 private:
  struct Rule {
    std::string base;     // "" or "dir/sub/"
    std::string pattern;  // without "!", the leading "/" and the trailing "/"
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;
  };
  std::vector<Rule> rules_;
};

}  // namespace orch
