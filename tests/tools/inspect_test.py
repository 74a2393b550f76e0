#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""floe-inspect on a converted model: the text agrees with floe-convert's own
summary (op count, planned arena, its lower bound), both SVGs are valid XML,
and rsvg-convert renders each to a PNG that is really a picture (decoded here
with zlib: non-zero size, many colours, not one flat background). The plan
has a legend and names its tensors; the graph is Graphviz's layout (one node
per op and per arena tensor, scratch tensors inside their op), also as a PNG.
In tflite mode floe-inspect opens the .tflite itself and must show what
floe-convert makes of it.

  inspect_test.py model CONVERT INSPECT WORK_DIR NAME -- <floe-convert args>
  inspect_test.py tflite CONVERT INSPECT WORK_DIR NAME -- <floe-convert args>
  inspect_test.py corrupt CONVERT INSPECT WORK_DIR NAME -- <floe-convert args>
A model whose graph is missing (the ../shared corpus) is SKIPPED (exit 77)."""
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SKIPPED = 77  # ctest's SKIP_RETURN_CODE


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(cmd, expect_rc=0):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if expect_rc is not None and r.returncode != expect_rc:
        fail("%s: exit %d (expected %d)\n%s%s" % (" ".join(cmd), r.returncode, expect_rc, r.stdout, r.stderr))
    return r


def decode_png(path):
    """(width, height, set of distinct pixel values, share of the most common value)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour_type)
    if depth != 8 or channels is None or interlace != 0:
        fail("%s: PNG layout %d-bit colour type %d interlace %d not decoded here" % (path, depth, colour_type, interlace))
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    counts = {}
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):  # undo the scanline filter (PNG spec, section 9)
            a = row[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + a) & 255
            elif kind == 2:
                row[i] = (row[i] + b) & 255
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, channels):
            pixel = bytes(row[x:x + channels])
            counts[pixel] = counts.get(pixel, 0) + 1
        previous = row
    top = max(counts.values())
    return width, height, counts, top / float(width * height)


def check_svg(svg, png, min_rects, rsvg):
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail("%s: not valid XML: %s" % (svg, e))
    rects = root.findall(".//{http://www.w3.org/2000/svg}rect")
    if len(rects) < min_rects:
        fail("%s: %d boxes, expected at least %d" % (svg, len(rects), min_rects))
    run([rsvg, "-o", png, svg])
    width, height, counts, flat = decode_png(png)
    print("  %s: %dx%d px, %d colours, %.1f %% background, %d boxes" % (png, width, height, len(counts),
                                                                        100 * flat, len(rects)))
    if width <= 0 or height <= 0 or len(counts) < 8 or flat > 0.97:
        fail(png + ": an empty or flat picture")


def check_graph(svg, png, text, ops, arena_tensors, rsvg):
    """Graphviz's SVG: a node per op and per arena tensor that is not scratch."""
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    nodes = [g for g in root.iter(ns + "g") if g.get("class") == "node"]
    titles = [g.findtext(ns + "title") for g in nodes]
    op_nodes = [t for t in titles if t and t.startswith("op")]
    tensor_nodes = [t for t in titles if t and t.startswith("t")]
    scratch = len(re.findall(r"scratch t\d+ \d+ B", open(svg).read()))
    if len(op_nodes) != ops:
        fail("%s: %d op nodes, the model has %d ops (is it dot's layout?)" % (svg, len(op_nodes), ops))
    if len(tensor_nodes) + scratch != arena_tensors:
        fail("%s: %d tensor nodes + %d scratch, the model has %d arena tensors" % (svg, len(tensor_nodes), scratch,
                                                                                  arena_tensors))
    edges = [g for g in root.iter(ns + "g") if g.get("class") == "edge"]
    if not edges:
        fail(svg + ": no edges")
    run([rsvg, "-o", png.replace("_dot.png", ".png"), svg])
    for picture in (png, png.replace("_dot.png", ".png")):
        width, height, counts, flat = decode_png(picture)
        print("  %s: %dx%d px, %d colours, %.1f %% background" % (picture, width, height, len(counts), 100 * flat))
        if width <= 0 or height <= 0 or len(counts) < 8 or flat > 0.995:
            fail(picture + ": an empty or flat picture")
    print("  graph: %d op nodes, %d tensor nodes, %d scratch tensors inside their ops, %d edges"
          % (len(op_nodes), len(tensor_nodes), scratch, len(edges)))


