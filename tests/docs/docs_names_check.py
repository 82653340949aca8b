#!/usr/bin/env python3
"""The docs' names check: every repository path, `orchestrate` command and config key the
Markdown names must exist today, so a rename or a removal that leaves a doc behind fails
`make test`.

    docs_names_check.py ROOT ORCHESTRATE [SPEC_SOURCE...]

ROOT: the tree whose docs are read: ROOT/README.md, ROOT/docs/*.md and every README.md under
ROOT (not under node_modules/, build*/, .git/ or a folder named planted*).
ORCHESTRATE: the CLI binary; its command tree is `ORCHESTRATE completion bash`'s (the script
CLI11's setup in cli/ generates), so there is no list to keep by hand.
SPEC_SOURCE: files or folders, relative to ROOT, whose C++ sources hold the config keys (default:
scheduler/spec simulator/scenario.cpp simulator/fleet_scenario.cpp).

What counts (tests/README.md, "The docs' names", says the same):

- A PATH is a word with a "/" whose first part is a folder at ROOT's top (scheduler/, tests/,
  docs/, ...), beside the README that names it (tests/README.md's `unit/brain/`), or one level
  down when the word ends in a file's extension or a "/" (`lifecycle/duplicates.h`), in inline
  code, in prose or on a code block's line; and a link's target. It must exist, from ROOT, from
  the README's folder or from a top folder (a link's target: from the Markdown file's folder).
  A source file's name without a "/" (`placer.cpp`) must be a file somewhere under ROOT, or one
  a CMakeLists.txt or .cmake file names (generated). `*` and `?` match as globs, `{h,cpp}`
  expands, a name without an extension stands for its files (`backend/scheduler_backend`), a
  trailing `:LINE`, `#anchor` or punctuation is dropped, and an inline code span broken over two
  lines after a "/" is one path. Skipped: URLs, absolute and `~` paths, words with a placeholder
  (`<id>`, a capitalised `NAME` part, `...`, `$VAR`).
- A COMMAND is `orchestrate <word> [<word>]` in inline code or at the start of a code block's
  line (after `$ `, `sudo `, a path, or inside `<(`): the words after `orchestrate` that are
  lower-case (a-z, 0-9, -) are walked down the CLI's tree while the command reached has
  subcommands; `a|b` checks each. Each word walked must be a subcommand there.
- A KEY is named (a) in the first column of a Markdown table whose header's first column is
  `key` (every inline-code word there, dotted parts each), (b) in a code block marked yaml, or
  (c) in docs/config.md as `word:` or `word: value` in inline code. Each part that is a
  lower-case identifier must be one of the keys the spec parsers list: every string literal in
  a brace list made only of string literals (the valid keys given to MapView and child(), the
  provider sections, pod_setting_keys) in the SPEC_SOURCE files. In a YAML block only the keys
  whose place the parsers fix are checked: the top level's, those of a section (a key the
  parsers open with child()), and those of the maps listed under a top-level key or a section
  (`clusters: - name:`); keys under any other map are names the user chose (env, teams,
  secrets, priority_classes, pull_from). testkit/fake_kube/README.md is skipped for commands
  and keys: its names are Kubernetes'.

Prints each stale name as `FILE:LINE: stale path|command|key "NAME"` and a summary line; exits
0 when there is none, 1 otherwise, 2 on bad usage.
"""

import fnmatch
import glob
import os
import re
import subprocess
import sys

SKIP_DIRS = {"node_modules", ".git"}
KUBE_TEXT = {"testkit/fake_kube/README.md"}
WORD = re.compile(r"[a-z][a-z0-9-]*$")
CHECKED = {"path": 0, "command": 0, "key": 0}  # names judged, for the summary
IDENT = re.compile(r"[a-z_][a-z0-9_]*$")


def doc_files(root):
    """ROOT/README.md, ROOT/docs/*.md and every README.md below ROOT, sorted."""
    found = set()
    for name in glob.glob(os.path.join(root, "docs", "*.md")):
        found.add(os.path.relpath(name, root))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames
            if d not in SKIP_DIRS and not d.startswith("build") and not d.startswith("planted")
        ]
        if "README.md" in filenames:
            found.add(os.path.relpath(os.path.join(dirpath, "README.md"), root))
    return sorted(found)


