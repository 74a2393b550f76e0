# SPDX-License-Identifier: Apache-2.0
"""Pure-python (stdlib + numpy) writer of TensorFlow 1.x artifacts.

Writes the files a TF 1.14 program leaves behind, byte for byte in the way TF
lays them out, without TensorFlow:

* protobuf wire encoding (varints incl. 10-byte negatives, packed repeated
  scalars, length-delimited fields, fixed32/float) and the Python
  ``text_format`` printer (``tf.train.write_graph(as_text=True)`` style);
* TensorShapeProto, TensorProto (``make_tensor_proto`` rules), AttrValue,
  NodeDef, GraphDef, MetaGraphDef (MetaInfoDef, SaverDef, CollectionDef,
  VariableDef);
* the V2 checkpoint ("tensor bundle"): ``P.index`` (LevelDB-style SSTable:
  data blocks with restart interval 16, index block with interval 1,
  shortened separator keys, empty metaindex block, 48-byte footer, masked
  CRC32C trailers, no compression), ``P.data-00000-of-00001`` and the
  ``checkpoint`` state file;
* a small graph builder that reproduces the node layout of TF1 Python code:
  ``tf.Variable`` (VariableV2 + ``/Assign`` + ``/read``), ``tf.truncated_normal``,
  ``tf.random_normal``, ``tf.zeros``, ``tf.global_variables_initializer`` and
  ``tf.train.Saver`` (TF 1.14 layout), with the attrs TF puts on each op and
  optional ``_output_shapes``.

Reference: ../shared/docs/tf-formats.md (section numbers below refer to it).
Serialisation follows protobuf's deterministic mode (fields in ascending
number order, map entries sorted by key), which is what
``tf.io.write_graph`` / ``Saver.export_meta_graph`` produce in TF 1.14.
"""

import math
import os
import struct

import numpy as np

# Version stamps of the TF release these files imitate (TF 1.14.0 pip wheel).
TF_VERSION = "1.14.0"
TF_GIT_VERSION = "v1.14.0-rc1-22-gaf24dc91b5"
TF_GRAPH_DEF_PRODUCER = 38  # TF_GRAPH_DEF_VERSION of TF 1.14 (tf-formats.md §6)

# ---------------------------------------------------------------------------
# §1 DataType
# ---------------------------------------------------------------------------
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_STRING = 1, 2, 3, 4, 5, 6, 7
DT_COMPLEX64, DT_INT64, DT_BOOL = 8, 9, 10
DT_HALF = 19

DTYPE_NAMES = {
    0: "DT_INVALID", 1: "DT_FLOAT", 2: "DT_DOUBLE", 3: "DT_INT32", 4: "DT_UINT8",
    5: "DT_INT16", 6: "DT_INT8", 7: "DT_STRING", 8: "DT_COMPLEX64", 9: "DT_INT64",
    10: "DT_BOOL", 11: "DT_QINT8", 12: "DT_QUINT8", 13: "DT_QINT32", 14: "DT_BFLOAT16",
    15: "DT_QINT16", 16: "DT_QUINT16", 17: "DT_UINT16", 18: "DT_COMPLEX128", 19: "DT_HALF",
    20: "DT_RESOURCE", 21: "DT_VARIANT", 22: "DT_UINT32", 23: "DT_UINT64",
}
for _v, _n in list(DTYPE_NAMES.items()):
    if 0 < _v <= 23:
        DTYPE_NAMES[_v + 100] = _n + "_REF"

_NP_TO_DT = {
    np.dtype(np.float32): DT_FLOAT, np.dtype(np.float64): DT_DOUBLE,
    np.dtype(np.int32): DT_INT32, np.dtype(np.uint8): DT_UINT8,
    np.dtype(np.int16): DT_INT16, np.dtype(np.int8): DT_INT8,
    np.dtype(np.int64): DT_INT64, np.dtype(np.bool_): DT_BOOL,
    np.dtype(np.float16): DT_HALF,
}
_DT_TO_NP = {v: k for k, v in _NP_TO_DT.items()}

# dtypes for which python's make_tensor_proto writes tensor_content when N > 1
# (§3 "What writers actually emit"; bool, uint16 and string never).
_TENSOR_CONTENT_DTYPES = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8,
                          DT_INT64, DT_HALF}


def np_dtype(dt):
    return _DT_TO_NP[dt]


def dt_of(array):
    return _NP_TO_DT[np.asarray(array).dtype]


# ---------------------------------------------------------------------------
# §0 Protobuf wire format
# ---------------------------------------------------------------------------
WT_VARINT, WT_FIXED64, WT_LEN, WT_FIXED32 = 0, 1, 2, 5


