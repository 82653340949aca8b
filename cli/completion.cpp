// See completion.h. Both scripts share one shape: functions that map the command path typed so
// far ("", "job", "job submit") to its subcommands, its options, the options that take a value,
// and the kind of value a word takes; and a completer that walks the words before the cursor
// to find the path and the positional argument being typed. A kind is either "=a b c" (a fixed
// list, from an option's CLI11 IsMember check) or a name `orchestrate __complete KIND` answers
// from the server (jobs, clusters, nodes, states, classes).
#include "cli/completion.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace orch {
namespace {

struct OptionInfo {
  std::vector<std::string> names;  // "--cluster", "-o"
  bool valued = false;             // takes a value (the next word)
  std::string kind;                // of that value; "" for none known (files)
};

struct Level {
  std::string path;  // "job submit"; "" for the program itself
  std::vector<std::string> subcommands;
  std::vector<std::string> options;  // its own, and the enclosing commands' when it falls through
  std::vector<std::string> valued;   // those of options that take a value
  // "--cluster" -> "clusters"; "#0" -> the first positional's kind; "#*" -> every one from the
  // last positional on (a list, such as `job cancel ID...`).
  std::vector<std::pair<std::string, std::string>> kinds;
};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The fixed list of an option checked by CLI11::IsMember: its type name reads "TEXT:{a,b,c}".
std::string fixed_choices(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const std::size_t open = type.find(":{");
  const std::size_t close = type.find('}', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return "";
  std::string list = type.substr(open + 2, close - open - 2);
  std::replace(list.begin(), list.end(), ',', ' ');
  return "=" + list;
}

// What the value of `opt` (of the command at `path`) names, by the names the CLI gives its
// arguments: job ids, clusters, nodes; else its fixed choices; else "".
std::string value_kind(const std::string& path, const CLI::Option& opt) {
  const std::string name = opt.get_positional() ? opt.get_name(true) : opt.get_name(false, false);
  if (name == "--cluster" || name == "--to" || name == "CLUSTER") return "clusters";
  if (name == "NAME" && starts_with(path, "cluster ")) return "clusters";
  if (name == "--node" || name == "NODE") return "nodes";
  if (name == "--job" || name == "JOB") return "jobs";
  if (name == "ID" && (starts_with(path, "job ") || path == "plan")) return "jobs";
  return fixed_choices(opt);
}

bool shown(const CLI::App* sub) {
  return !sub->get_disabled() && !sub->get_group().empty();
}

void collect(const CLI::App& app, const std::string& path,
             std::map<std::string, OptionInfo> inherited, std::vector<Level>& out) {
  Level level;
  level.path = path;
  int positional = 0;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) {
      const bool many = opt->get_expected_max() > 1;
      const std::string kind = value_kind(path, *opt);
      if (!kind.empty()) {
        level.kinds.emplace_back(many ? "#*" : "#" + std::to_string(positional), kind);
      }
      ++positional;
      continue;
    }
    OptionInfo info;
    for (const std::string& name : opt->get_lnames()) info.names.push_back("--" + name);
    for (const std::string& name : opt->get_snames()) info.names.push_back("-" + name);
    info.valued = opt->get_type_size_max() > 0;
    info.kind = value_kind(path, *opt);
    for (const std::string& name : info.names) inherited[name] = info;  // ours hide theirs
  }
  for (const auto& [name, info] : inherited) {
    level.options.push_back(name);
    if (info.valued) level.valued.push_back(name);
    if (info.valued && !info.kind.empty()) level.kinds.emplace_back(name, info.kind);
  }
  const auto subs = app.get_subcommands([](const CLI::App* sub) { return shown(sub); });
  for (const CLI::App* sub : subs) level.subcommands.push_back(sub->get_name());
  out.push_back(level);
  for (const CLI::App* sub : subs) {
    // Options of the enclosing commands work after a subcommand only if it falls through.
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(),
            sub->get_fallthrough() ? inherited : std::map<std::string, OptionInfo>{}, out);
  }
}

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& w : list) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The body of a `case "$1" in ... esac` that echoes one list per command path.
std::string cases(const std::vector<Level>& levels, std::vector<std::string> Level::*list) {
  std::string out;
  for (const Level& l : levels) {
    const std::string& text = words(l.*list);
    if (text.empty()) continue;
    out += "    \"" + l.path + "\") echo \"" + text + "\" ;;\n";
  }
  return out;
}