# ---- the sources of truth ---------------------------------------------------------------

def command_tree(orchestrate):
    """{"": [top commands], "job": [submit, ...], ...} from the completion script."""
    script = subprocess.run([orchestrate, "completion", "bash"], check=True, capture_output=True,
                            text=True).stdout
    body = script.split("_subcommands() {", 1)[1].split("\n}", 1)[0]
    tree = {}
    for path, words in re.findall(r'^\s*"([^"]*)"\) echo "([^"]*)" ;;', body, re.M):
        tree[path] = words.split()
    if not tree.get(""):
        sys.exit("docs_names_check: no commands in `%s completion bash`" % orchestrate)
    return tree


def spec_keys(root, sources):
    """The keys the parsers accept, and the sections: the keys they open with child()."""
    keys = set()
    sections = set()
    files = []
    for s in sources:
        p = os.path.join(root, s)
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.cpp")) + glob.glob(os.path.join(p, "*.h")))
        elif os.path.isfile(p):
            files.append(p)
    for f in files:
        with open(f, encoding="utf-8") as source:
            text = re.sub(r"//[^\n]*", "", source.read())
        sections.update(re.findall(r"\bchild\(\s*\"([a-z_]+)\"", text))
        for brace in re.findall(r"\{([^{}]*)\}", text):
            items = [i.strip() for i in brace.split(",") if i.strip()]
            if items and all(re.fullmatch(r'"[^"\\]*"', i) for i in items):
                keys.update(i[1:-1] for i in items)
    if not keys:
        sys.exit("docs_names_check: no key lists in %s" % " ".join(sources))
    return keys, sections


# ---- reading Markdown -------------------------------------------------------------------