def encode_varint(value):
    """Base-128 varint of an int; negatives are sign-extended to 64 bits (10 bytes)."""
    if value < 0:
        value += 1 << 64
    if not 0 <= value < (1 << 64):
        raise ValueError("varint out of range: %r" % value)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_tag(field, wire_type):
    return encode_varint((field << 3) | wire_type)


def encode_float32(value):
    return struct.pack("<f", value)


class Field(object):
    """One field occurrence of a message.

    kind: 'int' (int32/int64/uint*), 'bool', 'enum', 'string', 'bytes',
    'float', 'double', 'fixed32', 'message'.  ``packed`` marks a packed
    repeated scalar field (value is a list).  ``enum_names`` maps enum
    numbers to names for the text format.
    """

    __slots__ = ("name", "number", "kind", "value", "packed", "enum_names")

    def __init__(self, name, number, kind, value, packed=False, enum_names=None):
        self.name = name
        self.number = number
        self.kind = kind
        self.value = value
        self.packed = packed
        self.enum_names = enum_names


class Message(object):
    """An ordered bag of fields; serialised in ascending field-number order."""

    def __init__(self, type_name=""):
        self.type_name = type_name
        self.fields = []

    # -- building -----------------------------------------------------------
    def add(self, name, number, kind, value, **kw):
        self.fields.append(Field(name, number, kind, value, **kw))
        return self

    def int(self, name, number, value):
        return self.add(name, number, "int", int(value))

    def bool(self, name, number, value):
        return self.add(name, number, "bool", bool(value))

    def enum(self, name, number, value, names):
        return self.add(name, number, "enum", int(value), enum_names=names)

    def string(self, name, number, value):
        if isinstance(value, str):
            value = value.encode("utf-8")
        return self.add(name, number, "string", bytes(value))

    def bytes_(self, name, number, value):
        return self.add(name, number, "bytes", bytes(value))

    def float(self, name, number, value):
        return self.add(name, number, "float", float(value))

    def double(self, name, number, value):
        return self.add(name, number, "double", float(value))

    def fixed32(self, name, number, value):
        return self.add(name, number, "fixed32", int(value))

    def message(self, name, number, msg):
        return self.add(name, number, "message", msg)

    def packed(self, name, number, kind, values, enum_names=None):
        """Packed repeated scalar (written only when non-empty, like proto3)."""
        values = list(values)
        if values:
            self.add(name, number, kind, values, packed=True, enum_names=enum_names)
        return self

    # proto3 "omit if default" helpers for singular non-oneof fields
    def opt_int(self, name, number, value):
        return self.int(name, number, value) if value else self

    def opt_bool(self, name, number, value):
        return self.bool(name, number, value) if value else self

    def opt_enum(self, name, number, value, names):
        return self.enum(name, number, value, names) if value else self

    def opt_string(self, name, number, value):
        return self.string(name, number, value) if value else self

    def opt_float(self, name, number, value):
        return self.float(name, number, value) if value else self

    def opt_double(self, name, number, value):
        return self.double(name, number, value) if value else self

    # -- output ---------------------------------------------------------------
    def sorted_fields(self):
        return sorted(self.fields, key=lambda f: f.number)  # stable for repeats

    def serialize(self):
        out = bytearray()
        for f in self.sorted_fields():
            out += _encode_field(f)
        return bytes(out)

    def to_text(self, indent=0):
        out = []
        for f in self.sorted_fields():
            _text_field(f, indent, out)
        return "".join(out)


def _encode_scalar(kind, v):
    if kind in ("int", "enum"):
        return encode_varint(v)
    if kind == "bool":
        return b"\x01" if v else b"\x00"
    if kind == "float":
        return encode_float32(v)
    if kind == "double":
        return struct.pack("<d", v)
    if kind == "fixed32":
        return struct.pack("<I", v)
    raise ValueError(kind)


_WIRE = {"int": WT_VARINT, "enum": WT_VARINT, "bool": WT_VARINT, "float": WT_FIXED32,
         "fixed32": WT_FIXED32, "double": WT_FIXED64}


def _encode_field(f):
    if f.packed:
        payload = b"".join(_encode_scalar(f.kind, v) for v in f.value)
        return encode_tag(f.number, WT_LEN) + encode_varint(len(payload)) + payload
    if f.kind in ("string", "bytes"):
        return encode_tag(f.number, WT_LEN) + encode_varint(len(f.value)) + f.value
    if f.kind == "message":
        payload = f.value.serialize()
        return encode_tag(f.number, WT_LEN) + encode_varint(len(payload)) + payload
    return encode_tag(f.number, _WIRE[f.kind]) + _encode_scalar(f.kind, f.value)


# --- Python protobuf text_format printer -----------------------------------
_CESCAPE = ["\\%03o" % i for i in range(32)] + [chr(i) for i in range(32, 127)] + \
           ["\\%03o" % i for i in range(127, 256)]