// The body of F_kind's `case "$1" in` ("PATH|KEY").
std::string kind_cases(const std::vector<Level>& levels) {
  std::string out;
  for (const Level& l : levels) {
    for (const auto& [key, kind] : l.kinds) {
      const std::string pattern =
          key == "#*" ? "\"" + l.path + "|#\"*" : "\"" + l.path + "|" + key + "\"";
      out += "    " + pattern + ") echo \"" + kind + "\" ;;\n";
    }
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

std::string case_function(const std::string& name, const std::string& body) {
  return name + "() {\n  case \"$1\" in\n" + body + "  esac\n}\n";
}

// F_subcommands PATH, F_options PATH, F_valued PATH and F_kind "PATH|KEY": what may follow a
// command path; F_words KIND PROGRAM [--server URL] [--ca FILE]: the words of a kind, a fixed
// list or the server's (through `PROGRAM __complete KIND`, which never waits long and prints
// nothing when the server does not answer). Both shells' scripts define them the same way.
std::string lookups(const std::vector<Level>& levels, const std::string& f) {
  return case_function(f + "_subcommands", cases(levels, &Level::subcommands)) +
         case_function(f + "_options", cases(levels, &Level::options)) +
         case_function(f + "_valued", cases(levels, &Level::valued)) +
         case_function(f + "_kind", kind_cases(levels)) + f +
         "_words() {\n"
         "  local kind=\"$1\"\n"
         "  shift\n"
         "  if [[ \"$kind\" == '='* ]]; then echo \"${kind#=}\"; return; fi\n"
         "  \"$@\" __complete \"$kind\" 2>/dev/null </dev/null\n"
         "}\n";
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
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmdpath=\"\" word kind i npos=0\n"
         "  local -a via=(\"${COMP_WORDS[0]}\")\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    word=\"${COMP_WORDS[i]}\"\n"
         "    case \" $(" +
         f +
         "_subcommands \"$cmdpath\") \" in\n"
         "      *\" $word \"*) cmdpath=\"${cmdpath:+$cmdpath }$word\"; npos=0; continue ;;\n"
         "    esac\n"
         "    case \"$word\" in --server|--ca) via+=(\"$word\" \"${COMP_WORDS[i+1]}\") ;; esac\n"
         "    if [[ \"$word\" == -* ]]; then\n"
         "      case \" $(" +
         f +
         "_valued \"$cmdpath\") \" in *\" $word \"*) ((i++)) ;; esac\n"
         "    else\n"
         "      ((npos++))\n"
         "    fi\n"
         "  done\n"
         "  if ((COMP_CWORD > 1)); then\n"
         "    word=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
         "    case \" $(" +
         f +
         "_valued \"$cmdpath\") \" in\n"
         "      *\" $word \"*)\n"
         "        kind=\"$(" +
         f +
         "_kind \"$cmdpath|$word\")\"\n"
         "        [[ -n \"$kind\" ]] && COMPREPLY=($(compgen -W \"$(" +
         f +
         "_words \"$kind\" \"${via[@]}\")\" -- \"$cur\"))\n"
         "        return 0 ;;\n"
         "    esac\n"
         "  fi\n"
         "  if [[ \"$cur\" == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$(" +
         f +
         "_options \"$cmdpath\")\" -- \"$cur\"))\n"
         "  elif [[ -n \"$(" +
         f +
         "_subcommands \"$cmdpath\")\" ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$(" +
         f +
         "_subcommands \"$cmdpath\")\" -- \"$cur\"))\n"
         "  else\n"
         "    kind=\"$(" +
         f +
         "_kind \"$cmdpath|#$npos\")\"\n"
         "    [[ -n \"$kind\" ]] && COMPREPLY=($(compgen -W \"$(" +
         f +
         "_words \"$kind\" \"${via[@]}\")\" -- \"$cur\"))\n"
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
         "  local cmdpath=\"\" word kind i npos=0\n"
         "  local -a subs valued via\n"
         "  via=(\"${words[1]}\")\n"
         "  for ((i = 2; i < CURRENT; i++)); do\n"
         "    word=\"${words[i]}\"\n"
         "    subs=(${=$(" +
         f +
         "_subcommands \"$cmdpath\")})\n"
         "    if (( ${subs[(Ie)$word]} )); then\n"
         "      cmdpath=\"${cmdpath:+$cmdpath }$word\"; npos=0; continue\n"
         "    fi\n"
         "    if [[ \"$word\" == --server || \"$word\" == --ca ]]; then\n"
         "      via+=(\"$word\" \"${words[i+1]}\")\n"
         "    fi\n"
         "    if [[ \"$word\" == -* ]]; then\n"
         "      valued=(${=$(" +
         f +
         "_valued \"$cmdpath\")})\n"
         "      if (( ${valued[(Ie)$word]} )); then ((i++)); fi\n"
         "    else\n"
         "      ((npos++))\n"
         "    fi\n"
         "  done\n"
         "  valued=(${=$(" +
         f +
         "_valued \"$cmdpath\")})\n"
         "  if (( CURRENT > 2 && ${valued[(Ie)${words[CURRENT-1]}]} )); then\n"
         "    kind=\"$(" +
         f +
         "_kind \"$cmdpath|${words[CURRENT-1]}\")\"\n"
         "    if [[ -n \"$kind\" ]]; then compadd -- ${=$(" +
         f +
         "_words \"$kind\" \"${via[@]}\")}; else _files; fi\n"
         "    return\n"
         "  fi\n"
         "  if [[ \"${words[CURRENT]}\" == -* ]]; then\n"
         "    compadd -- ${=$(" +
         f +
         "_options \"$cmdpath\")}\n"
         "    return\n"
         "  fi\n"
         "  subs=(${=$(" +
         f +
         "_subcommands \"$cmdpath\")})\n"
         "  if (( ${#subs} )); then compadd -- \"${subs[@]}\"; return; fi\n"
         "  kind=\"$(" +
         f +
         "_kind \"$cmdpath|#$npos\")\"\n"
         "  if [[ -n \"$kind\" ]]; then compadd -- ${=$(" +
         f +
         "_words \"$kind\" \"${via[@]}\")}; else _files; fi\n"
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
