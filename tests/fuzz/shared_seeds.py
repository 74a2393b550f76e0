# SPDX-License-Identifier: Apache-2.0
# Assembles extra seeds for the long fuzz runs (tests/fuzz/README.md "Long runs") from the
# TensorFlow-written corpus: read-only seed dirs beside the committed ones, never
# committed. Deterministic (sorted walks); every file < 64 KiB (-max_len).
#   python3 shared_seeds.py SHARED_CORPUS OUT_DIR [FLOE_CONVERT]
# -> OUT_DIR/fuzz_graph (graphs), fuzz_ckpt_index (.index tables), fuzz_ckpt_data
#    (real checkpoints in that harness's structured encoding), fuzz_model (.floe
#    conversions, for every target, of one dl4j case per op family and of every
#    corpus .tflite, TFLM's own models and the MLPerf Tiny ones included; needs
#    FLOE_CONVERT), fuzz_tflite (the .tflite models, e.g. TFLM's own: 16x8
#    SEANet layers, LSTM, SVDF).
import os
import shutil
import struct
import subprocess
import sys

MAX_LEN = 65536
# Every kernel family a .floe can select: the Cortex-M targets' DSP / Helium
# kernels and packed layouts, the host's XNNPACK operators, the portable ones.
TARGETS = ["host", "reference", "cortex-m4", "cortex-m33", "cortex-m55"]
# fuzz_ckpt_data's tables (fuzz_ckpt_data.cc): key choice and TF dtype by index.
HARNESS_KEYS = ["kernel", "kernel/Adam", "bias", "global_step"]
HARNESS_DTYPES = [1, 2, 3, 9, 7, 10, 19, 14, 4, 6, 5, 21, 0, 100]
NOT_GRAPHS = {"fingerprint.pb", "saved_model_config.pb"}


def small_files(root, predicate):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if predicate(path, name) and 0 < os.path.getsize(path) < MAX_LEN:
                found.append(path)
    return found


def all_files(root, predicate):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        found += [os.path.join(dirpath, n) for n in sorted(filenames) if predicate(os.path.join(dirpath, n), n)]
    return found


def copy_seed(path, corpus, out_dir):
    name = os.path.relpath(path, corpus).replace(os.sep, "__")
    shutil.copyfile(path, os.path.join(out_dir, name))


def is_graph(path, name):
    if name in NOT_GRAPHS or "/dl4j_tf_graphs/examples/" in path:
        return False
    return name.endswith((".meta", ".pb", ".pbtxt", ".pb.txt", ".prototxt"))


def dl4j_family_graphs(corpus):
    examples = os.path.join(corpus, "dl4j_tf_graphs", "examples")
    picked = []
    if not os.path.isdir(examples):
        return picked
    for family in sorted(os.listdir(examples)):
        cases = []
        for case in sorted(os.listdir(os.path.join(examples, family))):
            pb = os.path.join(examples, family, case, "frozen_model.pb")
            if os.path.isfile(pb) and os.path.getsize(pb) < MAX_LEN:
                cases.append((os.path.getsize(pb), pb))
        if cases:
            pb = min(cases)[1]
            picked.append(pb)
            txt = os.path.join(os.path.dirname(pb), "frozen_graph.pbtxt")
            if os.path.isfile(txt) and os.path.getsize(txt) < MAX_LEN:
                picked.append(txt)
    return picked


# --- LevelDB table / BundleEntryProto reading (uncompressed blocks only) ---

def varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def block_entries(table, offset, size):
    if table[offset + size] != 0:  # compression type: 1 = Snappy, not read here
        raise ValueError("compressed block")
    block = table[offset:offset + size]
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * restarts
    pos, key = 0, b""
    while pos < end:
        shared, pos = varint(block, pos)
        unshared, pos = varint(block, pos)
        value_len, pos = varint(block, pos)
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + value_len]
        pos += value_len


def table_items(table):
    footer = table[-48:]
    pos = 0
    for _ in range(2):  # skip the metaindex handle
        _, pos = varint(footer, pos)
    index_off, pos = varint(footer, pos)
    index_size, pos = varint(footer, pos)
    for _, handle in block_entries(table, index_off, index_size):
        off, p = varint(handle, 0)
        size, _ = varint(handle, p)
        yield from block_entries(table, off, size)


