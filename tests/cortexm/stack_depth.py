#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Worst-case stack depth of the runtime's entry points on a Cortex-M build.

Reads the call graphs GCC writes with -fcallgraph-info=su (one .ci file per
object, VCG text: each function's own frame in bytes and its calls) under the
given build directories, and walks every path from
  floe::Model::Load, floe::Interpreter::Init and floe::Interpreter::Invoke.

Assumptions, printed with the result:
  * an indirect call reaches, from Interpreter::Init, any op's prepare step;
    from Model::load, the checksum step and the
    run-time loops' range check, and from verify_memory_plan their lifetime
    check (both through KernelRegistry::control_flow); from
    Interpreter::Invoke, the control-flow path (its plain path is a direct
    call); from
    anything else, any op's eval step: the worst of them is taken;
  * two recursions are bounded by the format and counted as such: the
    structure walk of verify_buffer.cc (tables nest at most 3 deep: Model,
    Operator, its options) and reference PAD's per-dimension walk (rank <= 8);
  * the Invoke observer callback is the application's own code: not counted;
  * a function without stack information (libc, libgcc) is counted as 0 bytes
    and listed;
  * recursion makes the depth unbounded: it is reported and fails the check.
Exit status 1 when the worst depth exceeds --limit (bytes) or recursion exists.
Standard library only.
"""
import argparse
import os
import re
import sys

NODE_RE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE_RE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
BYTES_RE = re.compile(r'\\n(\d+) bytes \((static|dynamic|dynamic,bounded)\)')
ENTRIES = ("floe::Model::Load(", "floe::Interpreter::Init(", "floe::Interpreter::Invoke(")
INDIRECT = "__indirect_call"
# Direct self-recursion with a bound the runtime guarantees: name part -> depth.
BOUNDED = {"Walker::table(": 3, "pad_dim(": 8}


def plain(title):
    """A function's mangled name without the "<source file>:" GCC prefixes to
    functions it defines (so a call from another object finds it). Same-named
    local functions of different objects merge, conservatively (largest frame,
    all calls)."""
    return title.rsplit(":", 1)[-1] if ".c" in title.split(":")[0] else title


def read_graphs(dirs):
    frames, names, calls, dynamic = {}, {}, {}, set()
    for root in dirs:
        for dirpath, _, files in os.walk(root):
            for f in files:
                if not f.endswith(".ci"):
                    continue
                with open(os.path.join(dirpath, f), errors="replace") as text:
                    for line in text:
                        m = NODE_RE.search(line)
                        if m:
                            title, label = m.groups()
                            title = plain(title)
                            names.setdefault(title, label.split("\\n")[0])
                            b = BYTES_RE.search(label)
                            if b:
                                frames[title] = max(frames.get(title, 0), int(b.group(1)))
                                if b.group(2) != "static":
                                    dynamic.add(title)
                            continue
                        m = EDGE_RE.search(line)
                        if m:
                            calls.setdefault(plain(m.group(1)), set()).add(plain(m.group(2)))
    return frames, names, calls, dynamic


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", help="build directories holding the .ci files")
    parser.add_argument("--limit", type=int, default=1024, help="fail above this many bytes")
    args = parser.parse_args()
    frames, names, calls, dynamic = read_graphs(args.dirs)
    if not frames:
        print("stack depth: no .ci call graphs found (build with -fcallgraph-info=su)")
        return 1
    def floe_fn(part):
        return [t for t, n in names.items() if t in frames and "floe::" in n and part in n]

    prepare_steps, eval_steps = floe_fn("prepare"), floe_fn("eval")
    checksum_steps = [t for t, n in names.items() if "Model::Load" in n and "lambda" in n]

    def named(part):
        return [t for t, n in names.items() if t in frames and part in n]

    loop_ranges, loop_lifetimes = named("Model::validate_loops("), named("check_loop_lifetimes(")
    control_flow_invoke = named("Interpreter::invoke_control_flow(")

    def indirect_targets(caller):
        name = names.get(caller, caller)
        if "Interpreter::Init(" in name:
            return prepare_steps
        if "Model::load(" in name:
            return checksum_steps + loop_ranges
        if "verify_memory_plan(" in name:
            return loop_lifetimes
        if "Interpreter::Invoke(" in name:
            return control_flow_invoke
        return eval_steps

    unknown = set()
    memo, on_path = {}, set()
    recursion = []

    def depth(title):
        """(bytes, path) of the deepest chain starting at `title`."""
        if title in memo:
            return memo[title]
        if title in on_path:
            recursion.append(names.get(title, title))
            return (0, [])
        on_path.add(title)
        own = frames.get(title)
        if own is None:
            unknown.add(names.get(title, title))
            own = 0
        bound = next((d for part, d in BOUNDED.items() if part in names.get(title, "")), 1)
        own *= bound
        best = (0, [])
        for callee in calls.get(title, ()):
            if bound > 1 and callee == title:
                continue  # counted in own
            targets = indirect_targets(title) if callee == INDIRECT else [callee]
            for t in targets:
                d = depth(t)
                if d[0] > best[0]:
                    best = d
        on_path.discard(title)
        memo[title] = (own + best[0], [(names.get(title, title), own)] + best[1])
        return memo[title]

    worst = 0
    for entry in ENTRIES:
        titles = [t for t, n in names.items() if entry in n and t in frames]
        if not titles:
            print("stack depth: entry %s not found" % entry)
            return 1
        for t in titles:
            total, path = depth(t)
            worst = max(worst, total)
            print("%s: %d bytes" % (entry.rstrip("("), total))
            for name, own in path:
                print("    %5d  %s%s" % (own, name[:110], "  (dynamic)" if name in dynamic else ""))
    print("indirect calls: worst of %d prepare steps (Init), %d eval steps (Invoke), %d checksum steps "
          "(Load); observer callback not counted; bounded recursion: %s" %
          (len(prepare_steps), len(eval_steps), len(checksum_steps),
           ", ".join("%s x%d" % (k.rstrip("("), v) for k, v in BOUNDED.items())))
    if unknown:
        print("no stack information (counted as 0): %s" % ", ".join(sorted(unknown)[:12]))
    if recursion:
        print("FAIL: recursion through %s" % ", ".join(sorted(set(recursion))))
        return 1
    print("worst-case stack depth: %d bytes (limit %d)" % (worst, args.limit))
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
