#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""floe's flash in a firmware of one's own (examples/tflite_firmware).

For each model name: runs app_<name>.elf under qemu-system-arm (it must print
"firmware: PASS": the output equals the host's), then

  floe's code = (.text + .rodata + .data of app_<name>)
              - (the same of app_<name>_without_floe)  the firmware without floe
              - the model's bytes (FLOE_M_MODEL_SIZE)

from arm-none-eabi-size, and prints it with a breakdown by component read from
the linker map (input sections; string literals merged across objects count in
each, so the parts may sum to a little more than the total). Fails when a
model's figure is above its --limit. Standard library only.
"""
import argparse
import collections
import os
import re
import subprocess
import sys


def flash_bytes(size_tool, elf):
    out = subprocess.run([size_tool, "-B", elf], capture_output=True, text=True, check=True).stdout
    text, data = out.splitlines()[1].split()[:2]
    return int(text) + int(data)


def model_bytes(header):
    with open(header) as f:
        m = re.search(r"#define FLOE_M_MODEL_SIZE (\d+)u", f.read())
    return int(m.group(1))


def component(archive, member):
    if archive == "libfloe_runtime.a":
        if member.startswith(("registry", "all_kernels")):
            return "registry"
        if member.startswith("control_flow"):
            return "control flow"
        return "core"
    if archive == "libfloe_kernels_common.a":
        return "kernels: common"
    if archive == "libfloe_kernels_ref.a":
        return "kernels: reference " + member.split(".")[0]
    if archive == "libfloe_kernels_cortexm.a":
        return "kernels: Cortex-M " + member.split(".")[0]
    if re.match(r"lib(c|c_nano|g|g_nano|m|gcc)\.a$", archive):
        return "libc/libm/libgcc"
    return None


def map_parts(map_path):
    """Bytes in the image per component, from the map's input sections."""
    parts = collections.Counter()
    lines = open(map_path).read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Linker script and memory map"))
    pending = None
    for line in lines[start:]:
        m = re.match(r"^ (\.[^ ]+)$", line)
        if m:
            pending = m.group(1)
            continue
        section = None
        m = re.match(r"^ (\.[^ ]+) +0x[0-9a-f]+ +0x([0-9a-f]+) +(.+)$", line)
        if m:
            section, size, where = m.group(1), int(m.group(2), 16), m.group(3)
        elif pending:
            m = re.match(r"^ +0x[0-9a-f]+ +0x([0-9a-f]+) +(.+)$", line)
            if m:
                section, size, where = pending, int(m.group(1), 16), m.group(2)
        pending = None
        if not section or not size or not re.match(r"^\.(text|rodata|data)", section):
            continue
        if section.startswith(".rodata.floe_model"):
            continue
        m = re.search(r"/([^/()]+\.a)\(([^)]+)\)$", where)
        if m:
            name = component(m.group(1), m.group(2))
        elif "floe_kernels.cc" in where:
            name = "registry"  # the firmware's kernel selection
        else:
            name = None
        if name:
            parts[name] += size
    return parts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the examples/tflite_firmware build directory")
    parser.add_argument("--size", default="arm-none-eabi-size")
    parser.add_argument("--qemu", default="qemu-system-arm")
    parser.add_argument("--limit", action="append", default=[], help="NAME=BYTES (repeatable; one per model)")
    args = parser.parse_args()
    failed = False
    for spec in args.limit:
        name, limit = spec.split("=")
        limit = int(limit)
        app = os.path.join(args.build, "app_%s.elf" % name)
        base = os.path.join(args.build, "app_%s_without_floe.elf" % name)
        run = subprocess.run([args.qemu, "-M", "mps2-an386", "-nographic", "-semihosting-config",
                              "enable=on,target=native", "-kernel", app],
                             capture_output=True, text=True, timeout=300)
        output = run.stdout + run.stderr
        if run.returncode != 0 or "firmware: PASS" not in output:
            print("%s: the firmware failed (exit %d):\n%s" % (name, run.returncode, output))
            failed = True
            continue
        model = model_bytes(os.path.join(args.build, "floe_models", "app_" + name, "m", "floe_m_model.h"))
        total, without = flash_bytes(args.size, app), flash_bytes(args.size, base)
        floe = total - without - model
        base_parts = map_parts(base + ".map")
        parts = map_parts(app + ".map")
        parts["libc/libm/libgcc"] -= base_parts["libc/libm/libgcc"]
        verdict = "ok" if floe <= limit else "ABOVE THE LIMIT"
        print("%s: firmware %d B, without floe %d B, model %d B: floe's code %d B (limit %d: %s)" %
              (name, total, without, model, floe, limit, verdict))
        for part, size in sorted(parts.items(), key=lambda kv: (kv[0].startswith("kernels"), -kv[1])):
            if size:
                print("    %-40s %7d" % (part, size))
        failed = failed or floe > limit
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
