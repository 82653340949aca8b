// See completion.h. Both scripts share one shape: a function that maps the command path typed so
// far ("", "job", "job submit") to its subcommands, one that maps it to its options, and a
// completer that walks the words before the cursor to find the path.
#include "cli/completion.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace orch {
namespace {

struct Level {
  std::string path;  // "job submit"; "" for the program itself
  std::vector<std::string> subcommands;
  std::vector<std::string> options;  // its own, and the enclosing commands' when it falls through
};

void collect(const CLI::App& app, const std::string& path, std::vector<std::string> inherited,
             std::vector<Level>& out) {
  Level level;
  level.path = path;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) inherited.push_back("--" + name);
    for (const std::string& name : opt->get_snames()) inherited.push_back("-" + name);
  }
  std::sort(inherited.begin(), inherited.end());
  inherited.erase(std::unique(inherited.begin(), inherited.end()), inherited.end());
  level.options = inherited;
  const auto subs = app.get_subcommands([](const CLI::App* sub) { return !sub->get_disabled(); });
  for (const CLI::App* sub : subs) level.subcommands.push_back(sub->get_name());
  out.push_back(level);
  for (const CLI::App* sub : subs) {
    // Options of the enclosing commands work after a subcommand only if it falls through.
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(),
            sub->get_fallthrough() ? inherited : std::vector<std::string>{}, out);
  }
}

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& w : list) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The body of a `case "$1" in ... esac` that echoes one list per command path.
std::string cases(const std::vector<Level>& levels, bool subcommands) {
  std::string out;
  for (const Level& l : levels) {
    const std::string& list = words(subcommands ? l.subcommands : l.options);
    if (list.empty()) continue;
    out += "    \"" + l.path + "\") echo \"" + list + "\" ;;\n";
  }
  return out;
}

// A shell identifier from the program's name.
std::string ident(const std::string& program) {
  std::string out = "_";
  for (char c : program) {
    out += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
  }
  return out;
}

// F_subcommands PATH and F_options PATH: what may follow a command path. Both shells' scripts
// define them the same way.
std::string lookups(const std::vector<Level>& levels, const std::string& f) {
  return f + "_subcommands() {\n  case \"$1\" in\n" + cases(levels, true) + "  esac\n}\n" + f +
         "_options() {\n  case \"$1\" in\n" + cases(levels, false) + "  esac\n}\n";
}

std::string bash_script(const std::vector<Level>& levels, const std::string& program) {
  const std::string f = ident(program);
  return "# bash completion for " + program +
         "; load it with\n"
         "#   source <(" +
         program +
         " completion bash)\n"
         "# or save it as /etc/bash_completion.d/" +
         program + ".\n" + lookups(levels, f) + f +
         "() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmdpath=\"\" word i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    word=\"${COMP_WORDS[i]}\"\n"
         "    case \" $(" +
         f +
         "_subcommands \"$cmdpath\") \" in\n"
         "      *\" $word \"*) cmdpath=\"${cmdpath:+$cmdpath }$word\" ;;\n"
         "    esac\n"
         "  done\n"
         "  if [[ \"$cur\" == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$(" +
         f +
         "_options \"$cmdpath\")\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -W \"$(" +
         f +
         "_subcommands \"$cmdpath\")\" -- \"$cur\"))\n"
         "  fi\n"
         "  return 0\n"
         "}\n"
         "complete -o default -F " +
         f + " " + program + "\n";
}

std::string zsh_script(const std::vector<Level>& levels, const std::string& program) {
  const std::string f = ident(program);
  // `path` is special in zsh (tied to PATH), hence cmdpath.
  return "#compdef " + program +
         "\n"
         "# zsh completion for " +
         program +
         "; load it with\n"
         "#   source <(" +
         program +
         " completion zsh)\n"
         "# or save it as _" +
         program + " in a directory of $fpath.\n" + lookups(levels, f) + f +
         "() {\n"
         "  local cmdpath=\"\" word i\n"
         "  local -a subs\n"
         "  for ((i = 2; i < CURRENT; i++)); do\n"
         "    word=\"${words[i]}\"\n"
         "    subs=(${=$(" +
         f +
         "_subcommands \"$cmdpath\")})\n"
         "    if (( ${subs[(Ie)$word]} )); then cmdpath=\"${cmdpath:+$cmdpath }$word\"; fi\n"
         "  done\n"
         "  if [[ \"${words[CURRENT]}\" == -* ]]; then\n"
         "    compadd -- ${=$(" +
         f +
         "_options \"$cmdpath\")}\n"
         "    return\n"
         "  fi\n"
         "  subs=(${=$(" +
         f +
         "_subcommands \"$cmdpath\")})\n"
         "  if (( ${#subs} )); then compadd -- \"${subs[@]}\"; else _files; fi\n"
         "}\n"
         "if [[ \"$funcstack[1]\" == \"_" +
         program +
         "\" ]]; then\n"
         "  " +
         f +
         " \"$@\"\n"
         "else\n"
         "  compdef " +
         f + " " + program +
         "\n"
         "fi\n";
}

}  // namespace

std::string completion_script(const CLI::App& app, std::string_view shell,
                              const std::string& program) {
  std::vector<Level> levels;
  collect(app, "", {}, levels);
  if (shell == "bash") return bash_script(levels, program);
  if (shell == "zsh") return zsh_script(levels, program);
  return "";
}

}  // namespace orch