def main():
    mode, convert, inspect, work, name = sys.argv[1:6]
    args = sys.argv[7:] if sys.argv[6] == "--" else fail("missing --")
    graph = args[args.index("--graph") + 1]
    if not os.path.exists(graph):
        print("SKIPPED: %s not found (the ../shared corpus is absent)" % graph)
        return SKIPPED
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, name + ".floe")
    summary = run([convert] + args + ["-o", model]).stdout
    if mode == "corrupt":
        return check_corrupt(inspect, work, name, model)

    plan, graph_svg = os.path.join(work, name + "_plan.svg"), os.path.join(work, name + "_graph.svg")
    graph_png = os.path.join(work, name + "_graph_dot.png")
    if mode == "tflite":
        target = args[args.index("--target") + 1] if "--target" in args else "host"
        text = run([inspect, graph, "--target", target, "--plan", plan, "--graph", graph_svg]).stdout
        if "(converted from the .tflite for target %s)" % target not in text.splitlines()[0]:
            fail("the text does not say the .tflite was converted: " + text.splitlines()[0])
        run([inspect, graph, "--target", target, "--graph", graph_png])
    else:
        text = run([inspect, model, "--plan", plan, "--graph", graph_svg]).stdout
        run([inspect, model, "--graph", graph_png])
    print(text)
    # The converter's own figures: "ops (N): ..." and "arena: A bytes (lower bound B, ...".
    ops = int(re.search(r"^  ops \((\d+)\):", summary, re.M).group(1))
    arena, bound = map(int, re.search(r"^  arena: (\d+) bytes \(lower bound (\d+),", summary, re.M).groups())
    m = re.search(r"^  ops: (\d+) ", text, re.M)
    if not m or int(m.group(1)) != ops:
        fail("op count: floe-inspect %s, floe-convert %d" % (m and m.group(1), ops))
    m = re.search(r"^  arena: activations (\d+) B \(lower bound (\d+) B at op (\d+)", text, re.M)
    if not m or (int(m.group(1)), int(m.group(2))) != (arena, bound):
        fail("arena: floe-inspect %s, floe-convert %d (lower bound %d)" % (m and m.groups(), arena, bound))
    listed = re.findall(r"^  #(\d+) ([A-Z0-9_]+)  backend ", text, re.M)
    if [int(i) for i, _ in listed] != list(range(ops)):
        fail("the op list does not hold ops 0..%d in order" % (ops - 1))
    # Every int8 weight shows its quantization (an int8 scratch tensor, such as
    # an im2col buffer, has none).
    for row in re.findall(r"^ +\d+ int8 +\S+ +constant .*$", text, re.M):
        if " scale " not in row and "channels (axis" not in row:
            fail("int8 tensor without its quantization: " + row)
    if re.search(r"^ +\d+ int8 ", text, re.M) and "channels (axis" not in text:
        fail("an int8 model whose per-channel weights are not listed as such")
    arena_tensors = len(re.findall(r"^ +\d+ \S+ +\S+ +arena ", text, re.M))
    if arena_tensors == 0:
        fail("no arena tensor listed")
    rsvg = shutil.which("rsvg-convert")
    if rsvg is None:
        fail("rsvg-convert not found (Debian: librsvg2-bin; .ci/install-deps.sh installs it)")
    check_svg(plan, os.path.join(work, name + "_plan.png"), arena_tensors, rsvg)
    plan_text = open(plan).read()
    if "peak: most live bytes" not in plan_text or "written by " not in plan_text:
        fail(plan + ": no legend")
    # Box labels: the size, then the name wrapped over the lines the box holds.
    labels = "".join(t.text or "" for t in ET.parse(plan).getroot().iter("{http://www.w3.org/2000/svg}text"))
    named = re.findall(r"^ +\d+ \S+ +\S+ +arena +\d+ +\d+ +\S+ +(\S+)", text, re.M)
    labelled = [n for n in named if n[-10:] in labels]
    if named and not labelled:
        fail(plan + ": no tensor is labelled with its name")
    print("  plan: %d of %d arena tensors labelled with (the tail of) their name" % (len(labelled), len(named)))
    check_graph(graph_svg, graph_png, text, ops, arena_tensors, rsvg)
    print("PASS: %s: %d ops, arena %d B (lower bound %d B), both pictures rendered" % (name, ops, arena, bound))
    return 0


def check_corrupt(inspect, work, name, model):
    data = open(model, "rb").read()
    cases = {
        "truncated": data[:len(data) // 3],
        "not-a-model": b"this is not a floe model\n" * 8,
        # One byte of the last constant changed: the structure still validates,
        # the file checksum does not.
        "flipped-byte": data[:-40] + bytes([data[-40] ^ 0x5A]) + data[-39:],
    }
    for case, content in cases.items():
        path = os.path.join(work, "%s_%s.floe" % (name, case))
        svg = path + ".svg"
        if os.path.exists(svg):
            os.remove(svg)
        open(path, "wb").write(content)
        r = run([inspect, path, "--plan", svg], expect_rc=2)
        message = r.stderr.strip()
        print("  %s: %s" % (case, message))
        if not message.startswith("floe-inspect: error: " + path + ": ") or "\n" in message or r.stdout:
            fail("%s: expected one error line naming the file and nothing on stdout, got\n%s%s" %
                 (case, r.stdout, r.stderr))
        if os.path.exists(svg) or os.path.exists(svg + ".tmp"):
            fail(case + ": a picture was written for a refused model")
    print("PASS: every damaged file is refused with one message")
    return 0


if __name__ == "__main__":
    sys.exit(main())