for _b, _s in {9: "\\t", 10: "\\n", 13: "\\r", 34: '\\"', 39: "\\'", 92: "\\\\"}.items():
    _CESCAPE[_b] = _s


def c_escape(data):
    """google.protobuf.text_encoding.CEscape(data, as_utf8=False)."""
    return "".join(_CESCAPE[b] for b in bytes(data))


def shortest_float32_repr(value):
    """google.protobuf.internal.type_checkers.ToShortestFloat, then str()."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    f32 = struct.unpack("<f", struct.pack("<f", value))[0]
    precision = 6
    rounded = float("{0:.{1}g}".format(f32, precision))
    while struct.unpack("<f", struct.pack("<f", rounded))[0] != f32:
        precision += 1
        rounded = float("{0:.{1}g}".format(f32, precision))
    return str(rounded)


def _text_scalar(f, v):
    if f.kind == "enum":
        return f.enum_names.get(v, str(v)) if f.enum_names else str(v)
    if f.kind == "bool":
        return "true" if v else "false"
    if f.kind in ("string", "bytes"):
        return '"' + c_escape(v) + '"'
    if f.kind == "float":
        return shortest_float32_repr(v)
    if f.kind == "double":
        return str(v)
    return str(v)


def _text_field(f, indent, out):
    pad = "  " * indent
    if f.kind == "message":
        out.append("%s%s {\n" % (pad, f.name))
        out.append(f.value.to_text(indent + 1))
        out.append("%s}\n" % pad)
    elif f.packed:
        for v in f.value:
            out.append("%s%s: %s\n" % (pad, f.name, _text_scalar(f, v)))
    else:
        out.append("%s%s: %s\n" % (pad, f.name, _text_scalar(f, f.value)))


# ---------------------------------------------------------------------------
# §2 TensorShapeProto, §3 TensorProto
# ---------------------------------------------------------------------------
UNKNOWN_RANK = None  # a "shape" value meaning unknown rank


def shape_proto(dims):
    """TensorShapeProto; dims = list of ints (-1 = unknown) or None (unknown rank)."""
    m = Message("tensorflow.TensorShapeProto")
    if dims is None:
        m.bool("unknown_rank", 3, True)
        return m
    for d in dims:
        m.message("dim", 2, Message("tensorflow.TensorShapeProto.Dim").opt_int("size", 1, int(d)))
    return m


def tensor_proto(value, dtype=None, shape=None):
    """Mirror of python ``tensor_util.make_tensor_proto`` for numeric/bool/string data.

    * full-shape numeric arrays with N > 1 of a tensor_content dtype -> tensor_content;
    * otherwise the typed repeated field (float_val, int_val, ...);
    * ``shape`` larger than the data: broadcast fill with the given value(s).
    """
    is_list = isinstance(value, (list, tuple))
    looks_textual = isinstance(value, (bytes, str)) or (
        is_list and len(value) > 0 and isinstance(value[0], (bytes, str)))
    if dtype == DT_STRING or (dtype is None and looks_textual):
        vals = list(value) if is_list else [value]
        vals = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in vals]
        if shape is None:
            shape = [len(vals)] if is_list else []
        m = Message("tensorflow.TensorProto")
        m.enum("dtype", 1, DT_STRING, DTYPE_NAMES)
        m.message("tensor_shape", 2, shape_proto(shape))
        for v in vals:
            m.bytes_("string_val", 8, v)
        return m

    if dtype is None:
        arr = np.asarray(value)
        dtype = dt_of(arr)
    arr = np.asarray(value, dtype=np_dtype(dtype))
    if shape is None:
        shape = list(arr.shape)
    n = int(np.prod(shape)) if shape else 1
    m = Message("tensorflow.TensorProto")
    m.enum("dtype", 1, dtype, DTYPE_NAMES)
    m.message("tensor_shape", 2, shape_proto(shape))
    same_size = arr.size == n
    if same_size and dtype in _TENSOR_CONTENT_DTYPES and n > 1:
        m.bytes_("tensor_content", 4, np.array(arr, order="C").astype(arr.dtype.newbyteorder("<")).tobytes())
        return m
    flat = arr.ravel().tolist()
    if dtype == DT_FLOAT:
        m.packed("float_val", 5, "float", flat)
    elif dtype == DT_DOUBLE:
        m.packed("double_val", 6, "double", flat)
    elif dtype in (DT_INT32, DT_UINT8, DT_INT16, DT_INT8):
        m.packed("int_val", 7, "int", flat)
    elif dtype == DT_INT64:
        m.packed("int64_val", 10, "int", flat)
    elif dtype == DT_BOOL:
        m.packed("bool_val", 11, "bool", flat)
    elif dtype == DT_HALF:
        m.packed("half_val", 13, "int", np.asarray(arr, np.float16).ravel().view(np.uint16).tolist())
    else:
        raise NotImplementedError("dtype %d" % dtype)
    return m


# ---------------------------------------------------------------------------
# §4 AttrValue (oneof: the chosen member is always written)
# ---------------------------------------------------------------------------
def _attr():
    return Message("tensorflow.AttrValue")


def attr_s(value):
    return _attr().string("s", 2, value)


def attr_i(value):
    return _attr().int("i", 3, value)


def attr_f(value):
    return _attr().float("f", 4, value)


def attr_b(value):
    return _attr().bool("b", 5, value)


def attr_type(dtype):
    return _attr().enum("type", 6, dtype, DTYPE_NAMES)


def attr_shape(dims):
    return _attr().message("shape", 7, shape_proto(dims))


def attr_tensor(tp):
    return _attr().message("tensor", 8, tp)


def _list_value():
    return Message("tensorflow.AttrValue.ListValue")


def attr_list_s(values):
    lv = _list_value()
    for v in values:
        lv.string("s", 2, v)
    return _attr().message("list", 1, lv)


def attr_list_i(values):
    return _attr().message("list", 1, _list_value().packed("i", 3, "int", values))


def attr_list_type(values):
    return _attr().message("list", 1, _list_value().packed("type", 6, "enum", values,
                                                            enum_names=DTYPE_NAMES))


def attr_list_shape(shapes):
    lv = _list_value()
    for s in shapes:
        lv.message("shape", 7, shape_proto(s))
    return _attr().message("list", 1, lv)


# ---------------------------------------------------------------------------
# §5 NodeDef, §6 GraphDef
# ---------------------------------------------------------------------------
def map_entry(type_name, key, value_msg):
    e = Message(type_name)
    e.string("key", 1, key)
    e.message("value", 2, value_msg)
    return e


class Node(object):
    """A NodeDef under construction plus the static shapes of its outputs."""

    def __init__(self, name, op, inputs=(), attrs=None, device="", out_shapes=()):
        self.name = name
        self.op = op
        self.inputs = list(inputs)
        self.attrs = dict(attrs or {})
        self.device = device
        self.out_shapes = list(out_shapes)  # one entry per output (None = unknown rank)

    def __str__(self):
        return self.name

    def output(self, i=0):
        return self.name if i == 0 else "%s:%d" % (self.name, i)

    def to_proto(self, add_shapes=False):
        m = Message("tensorflow.NodeDef")
        m.string("name", 1, self.name)
        m.string("op", 2, self.op)
        for inp in self.inputs:
            m.string("input", 3, inp)
        m.opt_string("device", 4, self.device)
        attrs = dict(self.attrs)
        if add_shapes and self.out_shapes:
            attrs["_output_shapes"] = attr_list_shape(self.out_shapes)
        for key in sorted(attrs, key=lambda k: k.encode("utf-8")):
            m.message("attr", 5, map_entry("tensorflow.NodeDef.AttrEntry", key, attrs[key]))
        return m


def _name_of(x):
    return x.name if isinstance(x, Node) else str(x)


def _tensor_ref(x):
    """Input string for output 0 of a node (or a pre-formatted 'name:i' / '^name')."""
    return x.name if isinstance(x, Node) else str(x)


class Graph(object):
    """Nodes in creation order (TF's GraphDef keeps node-id order)."""

    def __init__(self, producer=TF_GRAPH_DEF_PRODUCER):
        self.nodes = []
        self.by_name = {}
        self.producer = producer

    def add(self, name, op, inputs=(), attrs=None, device="", out_shapes=(), control=()):
        if name in self.by_name:
            raise ValueError("duplicate node name %s" % name)
        ins = [_tensor_ref(i) for i in inputs]
        # Graph::ToGraphDef puts control inputs after data inputs, sorted by name.
        ctl = sorted({_name_of(c) for c in control}, key=lambda s: s.encode("utf-8"))
        ins += ["^" + c for c in ctl]
        node = Node(name, op, ins, attrs, device, out_shapes)
        self.nodes.append(node)
        self.by_name[name] = node
        return node

    def __getitem__(self, name):
        return self.by_name[name]

    def graph_def(self, add_shapes=False):
        m = Message("tensorflow.GraphDef")
        for n in self.nodes:
            m.message("node", 1, n.to_proto(add_shapes))
        m.message("versions", 4, Message("tensorflow.VersionDef").opt_int("producer", 1, self.producer))
        return m


# ---------------------------------------------------------------------------
# §7 MetaGraphDef, SaverDef, CollectionDef, VariableDef
# ---------------------------------------------------------------------------
SAVER_VERSIONS = {0: "LEGACY", 1: "V1", 2: "V2"}


def saver_def(scope="save", max_to_keep=5, keep_hours=10000.0, sharded=False, version=2):
    m = Message("tensorflow.SaverDef")
    m.string("filename_tensor_name", 1, scope + "/Const:0")
    m.string("save_tensor_name", 2, scope + "/control_dependency:0")
    m.string("restore_op_name", 3, scope + "/restore_all")
    m.opt_int("max_to_keep", 4, max_to_keep)
    m.opt_bool("sharded", 5, sharded)
    m.opt_float("keep_checkpoint_every_n_hours", 6, keep_hours)
    m.opt_enum("version", 7, version, SAVER_VERSIONS)
    return m


def collection_node_list(names):
    nl = Message("tensorflow.CollectionDef.NodeList")
    for n in names:
        nl.string("value", 1, n)
    return Message("tensorflow.CollectionDef").message("node_list", 1, nl)


def collection_bytes_list(values):
    bl = Message("tensorflow.CollectionDef.BytesList")
    for v in values:
        bl.bytes_("value", 1, v)
    return Message("tensorflow.CollectionDef").message("bytes_list", 2, bl)


def meta_graph_def(graph, saver=None, collections=None, add_shapes=True,
                   tf_version=TF_VERSION, tf_git_version=TF_GIT_VERSION, tags=(),
                   stripped_op_list=None):
    """MetaGraphDef as ``tf.train.Saver.save`` / ``export_meta_graph`` writes it.

    ``collections``: dict key -> CollectionDef message.  A Saver-written .meta
    has no tags (only SavedModel sets them); pass ``tags`` to add some.
    ``stripped_op_list``: optional serialized OpList bytes.
    """
    info = Message("tensorflow.MetaInfoDef")
    if stripped_op_list is not None:
        info.bytes_("stripped_op_list", 2, stripped_op_list)
    for t in tags:
        info.string("tags", 4, t)
    info.opt_string("tensorflow_version", 5, tf_version)
    info.opt_string("tensorflow_git_version", 6, tf_git_version)
    m = Message("tensorflow.MetaGraphDef")
    m.message("meta_info_def", 1, info)
    m.message("graph_def", 2, graph.graph_def(add_shapes=add_shapes))
    if saver is not None:
        m.message("saver_def", 3, saver)
    for key in sorted(collections or {}, key=lambda k: k.encode("utf-8")):
        m.message("collection_def", 4,
                  map_entry("tensorflow.MetaGraphDef.CollectionDefEntry", key, collections[key]))
    return m


class Variable(object):
    """The nodes of one TF1 reference variable (tf.Variable / VariableV2)."""

    def __init__(self, var, assign, read, initial_value, trainable):
        self.var = var
        self.assign = assign
        self.read = read
        self.initial_value = initial_value  # tensor name "x:0"
        self.trainable = trainable

    @property
    def name(self):
        return self.var.name

    @property
    def shape(self):
        return self.var.out_shapes[0]

    @property
    def dtype(self):
        return self.var.attrs["dtype"].fields[0].value

    def to_variable_def(self):
        """VariableDef bytes as RefVariable.to_proto writes them."""
        m = Message("tensorflow.VariableDef")
        m.string("variable_name", 1, self.var.name + ":0")
        m.string("initializer_name", 2, self.assign.name)
        m.string("snapshot_name", 3, self.read.name + ":0")
        m.string("initial_value_name", 6, self.initial_value)
        m.opt_bool("trainable", 7, self.trainable)
        return m.serialize()


def variables_collections(variables):
    """The ``variables`` and ``trainable_variables`` CollectionDefs."""
    return {
        "variables": collection_bytes_list([v.to_variable_def() for v in variables]),
        "trainable_variables": collection_bytes_list(
            [v.to_variable_def() for v in variables if v.trainable]),
    }


# ---------------------------------------------------------------------------
# TF1 python-API emulation: the nodes TF 1.14 creates for common calls
# ---------------------------------------------------------------------------
def const(g, name, value, dtype=None, shape=None, control=(), colocate=None):
    """tf.constant: Const with dtype + value attrs (make_tensor_proto rules)."""
    tp = tensor_proto(value, dtype, shape)
    dt = tp.fields[0].value
    dims = [f.value.fields[0].value if f.value.fields else 0
            for f in tp.fields[1].value.fields]
    attrs = {"dtype": attr_type(dt), "value": attr_tensor(tp)}
    if colocate:
        attrs["_class"] = attr_list_s(["loc:@" + c for c in colocate])
    return g.add(name, "Const", (), attrs, out_shapes=[dims], control=control)


def placeholder(g, name, dtype, dims):
    """tf.placeholder(dtype, shape=dims, name=name); dims None = unknown rank."""
    return g.add(name, "Placeholder", (), {"dtype": attr_type(dtype), "shape": attr_shape(dims)},
                 out_shapes=[dims])


def _binary(g, name, op, x, y, dtype, out_shape):
    return g.add(name, op, (x, y), {"T": attr_type(dtype)}, out_shapes=[out_shape])


def _random_init(g, scope, op, dims, mean, stddev, seed, seed2):
    """tf.truncated_normal / tf.random_normal: shape, mean, stddev, op, mul, Add."""
    shp = const(g, scope + "/shape", np.array(dims, np.int32))
    m = const(g, scope + "/mean", np.float32(mean))
    s = const(g, scope + "/stddev", np.float32(stddev))
    rnd = g.add(scope + "/" + op, op, (shp,),
                {"T": attr_type(DT_INT32), "dtype": attr_type(DT_FLOAT),
                 "seed": attr_i(seed), "seed2": attr_i(seed2)}, out_shapes=[list(dims)])
    mul = _binary(g, scope + "/mul", "Mul", rnd, s, DT_FLOAT, list(dims))
    return _binary(g, scope, "Add", mul, m, DT_FLOAT, list(dims))


def truncated_normal(g, scope, dims, stddev, mean=0.0, seed=0, seed2=0):
    """tf.truncated_normal(dims, mean, stddev) under name scope ``scope``."""
    return _random_init(g, scope, "TruncatedNormal", dims, mean, stddev, seed, seed2)


def random_normal(g, scope, dims, stddev=1.0, mean=0.0, seed=0, seed2=0):
    """tf.random_normal(dims, mean, stddev); RandomStandardNormal * stddev + mean."""
    return _random_init(g, scope, "RandomStandardNormal", dims, mean, stddev, seed, seed2)


DEFAULT_GRAPH_SEED = 87654321  # random_seed.get_seed(op_seed) with no graph seed


def zeros(g, name, dims, dtype=DT_FLOAT):
    """tf.zeros(dims) for < 1000 elements: a broadcast Const (single typed value)."""
    return const(g, name, np.zeros([], np_dtype(dtype)), dtype, shape=list(dims))


def variable(g, name, initial_value, trainable=True, collocate_initial=False):
    """tf.Variable(initial_value, name=name): VariableV2, Assign, read (Identity)."""
    dims = initial_value.out_shapes[0]
    dtype = initial_value.attrs.get("dtype", initial_value.attrs.get("T")).fields[0].value
    var = g.add(name, "VariableV2", (),
                {"container": attr_s(""), "dtype": attr_type(dtype), "shape": attr_shape(dims),
                 "shared_name": attr_s("")}, out_shapes=[dims])
    loc = attr_list_s(["loc:@" + name])
    assign = g.add(name + "/Assign", "Assign", (var, initial_value),
                   {"T": attr_type(dtype), "_class": loc, "use_locking": attr_b(True),
                    "validate_shape": attr_b(True)}, out_shapes=[dims])
    read = g.add(name + "/read", "Identity", (var,), {"T": attr_type(dtype), "_class": loc},
                 out_shapes=[dims])
    return Variable(var, assign, read, initial_value.name + ":0", trainable)


def global_variables_initializer(g, variables, name="init"):
    """tf.global_variables_initializer(): NoOp with control inputs on every Assign."""
    return g.add(name, "NoOp", (), {}, control=[v.assign for v in variables])


def matmul(g, name, a, b, out_shape, dtype=DT_FLOAT, transpose_a=False, transpose_b=False):
    return g.add(name, "MatMul", (a, b), {"T": attr_type(dtype), "transpose_a": attr_b(transpose_a),
                                           "transpose_b": attr_b(transpose_b)},
                 out_shapes=[out_shape])


def add(g, name, x, y, out_shape, dtype=DT_FLOAT):
    """``x + y`` in TF 1.14 graph mode is op Add (TF 1.15 switched to AddV2)."""
    return _binary(g, name, "Add", x, y, dtype, out_shape)


def relu(g, name, x, out_shape, dtype=DT_FLOAT):
    return g.add(name, "Relu", (x,), {"T": attr_type(dtype)}, out_shapes=[out_shape])


def conv2d(g, name, x, w, strides, padding, out_shape, dtype=DT_FLOAT, data_format="NHWC",
           dilations=(1, 1, 1, 1)):
    """tf.nn.conv2d in TF 1.14: all Conv2D attrs incl. explicit_paddings = []."""
    return g.add(name, "Conv2D", (x, w),
                 {"T": attr_type(dtype), "data_format": attr_s(data_format),
                  "dilations": attr_list_i(dilations), "explicit_paddings": attr_list_i([]),
                  "padding": attr_s(padding), "strides": attr_list_i(strides),
                  "use_cudnn_on_gpu": attr_b(True)}, out_shapes=[out_shape])


def saver(g, variables, scope="save"):
    """tf.train.Saver() (BulkSaverBuilder, TF 1.14 layout; §12.3).

    Variables are saved under their op names, sorted by name.  Returns the
    SaverDef message.
    """
    vs = sorted(variables, key=lambda v: v.name.encode("utf-8"))
    names = [v.name for v in vs]
    n = len(vs)
    s = scope + "/"
    fin = const(g, s + "filename/input", b"model", DT_STRING)
    fname = g.add(s + "filename", "PlaceholderWithDefault", (fin,),
                  {"dtype": attr_type(DT_STRING), "shape": attr_shape([])}, out_shapes=[[]])
    cst = g.add(s + "Const", "PlaceholderWithDefault", (fname,),
                {"dtype": attr_type(DT_STRING), "shape": attr_shape([])}, out_shapes=[[]])
    tn = const(g, s + "SaveV2/tensor_names", names, DT_STRING, shape=[n])
    ss = const(g, s + "SaveV2/shape_and_slices", [b""] * n, DT_STRING, shape=[n])
    save = g.add(s + "SaveV2", "SaveV2", [cst, tn, ss] + [v.var for v in vs],
                 {"dtypes": attr_list_type([v.dtype for v in vs])})
    g.add(s + "control_dependency", "Identity", (cst,),
          {"T": attr_type(DT_STRING), "_class": attr_list_s(["loc:@" + cst.name])},
          out_shapes=[[]], control=[save])
    cpu = "/device:CPU:0"
    rtn = const(g, s + "RestoreV2/tensor_names", names, DT_STRING, shape=[n])
    rtn.device = cpu
    rss = const(g, s + "RestoreV2/shape_and_slices", [b""] * n, DT_STRING, shape=[n])
    rss.device = cpu
    restore = g.add(s + "RestoreV2", "RestoreV2", (cst, rtn, rss),
                    {"dtypes": attr_list_type([v.dtype for v in vs])}, device=cpu,
                    out_shapes=[UNKNOWN_RANK] * n)
    assigns = []
    for i, v in enumerate(vs):
        aname = s + ("Assign" if i == 0 else "Assign_%d" % i)
        assigns.append(g.add(aname, "Assign", (v.var, restore.output(i)),
                             {"T": attr_type(v.dtype), "_class": attr_list_s(["loc:@" + v.name]),
                              "use_locking": attr_b(True), "validate_shape": attr_b(True)},
                             out_shapes=[v.shape]))
    g.add(s + "restore_all", "NoOp", (), {}, control=assigns)
    return saver_def(scope)


# ---------------------------------------------------------------------------
# §11.3 CRC32C and masking
# ---------------------------------------------------------------------------
def _make_crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _make_crc_table()


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli); ``crc`` continues a previous value."""
    c = crc ^ 0xFFFFFFFF
    table = _CRC_TABLE
    for b in bytes(data):
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


_MASK_DELTA = 0xA282EAD8


def mask_crc(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask_crc(masked):
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


# ---------------------------------------------------------------------------
# §11.2 SSTable (LevelDB table format as in tensorflow/core/lib/io)
# ---------------------------------------------------------------------------
TABLE_MAGIC = 0xDB4775248B80FB57
BLOCK_SIZE = 262144  # TableOptions::block_size
BLOCK_RESTART_INTERVAL = 16


class BlockBuilder(object):
    def __init__(self, restart_interval):
        self.restart_interval = restart_interval
        self.buffer = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def empty(self):
        return not self.buffer

    def add(self, key, value):
        shared = 0
        if self.counter < self.restart_interval:
            n = min(len(self.last_key), len(key))
            while shared < n and self.last_key[shared] == key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buffer))
            self.counter = 0
        self.buffer += encode_varint(shared) + encode_varint(len(key) - shared) + \
            encode_varint(len(value))
        self.buffer += key[shared:] + value
        self.last_key = bytes(key)
        self.counter += 1

    def size_estimate(self):
        return len(self.buffer) + 4 * len(self.restarts) + 4

    def finish(self):
        out = bytes(self.buffer) + b"".join(struct.pack("<I", r) for r in self.restarts)
        return out + struct.pack("<I", len(self.restarts))


def find_shortest_separator(start, limit):
    """BytewiseComparator::FindShortestSeparator."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i >= n:
        return start
    b = start[i]
    if b < 0xFF and b + 1 < limit[i]:
        return start[:i] + bytes([b + 1])
    return start


