#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps the documentation's commands true (ctest docs_commands, label docs).

Reads README.md and the pages listed in PAGES (plus every README.md that
README.md links to), and checks:
  - every fenced ```sh / ```bash / ```console block: each command line that
    invokes a floe tool (floe-convert, floe-run, floe-inspect, floe-embed,
    floe-bench; also as build/host/bin/floe-..., $bin/floe-..., .venv/bin/...)
    uses only --long-options that tool's --help prints (floe-embed: the help of
    the subcommand it names);
  - `cmake --preset X`, `cmake --build --preset X`, `cmake --workflow --preset X`
    and `ctest --preset X`: X is such a preset in CMakePresets.json;
  - `./script`, `bash|sh|python3 path`, and commands named by a path into the
    source tree (tests/..., .ci/..., ports/...): the file exists;
  - `qemu-system-arm -M board`: a board ports/cortex-m/toolchain.cmake knows;
  - every relative markdown link [text](path) in those pages: the file exists;
  - README.md has at most MAX_README_LINES lines;
  - and runs, page by page in a scratch directory, every floe-tool command
    whose input files are in the source tree or written by an earlier command
    of the page: each must exit 0 (a command naming a placeholder such as
    model.tflite is listed as not run).
Prints what it checked; exits 1 with the failures listed.

  doc_commands_test.py --bin DIR [--root SOURCE_DIR]
DIR is the build's bin directory (where floe-convert and the other tools are).
Python 3 standard library only."""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import sys

MAX_README_LINES = 250
# The pages the README's "Documentation" list gives (relative to the source root).
PAGES = [
    "README.md",
    "converter/README.md",
    "converter/ops/README.md",
    "converter/frontend/tflite/README.md",
    "converter/quantize/README.md",
    "converter/passes/README.md",
    "converter/plan/README.md",
    "converter/python/README.md",
    "runtime/README.md",
    "ports/README.md",
    "schemas/README.md",
    "tests/README.md",
    "tests/fuzz/README.md",
]
TOOLS = ("floe-convert", "floe-run", "floe-inspect", "floe-embed", "floe-bench")
SHELL_LANGUAGES = ("sh", "bash", "console", "shell")
INTERPRETERS = ("bash", "sh", "python3", "/usr/bin/python3", "python")
# A command named by a path in one of these source folders must exist.
SOURCE_DIRS = ("tests/", ".ci/", "ports/", "examples/", "converter/", "runtime/", "schemas/")
SEPARATORS = {"&&", "||", "|", ";", "&", "(", ")", ";;"}

failures = []
checks = 0


def fail(where, message):
    failures.append("%s: %s" % (where, message))
    print("FAIL  %s: %s" % (where, message))


def ok(where, message):
    global checks
    checks += 1
    print("ok    %s: %s" % (where, message))


def shell_blocks(text):
    """(first line number, [(line number, command text)]) for each shell block;
    backslash continuations joined, console blocks' prompts ($ ) only."""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```+\s*([A-Za-z0-9_+-]*)", lines[i])
        if not m:
            i += 1
            continue
        language = m.group(1).lower()
        start = i + 1
        i += 1
        body = []
        while i < len(lines) and not re.match(r"^\s*```", lines[i]):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1  # the closing fence
        if language not in SHELL_LANGUAGES:
            continue
        commands = []
        pending, pending_line = "", None
        for number, line in body:
            if language == "console" and pending_line is None:
                if not line.lstrip().startswith("$ "):
                    continue  # output
                line = line.lstrip()[2:]
            if pending_line is None:
                pending_line = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            pending += line
            if pending.strip():
                commands.append((pending_line, pending.strip()))
            pending, pending_line = "", None
        if pending.strip():
            commands.append((pending_line, pending.strip()))
        blocks.append((start, commands))
    return blocks