class Doc:
    """One Markdown file: its prose lines and its code blocks' lines, each with its number."""

    def __init__(self, root, rel):
        self.rel = rel
        self.dir = os.path.dirname(rel)
        self.prose = []  # (line number, text), code blocks blanked
        self.code = []   # (line number, text) of fenced code blocks
        self.yaml_blocks = []  # the lines of each ```yaml block
        fence = None
        is_yaml = False
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                m = re.match(r"\s*(```+|~~~+)", line)
                if fence is None and m:
                    fence = m.group(1)
                    is_yaml = line.strip()[len(fence):].strip().startswith("yaml")
                    if is_yaml:
                        self.yaml_blocks.append([])
                    self.prose.append((n, ""))
                elif fence is not None and line.strip().startswith(fence):
                    fence = None
                    is_yaml = False
                    self.prose.append((n, ""))
                elif fence is not None:
                    self.code.append((n, line))
                    if is_yaml:
                        self.yaml_blocks[-1].append((n, line))
                    self.prose.append((n, ""))
                else:
                    self.prose.append((n, line))

    def code_spans(self):
        """(line, text) of every inline code span; a span may go on over one line break."""
        out = []
        lines = self.prose
        i = 0
        while i < len(lines):
            n, text = lines[i]
            pos = 0
            while True:
                start = text.find("`", pos)
                if start < 0:
                    break
                ticks = re.match(r"`+", text[start:]).group(0)
                end = text.find(ticks, start + len(ticks))
                if end >= 0:
                    out.append((n, text[start + len(ticks):end]))
                    pos = end + len(ticks)
                    continue
                # Open at the end of the line: it may close on the next one.
                if i + 1 < len(lines) and ticks in lines[i + 1][1]:
                    rest = lines[i + 1][1]
                    close = rest.find(ticks)
                    head = text[start + len(ticks):]
                    joint = "" if head.endswith("/") else " "
                    out.append((n, head + joint + rest[:close].lstrip()))
                    lines = lines[:i + 1] + [(lines[i + 1][0], " " * (close + len(ticks)) +
                                              rest[close + len(ticks):])] + lines[i + 2:]
                break
            i += 1
        return out

    def links(self):
        return [(n, m.group(1)) for n, t in self.prose
                for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", t)]


# ---- paths ------------------------------------------------------------------------------

def expand_braces(word):
    m = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(word[:m.start()] + alt + word[m.end():])
    return out


class Paths:
    def __init__(self, root):
        self.root = root
        self.top = {d for d in os.listdir(root)
                    if os.path.isdir(os.path.join(root, d)) and not d.startswith(".")
                    and not d.startswith("build")}
        # The folders one level down (scheduler/lifecycle, tests/unit), by name.
        self.second = {d for t in self.top for d in os.listdir(os.path.join(root, t))
                       if os.path.isdir(os.path.join(root, t, d)) and d not in SKIP_DIRS}
        # Every file's name, and the files a CMakeLists.txt generates: for bare file names.
        self.names = set()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
            self.names.update(filenames)
            for f in filenames:
                if f == "CMakeLists.txt" or f.endswith(".cmake"):
                    with open(os.path.join(dirpath, f), encoding="utf-8") as cmake:
                        text = cmake.read()
                    self.names.update(re.findall(r"([A-Za-z0-9_-]+\.(?:cpp|h))\b", text))

    def first_part_known(self, word, base):
        first = word.split("/", 1)[0]
        if first in self.top:
            return True
        if base and os.path.isdir(os.path.join(self.root, base, first)):
            return True
        # lifecycle/duplicates.h, fixtures/x/: a file or a folder under scheduler/lifecycle/ ...
        return first in self.second and (word.endswith("/") or "." in word.rsplit("/", 1)[1])

    @staticmethod
    def clean(word):
        word = word.strip().strip("\"'")
        word = re.sub(r"#.*$", "", word)
        word = re.sub(r"(:\d+)+$", "", word)
        word = re.sub(r"::\w.*$", "", word)
        return word.rstrip(".,;:)!?'\"")

    @staticmethod
    def placeholder(word):
        return (not word or "://" in word or word.startswith(("/", "~", "..")) or "<" in word
                or ">" in word or "..." in word or "…" in word or "$" in word or "%" in word
                or "=" in word or "@" in word or "\\" in word
                or re.search(r"(^|/)[A-Z][A-Z0-9_]+(/|$|\.)", word) is not None)

    def exists(self, word, bases):
        for alt in expand_braces(word):
            ok = False
            for base in bases:
                p = os.path.normpath(os.path.join(self.root, base, alt))
                if any(c in alt for c in "*?["):
                    ok = ok or bool(glob.glob(p))
                else:
                    # A name without its extension stands for its files (web/router: .h, .cpp).
                    ok = ok or os.path.exists(p) or ("." not in os.path.basename(p)
                                                     and bool(glob.glob(glob.escape(p) + ".*")))
            if not ok:
                return False
        return True

    def bare_name_exists(self, word):
        return all(fnmatch.filter(self.names, alt) for alt in expand_braces(word))

    def check_word(self, word, doc, link=False):
        word = self.clean(word)
        if self.placeholder(word):
            return None
        if "/" not in word:
            if link or not BARE_SOURCE.fullmatch(word):
                return None
            CHECKED["path"] += 1
            return None if self.bare_name_exists(word) else word
        if link:
            if word.startswith("#") or ":" in word.split("/")[0]:
                return None
            CHECKED["path"] += 1
            return None if self.exists(word, [doc.dir]) else word
        if not self.first_part_known(word, doc.dir):
            return None
        CHECKED["path"] += 1
        bases = ["", doc.dir] + [t for t in sorted(self.top)
                                 if os.path.isdir(os.path.join(self.root, t, word.split("/")[0]))]
        return None if self.exists(word, bases) else word


# A word in prose or code that may be a path: letters, digits and ./_-*?{}, with a "/"; or a
# source file's name without one.
PATH_WORD = re.compile(r"(?<![\w./:@$<>-])"
                       r"([A-Za-z0-9_][A-Za-z0-9_./*?{},-]*/[A-Za-z0-9_./*?{},-]*)")
BARE_SOURCE = re.compile(r"[A-Za-z0-9_*?][A-Za-z0-9_*?-]*\.(?:cpp|hpp|cc|h|\{[a-z,]+\})")
BARE_WORD = re.compile(r"(?<![\w./:@$<>*{}-])"
                       r"([A-Za-z0-9_][A-Za-z0-9_-]*\.(?:cpp|hpp|cc|h))(?![\w/-])")


def collapse_braces(text):
    """scheduler/{a.h, b.h} -> scheduler/{a.h,b.h}: one word."""
    return re.sub(r"\{[^{} ]*(, [^{} ]*)+\}", lambda b: b.group(0).replace(" ", ""), text)


def find_paths(doc, paths):
    stale = []
    seen = set()

    def report(n, word):
        if word and (n, word) not in seen:
            seen.add((n, word))
            stale.append((n, "path", word))

    for n, span in doc.code_spans():
        if re.search(r"https?://", span):
            continue
        for word in collapse_braces(span).split():
            report(n, paths.check_word(word, doc))
    for n, target in doc.links():
        report(n, paths.check_word(target, doc, link=True))
    for n, text in doc.prose + doc.code:
        text = re.sub(r"`[^`]*`", " ", text)          # spans: checked above
        text = re.sub(r"\]\([^)]*\)", "]", text)      # link targets: checked above
        text = re.sub(r"\S+://\S+", " ", text)        # URLs
        text = collapse_braces(text)
        for m in BARE_WORD.finditer(text):
            report(n, paths.check_word(m.group(1), doc))
        for m in PATH_WORD.finditer(text):
            word = m.group(1)
            # A folder name followed by prose ("web/ routes") or a placeholder ("tests/<area>").
            after = text[m.end():m.end() + 1]
            if after in ("<", "$"):
                continue
            report(n, paths.check_word(word, doc))
    return stale


# ---- commands ---------------------------------------------------------------------------

CMD_START = re.compile(r"(?:^|[\s(|;&]|<\(|/)orchestrate\s+(\S.*)$")


def walk_command(words, tree):
    """The first word not in the tree, or None."""
    path = ""
    for word in words:
        if path not in tree:  # a command with no subcommands: the rest are arguments
            return None
        if not WORD.match(word.split("|")[0]):
            return None
        alts = word.split("|")
        for alt in alts:
            if alt not in tree[path]:
                return (path + " " + alt).strip()
        path = (path + " " + alts[0]).strip()
    return None


def find_commands(doc, tree):
    stale = []
    candidates = [(n, s) for n, s in doc.code_spans() if re.match(r"\s*(\S*/)?orchestrate\s", s)]
    for n, line in doc.code:
        line = re.sub(r"(^|\s)#.*$", "", line)
        if re.match(r"\s*(\$\s+|sudo\s+|\S*/)?orchestrate\s", line) or "<(orchestrate" in line:
            candidates.append((n, line))
    for n, text in candidates:
        m = CMD_START.search(text)
        if not m:
            continue
        words = [w for w in re.split(r"[\s;&)]+", m.group(1)) if w]
        CHECKED["command"] += 1
        bad = walk_command(words, tree)
        if bad:
            stale.append((n, "command", "orchestrate " + bad))
    return stale


# ---- keys ------------------------------------------------------------------------------

def key_parts(name):
    return [p for p in re.split(r"[.\[\]]+", name) if IDENT.match(p)]


def yaml_keys(code_lines, sections):
    """(line, key) of the keys of a YAML block whose place the parsers fix: the top level's, a
    section's (a key the parsers open with child()), and the keys of the maps listed under a
    top-level key or a section (clusters: - name: ...). The keys of any other map (env, teams,
    secrets, priority_classes ...) are names the user chose, and are not checked."""
    out = []
    stack = []  # [column, map_checked, items_checked, is_list_item]
    for n, line in code_lines:
        line = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        m = re.match(r"( *)(- +)?(.*)$", line)
        if not m.group(3) or line.strip() in ("---", "..."):
            continue
        col = len(m.group(1))
        if m.group(2):  # a list item at `col`: its map belongs to the list's owner
            while stack and (stack[-1][0] > col or (stack[-1][0] == col and stack[-1][3])):
                stack.pop()
            items = stack[-1][2] if stack else True  # a fragment of a list: its entries
            stack.append([col, items, False, True])
            col += len(m.group(2))
        while stack and stack[-1][0] >= col:
            stack.pop()
        km = re.match(r"([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?:\s+|$)(.*)$", m.group(3))
        if not km:
            if m.group(3).startswith(("{", "[")):
                parent = stack[-1] if stack else [0, True, True, False]
                out += flow_keys(n, m.group(3), parent[1], parent[2], sections)
            continue
        key, value = km.group(1), km.group(2)
        checked = stack[-1][1] if stack else True
        if checked:
            out.append((n, key))
        map_checked = checked and key in sections
        items_checked = checked and (not stack or key in sections)
        stack.append([col, map_checked, items_checked, False])
        out += flow_keys(n, value, map_checked, items_checked, sections)
    return out


def flow_keys(n, value, map_checked, items_checked, sections):
    """The keys of a flow value ({a: 1, b: {c: 2}}, [{a: 1}]) whose first bracket's map or
    list is checked as told."""
    out = []
    frames = []  # [kind, checked, last key, last key checked]
    for tok in re.finditer(r"[{}\[\]]|([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?=\s|$)|[^{}\[\]]", value):
        t = tok.group(0)
        if t in ("{", "["):
            if not frames:
                checked = map_checked if t == "{" else items_checked
            elif frames[-1][0] == "{":
                key, key_checked = frames[-1][2], frames[-1][3]
                checked = key_checked and key in sections
            else:
                checked = frames[-1][1] and t == "{"
            frames.append([t, checked, None, False])
        elif t in ("}", "]"):
            if frames:
                frames.pop()
        elif tok.group(1) and frames and frames[-1][0] == "{":
            frames[-1][2], frames[-1][3] = tok.group(1), frames[-1][1]
            if frames[-1][1]:
                out.append((n, tok.group(1)))
    return out


def find_keys(doc, keys, sections):
    stale = []
    named = []
    in_key_table = False
    for n, text in doc.prose:
        if text.startswith("|"):
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if cells and cells[0].lower() == "key":
                in_key_table = True
                continue
            if in_key_table and not re.fullmatch(r"[-: ]*", cells[0]):
                for span in re.findall(r"`([^`]+)`", cells[0]):
                    named.append((n, span.split(":")[0].strip()))
        else:
            in_key_table = False
    if doc.rel == "docs/config.md":
        for n, span in doc.code_spans():
            m = re.fullmatch(r"\s*([a-z_][a-z0-9_.]*):(\s.*)?", span)
            if m:
                named.append((n, m.group(1)))
    for block in doc.yaml_blocks:
        named += yaml_keys(block, sections)
    for n, name in named:
        if " " in name:
            continue
        CHECKED["key"] += 1
        for part in key_parts(name):
            if part not in keys:
                stale.append((n, "key", name if part == name else "%s (in %s)" % (part, name)))
                break
    return stale


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, orchestrate = argv[1], argv[2]
    sources = argv[3:] or ["scheduler/spec", "simulator/scenario.cpp", "simulator/fleet_scenario.cpp"]
    tree = command_tree(orchestrate)
    keys, sections = spec_keys(root, sources)
    paths = Paths(root)
    files = doc_files(root)
    problems = 0
    for rel in files:
        doc = Doc(root, rel)
        stale = find_paths(doc, paths)
        if rel not in KUBE_TEXT:
            stale += find_commands(doc, tree) + find_keys(doc, keys, sections)
        for n, kind, name in sorted(stale):
            print('%s:%d: stale %s "%s"' % (rel, n, kind, name))
            problems += 1
    print("docs_names_check: %d files; %d paths, %d commands, %d keys named; %d stale" %
          (len(files), CHECKED["path"], CHECKED["command"], CHECKED["key"], problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