def find_short_successor(key):
    """BytewiseComparator::FindShortSuccessor."""
    for i, b in enumerate(key):
        if b != 0xFF:
            return key[:i] + bytes([b + 1])
    return key


def encode_block_handle(offset, size):
    return encode_varint(offset) + encode_varint(size)


class TableBuilder(object):
    """Uncompressed table writer (BundleWriter uses kNoCompression)."""

    def __init__(self, block_size=BLOCK_SIZE):
        self.out = bytearray()
        self.block_size = block_size
        self.data_block = BlockBuilder(BLOCK_RESTART_INTERVAL)
        self.index_block = BlockBuilder(1)
        self.last_key = b""
        self.pending_index_entry = False
        self.pending_handle = None

    def _write_block(self, block):
        contents = block.finish()
        offset = len(self.out)
        self.out += contents
        ctype = b"\x00"
        self.out += ctype + struct.pack("<I", mask_crc(crc32c(contents + ctype)))
        return (offset, len(contents))

    def add(self, key, value):
        if self.pending_index_entry:
            sep = find_shortest_separator(self.last_key, key)
            self.index_block.add(sep, encode_block_handle(*self.pending_handle))
            self.pending_index_entry = False
        self.last_key = bytes(key)
        self.data_block.add(key, value)
        if self.data_block.size_estimate() >= self.block_size:
            self.flush()

    def flush(self):
        if self.data_block.empty():
            return
        self.pending_handle = self._write_block(self.data_block)
        self.data_block = BlockBuilder(BLOCK_RESTART_INTERVAL)
        self.pending_index_entry = True

    def finish(self):
        self.flush()
        metaindex = self._write_block(BlockBuilder(BLOCK_RESTART_INTERVAL))
        if self.pending_index_entry:
            self.index_block.add(find_short_successor(self.last_key),
                                 encode_block_handle(*self.pending_handle))
            self.pending_index_entry = False
        index = self._write_block(self.index_block)
        footer = encode_block_handle(*metaindex) + encode_block_handle(*index)
        footer += b"\x00" * (40 - len(footer))
        footer += struct.pack("<II", TABLE_MAGIC & 0xFFFFFFFF, TABLE_MAGIC >> 32)
        self.out += footer
        return bytes(self.out)