def bundle_entry(proto):
    entry = {"dtype": 0, "dims": [], "shard": 0, "offset": 0, "size": 0, "crc": 0}
    pos = 0
    while pos < len(proto):
        tag, pos = varint(proto, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = varint(proto, pos)
            name = {1: "dtype", 3: "shard", 4: "offset", 5: "size"}.get(field)
            if name:
                entry[name] = value
        elif wire == 5:
            if field == 6:
                entry["crc"] = struct.unpack_from("<I", proto, pos)[0]
            pos += 4
        elif wire == 2:
            length, pos = varint(proto, pos)
            body = proto[pos:pos + length]
            pos += length
            if field == 2:  # TensorShapeProto: dim { size }
                p = 0
                while p < len(body):
                    t, p = varint(body, p)
                    n, p = varint(body, p)
                    dim = body[p:p + n]
                    p += n
                    if t >> 3 == 2:
                        size, q = 0, 0
                        while q < len(dim):
                            dt, q = varint(dim, q)
                            if dt >> 3 == 1:
                                size, q = varint(dim, q)
                            else:
                                break
                        entry["dims"].append(size)
        else:
            raise ValueError("unexpected wire type")
    return entry


def ckpt_data_seed(index_path):
    """fuzz_ckpt_data's byte layout for a 1-shard checkpoint, or None."""
    prefix = index_path[:-len(".index")]
    shard = prefix + ".data-00000-of-00001"
    if not os.path.isfile(shard) or os.path.getsize(shard) >= MAX_LEN - 256:
        return None
    with open(index_path, "rb") as f:
        table = f.read()
    try:
        entries = [bundle_entry(v) for k, v in table_items(table) if k]
    except (ValueError, IndexError, struct.error):
        return None
    entries = [e for e in entries if e["dtype"] in HARNESS_DTYPES and len(e["dims"]) < 6
               and all(d < 4097 for d in e["dims"])][:4]
    if not entries:
        return None
    out = bytearray([0, len(entries) - 1])  # flags: 1 shard, little endian, producer 1
    for i, e in enumerate(entries):
        out.append([0, 2, 3, 1][i])  # kernel, bias, global_step, kernel/Adam
        out.append(HARNESS_DTYPES.index(e["dtype"]))
        out.append(len(e["dims"]))
        for d in e["dims"]:
            out += bytes([d & 0xFF, d >> 8])
        out.append(0)  # shard 0
        out += struct.pack("<II", e["offset"], e["size"])
        out.append(1)  # stored CRC = the true CRC of the bytes
        out += struct.pack("<I", e["crc"])
    with open(shard, "rb") as f:
        out += f.read()
    return bytes(out)


def convert_seed(floe_convert, args, model):
    """Converts with `args` into `model`; keeps it when it converts and fits -max_len."""
    done = subprocess.run([floe_convert, "-q"] + args + ["-o", model],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if done and os.path.getsize(model) < MAX_LEN:
        return True
    if os.path.exists(model):
        os.remove(model)
    return False


def tflite_models(corpus, out_dir, floe_convert):
    made = 0
    for path in all_files(corpus, lambda p, n: n.endswith(".tflite")):
        name = os.path.relpath(path, corpus).replace(os.sep, "__")
        for target in TARGETS:
            made += convert_seed(floe_convert, ["--graph", path, "--target", target],
                                 os.path.join(out_dir, "%s__%s.floe" % (name, target)))
    return made


def dl4j_models(corpus, out_dir, floe_convert):
    cases_tsv = os.path.join(corpus, "dl4j_tf_graphs", "CASES.tsv")
    if not os.path.isfile(cases_tsv):
        return 0
    families = {}
    with open(cases_tsv) as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 8 or cols[7]:  # flagged cases (random ops, loops): skip
                continue
            family = cols[0].split("/")[0]
            outputs = ",".join(o.split(":")[0] for o in cols[4].split(", ") if o)
            families.setdefault(family, []).append((int(cols[6]), cols[0], outputs))
    made = 0
    for family in sorted(families):
        for target in TARGETS:
            for _, case, outputs in sorted(families[family]):
                graph = os.path.join(corpus, "dl4j_tf_graphs", "examples", case, "frozen_model.pb")
                model = os.path.join(out_dir, "%s__%s.floe" % (case.replace("/", "__"), target))
                if convert_seed(floe_convert, ["--graph", graph, "--outputs", outputs, "--target", target], model):
                    made += 1
                    break
    return made


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: shared_seeds.py SHARED_CORPUS OUT_DIR [FLOE_CONVERT]")
    corpus, out = sys.argv[1], sys.argv[2]
    dirs = {h: os.path.join(out, h)
            for h in ("fuzz_graph", "fuzz_ckpt_index", "fuzz_ckpt_data", "fuzz_model", "fuzz_tflite")}
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for path in small_files(corpus, is_graph) + dl4j_family_graphs(corpus):
        copy_seed(path, corpus, dirs["fuzz_graph"])
    for path in small_files(corpus, lambda p, n: n.endswith(".tflite")):
        copy_seed(path, corpus, dirs["fuzz_tflite"])
    indexes = small_files(corpus, lambda p, n: n.endswith(".index"))
    for path in indexes:
        copy_seed(path, corpus, dirs["fuzz_ckpt_index"])
        seed = ckpt_data_seed(path)
        if seed is not None:
            name = os.path.relpath(path, corpus).replace(os.sep, "__")
            with open(os.path.join(dirs["fuzz_ckpt_data"], name + ".structured"), "wb") as f:
                f.write(seed)
    if len(sys.argv) == 4:
        dl4j_models(corpus, dirs["fuzz_model"], sys.argv[3])
        tflite_models(corpus, dirs["fuzz_model"], sys.argv[3])
    for harness, d in sorted(dirs.items()):
        files = os.listdir(d)
        print(f"{harness}: {len(files)} seeds, {sum(os.path.getsize(os.path.join(d, f)) for f in files)} bytes")


if __name__ == "__main__":
    main()
