# SPDX-License-Identifier: Apache-2.0
"""Self-test of tf1_writer: /usr/bin/python3 examples/tf1_writer/test_tf1_writer.py"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf1_writer as w  # noqa: E402

# tf-formats.md §11.9: checkpoint with tensor `w` = float32 [1.0, 2.0].
DOC_INDEX_11_9 = bytes.fromhex(
    "00 00 06 08 01 1a 02 08 01 00 01 0f 77 08 01 12"
    "04 12 02 08 02 28 08 35 59 3c e5 35 00 00 00 00"
    "01 00 00 00 00 09 21 ad c3 00 00 00 00 01 00 00"
    "00 00 c0 f2 a1 b0 00 01 02 78 00 24 00 00 00 00"
    "01 00 00 00 00 ab 30 70 7f 29 08 36 0e 00 00 00"
    + "00" * 32 +
    "00 57 fb 80 8b 24 75 47 db".replace(" ", ""))
DOC_DATA_11_9 = bytes.fromhex("0000803f00000040")


def _varint(b, p):
    r = s = 0
    while True:
        c = b[p]
        p += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, p


def _block_entries(block):
    """Decode a table block (independent of the writer's BlockBuilder)."""
    nr = struct.unpack("<I", block[-4:])[0]
    restarts = list(struct.unpack("<%dI" % nr, block[-4 - 4 * nr:-4]))
    end = len(block) - 4 - 4 * nr
    p, key, out, offsets = 0, b"", [], []
    while p < end:
        offsets.append(p)
        shared, p = _varint(block, p)
        unshared, p = _varint(block, p)
        vlen, p = _varint(block, p)
        key = key[:shared] + block[p:p + unshared]
        p += unshared
        out.append((key, block[p:p + vlen]))
        p += vlen
    return out, restarts, offsets


class WireFormat(unittest.TestCase):
    def test_varints(self):
        self.assertEqual(w.encode_varint(0), b"\x00")
        self.assertEqual(w.encode_varint(300), b"\xac\x02")
        self.assertEqual(w.encode_varint(-1).hex(" "), "ff ff ff ff ff ff ff ff ff 01")
        self.assertEqual(len(w.encode_varint(-2 ** 63)), 10)

    def test_negative_dim(self):
        # Dim {size: -1} = 08 ff ff ff ff ff ff ff ff ff 01 (tf-formats.md §0 rule 1)
        dim = w.shape_proto([-1]).fields[0].value.serialize()
        self.assertEqual(dim.hex(" "), "08 ff ff ff ff ff ff ff ff ff 01")

    def test_packed_and_oneof_defaults(self):
        self.assertEqual(w.attr_b(False).serialize(), b"\x28\x00")
        self.assertEqual(w.attr_s("").serialize(), b"\x12\x00")
        self.assertEqual(w.attr_list_i([]).serialize(), b"\x0a\x00")
        self.assertEqual(w.attr_list_i([1, 2, 2, 1]).serialize(),
                         bytes.fromhex("0a 06 1a 04 01 02 02 01".replace(" ", "")))
        self.assertEqual(w.attr_shape([]).serialize(), b"\x3a\x00")

    def test_tensor_proto_rules(self):
        # N > 1 float -> tensor_content; scalar -> float_val; broadcast -> one value
        tp = w.tensor_proto(np.array([1.0, 2.0], np.float32))
        self.assertEqual(tp.serialize(), bytes.fromhex(
            "0801 1204 12020802 2208 0000803f00000040".replace(" ", "")))
        self.assertEqual(w.tensor_proto(np.float32(0.5)).serialize(),
                         bytes.fromhex("0801 1200 2a04 0000003f".replace(" ", "")))
        self.assertEqual(w.tensor_proto(np.float32(0), shape=[3]).serialize(),
                         bytes.fromhex("0801 1204 12020803 2a04 00000000".replace(" ", "")))
        self.assertEqual(w.tensor_proto(np.array([7], np.int32)).serialize(),
                         bytes.fromhex("0803 1204 12020801 3a01 07".replace(" ", "")))
        self.assertEqual(w.tensor_proto(b"model", w.DT_STRING).serialize(),
                         bytes.fromhex("0807 1200 4205".replace(" ", "")) + b"model")

    def test_text_format(self):
        self.assertEqual(w.c_escape(b"\x00\x00\x80?\x00\x00\x00@"), r"\000\000\200?\000\000\000@")
        self.assertEqual(w.c_escape(b"a\"'\\\n"), "a\\\"\\'\\\\\\n")
        self.assertEqual(w.shortest_float32_repr(1.0 / 28.0), "0.035714287")
        self.assertEqual(w.shortest_float32_repr(0.0), "0.0")
        self.assertEqual(w.shortest_float32_repr(1e-5), "1e-05")
        g = w.Graph()
        w.placeholder(g, "x", w.DT_FLOAT, [-1, 2])
        self.assertEqual(g.graph_def().to_text(), (
            'node {\n  name: "x"\n  op: "Placeholder"\n'
            '  attr {\n    key: "dtype"\n    value {\n      type: DT_FLOAT\n    }\n  }\n'
            '  attr {\n    key: "shape"\n    value {\n      shape {\n'
            '        dim {\n          size: -1\n        }\n'
            '        dim {\n          size: 2\n        }\n      }\n    }\n  }\n}\n'
            'versions {\n  producer: 38\n}\n'))


class Checkpoint(unittest.TestCase):
    def test_crc32c(self):
        self.assertEqual(w.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(w.mask_crc(0xE3069283), 0xC78AB0E5)
        self.assertEqual(w.unmask_crc(w.mask_crc(0x12345678)), 0x12345678)
        self.assertEqual(w.crc32c(b"6789", w.crc32c(b"12345")), 0xE3069283)

    def test_doc_example_11_9(self):
        self.assertEqual(len(DOC_INDEX_11_9), 121)
        index, data = w.checkpoint_bundle([("w", np.array([1.0, 2.0], np.float32))])
        self.assertEqual(data, DOC_DATA_11_9)
        self.assertEqual(index, DOC_INDEX_11_9)

    def test_write_files(self):
        d = tempfile.mkdtemp()
        try:
            prefix = os.path.join(d, "model")
            w.write_checkpoint(prefix, [("w", np.array([1.0, 2.0], np.float32))])
            with open(prefix + ".index", "rb") as f:
                self.assertEqual(f.read(), DOC_INDEX_11_9)
            with open(prefix + ".data-00000-of-00001", "rb") as f:
                self.assertEqual(f.read(), DOC_DATA_11_9)
            w.write_checkpoint_state(d, "model")
            with open(os.path.join(d, "checkpoint")) as f:
                self.assertEqual(f.read(), 'model_checkpoint_path: "model"\n'
                                           'all_model_checkpoint_paths: "model"\n')
        finally:
            shutil.rmtree(d)

    def test_separators(self):
        self.assertEqual(w.find_short_successor(b"Variable_3"), b"W")
        self.assertEqual(w.find_short_successor(b"\xff\xffa"), b"\xff\xffb")
        self.assertEqual(w.find_shortest_separator(b"abcd", b"abzz"), b"abd")
        self.assertEqual(w.find_shortest_separator(b"abc", b"abd"), b"abc")  # diff byte +1 == limit
        self.assertEqual(w.find_shortest_separator(b"ab", b"abc"), b"ab")    # prefix: unchanged

    def test_restarts_and_many_blocks(self):
        # 40 entries: data-block restarts every 16 entries; a tiny block size
        # forces several data blocks and exercises the shortened separators.
        tensors = [("v%03d" % i, np.full([3], i, np.float32)) for i in range(40)]
        index, data = w.checkpoint_bundle(tensors)
        self.assertEqual(len(data), 40 * 12)
        foot = index[-48:]
        self.assertEqual(foot[-8:].hex(" "), "57 fb 80 8b 24 75 47 db")
        p = 0
        _, p = _varint(foot, p)
        _, p = _varint(foot, p)
        io, p = _varint(foot, p)
        isz, p = _varint(foot, p)
        idx_entries, idx_restarts, idx_offsets = _block_entries(index[io:io + isz])
        self.assertEqual(idx_restarts, idx_offsets)  # restart interval 1
        self.assertEqual(len(idx_entries), 1)
        self.assertEqual(idx_entries[0][0], b"w")  # short successor of "v039"
        o, q = _varint(idx_entries[0][1], 0)
        s, q = _varint(idx_entries[0][1], q)
        entries, restarts, offsets = _block_entries(index[o:o + s])
        self.assertEqual(len(entries), 41)
        self.assertEqual(restarts, [offsets[0], offsets[16], offsets[32]])
        trailer = index[o + s:o + s + 5]
        self.assertEqual(trailer[0], 0)
        self.assertEqual(struct.unpack("<I", trailer[1:])[0],
                         w.mask_crc(w.crc32c(index[o:o + s] + b"\x00")))

        tb = w.TableBuilder(block_size=64)
        keys = [b"", b"abc1", b"abc2", b"abd9", b"c", b"zz"]
        for k in keys:
            tb.add(k, b"x" * 40)
        index = tb.finish()
        foot = index[-48:]
        p = 0
        _, p = _varint(foot, p)
        _, p = _varint(foot, p)
        io, p = _varint(foot, p)
        isz, p = _varint(foot, p)
        seps = [k for k, _ in _block_entries(index[io:io + isz])[0]]
        # each block holds 2 entries (estimate >= 64 after the 2nd)
        self.assertEqual(seps, [b"abc1", b"b", b"{"])  # "abc1" vs "abc2": not shortened


@unittest.skipUnless(shutil.which("protoc"), "protoc not installed")
class ProtocDecodes(unittest.TestCase):
    def test_meta_graph_decode_raw(self):
        g = w.Graph()
        x = w.placeholder(g, "x", w.DT_FLOAT, [-1, 2])
        v = w.variable(g, "w", w.truncated_normal(g, "truncated_normal", [2, 1], 0.5))
        w.matmul(g, "y", x, v.read, [-1, 1])
        w.global_variables_initializer(g, [v])
        sd = w.saver(g, [v])
        meta = w.meta_graph_def(g, sd, w.variables_collections([v])).serialize()
        out = subprocess.run(["protoc", "--decode_raw"], input=meta, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=True).stdout.decode()
        self.assertIn('"save/restore_all"', out)
        self.assertIn('"loc:@w"', out)


if __name__ == "__main__":
    unittest.main()