# ---------------------------------------------------------------------------
# §11 Checkpoint V2 (tensor bundle) and §10 the `checkpoint` state file
# ---------------------------------------------------------------------------
def bundle_header():
    """BundleHeaderProto: num_shards 1, endianness LITTLE (0, omitted), version {producer 1}."""
    m = Message("tensorflow.BundleHeaderProto")
    m.int("num_shards", 1, 1)
    m.message("version", 3, Message("tensorflow.VersionDef").int("producer", 1, 1))
    return m.serialize()


def bundle_entry(dtype, dims, shard_id, offset, size, crc):
    m = Message("tensorflow.BundleEntryProto")
    m.enum("dtype", 1, dtype, DTYPE_NAMES)
    m.message("shape", 2, shape_proto(dims))
    m.opt_int("shard_id", 3, shard_id)
    m.opt_int("offset", 4, offset)
    m.opt_int("size", 5, size)
    m.fixed32("crc32c", 6, mask_crc(crc))
    return m.serialize()


def checkpoint_bundle(tensors):
    """(index_bytes, data_bytes) for ``tensors``: a list of (key, ndarray).

    Data are appended in list order (a TF1 Saver adds them sorted by key);
    index entries are sorted by key bytes, header entry (key "") first.
    """
    data = bytearray()
    entries = {}
    for key, arr in tensors:
        arr = np.array(arr, order="C", copy=True)  # (ascontiguousarray turns 0-d into 1-d)
        dt = dt_of(arr)
        raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        kb = key.encode("utf-8")
        if kb in entries or not kb:
            raise ValueError("bad or duplicate key %r" % key)
        entries[kb] = bundle_entry(dt, list(arr.shape), 0, len(data), len(raw), crc32c(raw))
        data += raw
    tb = TableBuilder()
    tb.add(b"", bundle_header())
    for kb in sorted(entries):
        tb.add(kb, entries[kb])
    return tb.finish(), bytes(data)


def write_checkpoint(prefix, tensors):
    """Write ``prefix.index`` and ``prefix.data-00000-of-00001``."""
    index, data = checkpoint_bundle(tensors)
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)
    with open(prefix + ".index", "wb") as f:
        f.write(index)
    return index, data


def checkpoint_state_text(model_checkpoint_path, all_paths=None, timestamps=None,
                          last_preserved_timestamp=None):
    """Text-format CheckpointState (the file named ``checkpoint``)."""
    m = Message("tensorflow.CheckpointState")
    m.string("model_checkpoint_path", 1, model_checkpoint_path)
    for p in (all_paths if all_paths is not None else [model_checkpoint_path]):
        m.string("all_model_checkpoint_paths", 2, p)
    for t in timestamps or ():
        m.double("all_model_checkpoint_timestamps", 3, t)
    if last_preserved_timestamp is not None:
        m.opt_double("last_preserved_timestamp", 4, last_preserved_timestamp)
    return m.to_text()


def write_checkpoint_state(directory, model_checkpoint_path, **kw):
    with open(os.path.join(directory, "checkpoint"), "w") as f:
        f.write(checkpoint_state_text(model_checkpoint_path, **kw))


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