def split_command(command):
    """The command's simple commands (lists of words), split at && || | ; &."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError as error:
        raise ValueError("cannot parse as a shell command (%s)" % error)
    segments, current = [], []
    for token in tokens:
        if token in SEPARATORS:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(token)
    if current:
        segments.append(current)
    return segments


def strip_env(words):
    """Drops leading VAR=value assignments (and `env`)."""
    i = 0
    while i < len(words) and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[i]) or words[i] == "env"):
        i += 1
    return words[i:]


def tool_of(word):
    base = word.rstrip("\"'").split("/")[-1]
    return base if base in TOOLS else None


def long_options(words):
    """--long-option names in words ([--opt], --opt=value, a|--b included)."""
    found = []
    for word in words:
        for m in re.finditer(r"(?:^|[\[|(,])(--[A-Za-z0-9][A-Za-z0-9-]*)", word):
            found.append(m.group(1))
    return found


class Tools:
    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.cache = {}

    def help(self, tool, subcommand=None):
        key = (tool, subcommand)
        if key in self.cache:
            return self.cache[key]
        path = os.path.join(self.bin_dir, tool)
        if not os.access(path, os.X_OK):
            raise RuntimeError("%s not found in %s (build it: cmake --build --preset host)" % (tool, self.bin_dir))
        argv = [path] + ([subcommand] if subcommand else []) + ["--help"]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("%s exited %d:\n%s" % (" ".join(argv), r.returncode, r.stdout))
        self.cache[key] = r.stdout
        return r.stdout

    def subcommands(self, tool):
        text = self.help(tool)
        m = re.search(r"^Subcommands:\n((?:  \S.*\n?)+)", text, re.M)
        return [line.split()[0] for line in m.group(1).splitlines()] if m else []


def option_in_help(option, help_text):
    return re.search(r"(?<![A-Za-z0-9-])" + re.escape(option) + r"(?![A-Za-z0-9-])", help_text) is not None


def check_tool(where, words, index, tools):
    tool = tool_of(words[index])
    args = words[index + 1:]
    subcommand = None
    subs = tools.subcommands(tool)
    if subs:
        positional = [a for a in args if not a.startswith("-")]
        if positional and positional[0] in subs:
            subcommand = positional[0]
        else:
            fail(where, "%s needs a subcommand (%s)" % (tool, ", ".join(subs)))
            return
    help_text = tools.help(tool, subcommand)
    name = tool + (" " + subcommand if subcommand else "")
    options = long_options(args)
    bad = [o for o in options if not option_in_help(o, help_text)]
    if bad:
        fail(where, "%s: %s not in its --help" % (name, ", ".join(bad)))
    else:
        ok(where, "%s %s" % (name, " ".join(options) if options else "(no long options)"))


def check_presets(where, words, presets):
    program = words[0].split("/")[-1]
    if "--preset" not in words and not any(w.startswith("--preset=") for w in words):
        return
    for i, word in enumerate(words):
        if word == "--preset" and i + 1 < len(words):
            name = words[i + 1]
        elif word.startswith("--preset="):
            name = word.split("=", 1)[1]
        else:
            continue
        if program == "ctest":
            kind = "testPresets"
        elif "--build" in words:
            kind = "buildPresets"
        elif "--workflow" in words:
            kind = "workflowPresets"
        else:
            kind = "configurePresets"
        if "$" in name:
            ok(where, "%s preset %s (a variable: not checked)" % (program, name))
        elif name in presets.get(kind, ()):
            ok(where, "%s %s preset '%s' exists" % (program, kind, name))
        else:
            fail(where, "%s: no %s entry '%s' in CMakePresets.json (%s)" % (
                program, kind, name, ", ".join(sorted(presets.get(kind, ())))))


def check_path(where, root, path, why):
    if os.path.exists(os.path.join(root, path)):
        ok(where, "%s %s exists" % (why, path))
    else:
        fail(where, "%s %s does not exist" % (why, path))


def in_source_tree(path):
    return path.startswith("./") or path.startswith(SOURCE_DIRS)


def check_segment(where, words, root, tools, presets, boards):
    words = strip_env(words)
    if not words:
        return
    program = words[0]
    for i, word in enumerate(words):
        if tool_of(word):
            check_tool(where, words, i, tools)
            break
    if program.split("/")[-1] in ("cmake", "ctest"):
        check_presets(where, words, presets)
    if "$" not in program and "/" in program and in_source_tree(program):
        check_path(where, root, program[2:] if program.startswith("./") else program, "script")
    if program in INTERPRETERS:
        for word in words[1:]:
            if word.startswith("-"):
                if word in ("-m", "-c"):
                    break  # a module or inline code, no script file
                continue
            if "$" not in word and ("/" in word or re.search(r"\.(sh|py)$", word)) and in_source_tree(word):
                check_path(where, root, word[2:] if word.startswith("./") else word, "script")
            break
    if program.split("/")[-1] == "qemu-system-arm" and "-M" in words:
        board = words[words.index("-M") + 1]
        if board in boards:
            ok(where, "qemu-system-arm -M %s is a board of ports/cortex-m/toolchain.cmake" % board)
        else:
            fail(where, "qemu-system-arm -M %s: not a board of ports/cortex-m/toolchain.cmake (%s)" % (
                board, ", ".join(boards)))


def check_links(page, text, root):
    directory = os.path.dirname(os.path.join(root, page))
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*```", line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", line):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            where = "%s:%d" % (page, number)
            resolved = os.path.normpath(os.path.join(directory, path))
            if os.path.exists(resolved):
                ok(where, "link %s exists" % target)
            else:
                fail(where, "link %s: %s does not exist" % (target, os.path.relpath(resolved, root)))


def linked_readmes(root, text):
    """README.md files README.md links to (so a page added to its list is checked too)."""
    pages = []
    for m in re.finditer(r"\]\(([^)#\s]+/README\.md)(?:#[^)]*)?\)", text):
        path = os.path.normpath(m.group(1))
        if not path.startswith("..") and os.path.exists(os.path.join(root, path)):
            pages.append(path)
    return pages


PATH_SUFFIXES = (".meta", ".pb", ".pbtxt", ".tflite", ".floe", ".npy", ".npz", ".wav", ".svg", ".png", ".txt",
                 ".json", ".dot")
# Options whose value a tool writes, and options whose value (or NAME=value) it reads.
OUTPUT_OPTIONS = {
    "floe-convert": {"-o", "--output", "--error-json", "--op-selection"},
    "floe-inspect": {"--plan", "--graph"},
    "floe-run": {"-o", "--output-dir", "--dump-intermediates"},
}
INPUT_OPTIONS = {"-g", "--graph", "-c", "--checkpoint", "--calibration", "--selftest-input", "--front-end", "-i",
                 "--input", "--labels"}


def runnable(tool, words, root, work):
    """The command with its paths resolved (repo files from the source tree,
    earlier outputs from the work dir), or (None, the first missing input)."""
    outputs = OUTPUT_OPTIONS.get(tool, set())
    resolved, after = [], None
    for word in words:
        option, after = after, None
        if option in outputs:
            resolved.append(os.path.join(work, word))
            continue
        if word in outputs or word in INPUT_OPTIONS:
            resolved.append(word)
            after = word
            continue
        if word.startswith("-"):
            resolved.append(word)
            after = word
            continue
        name, eq, value = word.partition("=") if "=" in word else ("", "", word)
        if not eq:
            name, value = "", word
        is_path = option in INPUT_OPTIONS or value.endswith(PATH_SUFFIXES)
        if is_path:
            if os.path.exists(os.path.join(work, value)):
                value = os.path.join(work, value)
            elif os.path.exists(os.path.join(root, value)):
                value = os.path.join(root, value)
            else:
                return None, value
        resolved.append(name + eq + value)
    return resolved, None


def run_commands(page, commands, root, tools, work):
    """Runs each floe-tool command of the page whose inputs exist (in the repo
    or written by an earlier command of the page), in order, in `work`."""
    for number, command in commands:
        where = "%s:%d" % (page, number)
        try:
            segments = split_command(command)
        except ValueError:
            continue
        for words in segments:
            words = strip_env(words)
            if not words or tool_of(words[0]) is None:
                continue
            resolved, missing = runnable(tool_of(words[0]), words[1:], root, work)
            if resolved is None:
                print("skip  %s: %s not run (%s is a placeholder, not in the tree)" % (where, tool_of(words[0]),
                                                                                       missing))
                continue
            binary = os.path.join(tools.bin_dir, tool_of(words[0]))
            r = subprocess.run([binary] + resolved, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=300)
            if r.returncode != 0:
                fail(where, "`%s` exited %d:\n%s" % (" ".join(words), r.returncode, r.stdout[-2000:]))
            else:
                ok(where, "ran `%s`" % " ".join(words))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the build's bin directory (floe-convert, floe-run, ...)")
    parser.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                        "..", "..")),
                        help="the floe source tree (default: this script's ../..)")
    options = parser.parse_args()
    root = os.path.abspath(options.root)
    tools = Tools(os.path.abspath(options.bin))

    with open(os.path.join(root, "CMakePresets.json")) as f:
        preset_file = json.load(f)
    presets = {kind: {p["name"] for p in preset_file.get(kind, [])}
               for kind in ("configurePresets", "buildPresets", "testPresets", "workflowPresets")}
    with open(os.path.join(root, "ports/cortex-m/toolchain.cmake")) as f:
        boards = sorted(set(re.findall(r"FLOE_CORTEXM_BOARD STREQUAL \"([a-z0-9-]+)\"", f.read())))

    readme = os.path.join(root, "README.md")
    with open(readme) as f:
        readme_text = f.read()
    lines = readme_text.count("\n") + (0 if readme_text.endswith("\n") else 1)
    if lines <= MAX_README_LINES:
        ok("README.md", "%d lines (at most %d)" % (lines, MAX_README_LINES))
    else:
        fail("README.md", "%d lines, over the limit of %d: move detail into the pages it links"
             % (lines, MAX_README_LINES))

    pages = list(PAGES)
    for page in linked_readmes(root, readme_text):
        if page not in pages:
            pages.append(page)
    for page in pages:
        path = os.path.join(root, page)
        if not os.path.exists(path):
            fail(page, "page missing (listed in tests/docs/doc_commands_test.py or linked from README.md)")
            continue
        with open(path) as f:
            text = f.read()
        print("== %s" % page)
        check_links(page, text, root)
        work = tempfile.mkdtemp(prefix="floe-docs-")
        for _, commands in shell_blocks(text):
            run_commands(page, commands, root, tools, work)
        shutil.rmtree(work, ignore_errors=True)
        for _, commands in shell_blocks(text):
            for number, command in commands:
                where = "%s:%d" % (page, number)
                try:
                    segments = split_command(command)
                except ValueError as error:
                    fail(where, str(error))
                    continue
                for words in segments:
                    try:
                        check_segment(where, words, root, tools, presets, boards)
                    except (RuntimeError, subprocess.TimeoutExpired) as error:
                        fail(where, str(error))

    print()
    if failures:
        print("docs_commands: %d of %d checks failed:" % (len(failures), len(failures) + checks))
        for failure in failures:
            print("  " + failure)
        return 1
    print("docs_commands: all %d checks passed (%d pages)" % (checks, len(pages)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
