"""nnabla's protobuf messages (``nnabla.proto`` of nnabla 1.39, proto3), read and written without
a protobuf dependency: the binary wire format (``.protobuf`` files, ``parameter.protobuf`` in an
``.nnp``) and the text format (``.nntxt``/``.prototxt``, ``network.nntxt`` in an ``.nnp``).

A message is a :class:`Message`: its fields are attributes (an unset scalar reads as proto3's
default, ``0``/``""``/``False``; an unset message field as an empty message; a repeated field as
a list). :data:`SCHEMA` holds every message type of nnabla 1.39's ``nnabla.proto`` (field name,
number, type, repeated), transcribed from its descriptor. Decoding only builds these messages:
nothing is unpickled or executed; a malformed input raises :class:`ValueError` naming the file
and what is wrong.

Example::

    >>> from gradhub_compat.nnabla._nnp_proto import Message, decode, encode, parse_text, to_text
    >>> p = Message("Parameter", variable_name="fc/W", need_grad=True)
    >>> p.shape.dim.extend([2])
    >>> p.data.extend([0.5, -1.0])
    >>> q = decode("Parameter", encode(p))
    >>> q.variable_name, q.shape.dim, q.data, q.need_grad
    ('fc/W', [2], [0.5, -1.0], True)
    >>> print(to_text(p), end="")
    variable_name: "fc/W"
    shape {
      dim: 2
    }
    data: 0.5
    data: -1.0
    need_grad: true
    >>> parse_text("Parameter", to_text(p)).data
    [0.5, -1.0]
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

__all__ = ["SCHEMA", "Message", "decode", "encode", "parse_text", "to_text"]

_SCALARS = {"bool", "double", "float", "int64", "uint32", "string"}
_MAX_DEPTH = 64


class _Field:
    __slots__ = ("name", "number", "repeated", "type")

    def __init__(self, name: str, number: int, type_: str, repeated: bool) -> None:
        self.name = name
        self.number = number
        self.type = type_
        self.repeated = repeated

    @property
    def is_message(self) -> bool:
        return self.type not in _SCALARS


class _Type:
    __slots__ = ("by_name", "by_number", "name")

    def __init__(self, name: str, fields: list[_Field]) -> None:
        self.name = name
        self.by_name = {f.name: f for f in fields}
        self.by_number = {f.number: f for f in fields}


def _parse_schema(spec: str) -> dict[str, _Type]:
    types: dict[str, _Type] = {}
    blocks = re.split(r"\n(?=\S)", spec.strip())
    for block in blocks:
        head, _, rest = block.partition(":")
        fields = []
        for item in rest.split():
            fname, _, tail = item.partition("=")
            num, _, ftype = tail.partition(":")
            rep = num.endswith("*")
            fields.append(_Field(fname, int(num.rstrip("*")), ftype, rep))
        types[head.strip()] = _Type(head.strip(), fields)
    return types


def _default(f: _Field) -> Any:
    if f.type == "string":
        return ""
    if f.type == "bool":
        return False
    if f.type in ("float", "double"):
        return 0.0
    return 0


class Message:
    """One message of type ``type_name`` (a key of :data:`SCHEMA`); keyword arguments set
    fields. ``has(name)`` tells whether a field is set; ``set_fields()`` lists the set ones in
    field-number order."""

    __slots__ = ("_type", "_values")

    def __init__(self, type_name: str, /, **fields: Any) -> None:
        if type_name not in SCHEMA:
            raise KeyError(f"nnabla protobuf: unknown message type {type_name!r}")
        object.__setattr__(self, "_type", SCHEMA[type_name])
        object.__setattr__(self, "_values", {})
        for k, v in fields.items():
            setattr(self, k, v)

    @property
    def type_name(self) -> str:
        return str(self._type.name)

    def _field(self, name: str) -> _Field:
        f = self._type.by_name.get(name)
        if f is None:
            raise AttributeError(f"nnabla protobuf message {self._type.name} has no field {name!r}")
        return f

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        f = self._field(name)
        vals = self._values
        if name in vals:
            return vals[name]
        if f.repeated:
            vals[name] = []
            return vals[name]
        if f.is_message:
            m = Message(f.type)
            vals[name] = m  # as protobuf's mutable access: reading it sets it
            return m
        return _default(f)

    def __setattr__(self, name: str, value: Any) -> None:
        f = self._field(name)
        if f.repeated:
            value = list(value)
        elif f.is_message and not (isinstance(value, Message) and value.type_name == f.type):
            raise TypeError(f"nnabla protobuf: {self._type.name}.{name} must be a {f.type} message")
        self._values[name] = value

    def has(self, name: str) -> bool:
        """Whether field ``name`` is set (a repeated field: non-empty)."""
        f = self._field(name)
        v = self._values.get(name)
        if f.repeated:
            return bool(v)
        return name in self._values and (f.is_message or v != _default(f))

    def add(self, field: str, /, **fields: Any) -> Message:
        """Append a new message to the repeated message field ``field`` and return it."""
        f = self._field(field)
        if not (f.repeated and f.is_message):
            raise TypeError(f"nnabla protobuf: {self._type.name}.{field} is not a repeated message")
        m = Message(f.type, **fields)
        getattr(self, field).append(m)
        return m

    def set_fields(self) -> list[tuple[_Field, Any]]:
        """The set fields and their values, in field-number order."""
        out = []
        for name, v in self._values.items():
            if self.has(name):
                out.append((self._type.by_name[name], v))
        out.sort(key=lambda t: t[0].number)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message) or other.type_name != self.type_name:
            return False
        return [(f.name, v) for f, v in self.set_fields()] == [
            (f.name, v) for f, v in other.set_fields()
        ]

    def __repr__(self) -> str:
        return f"<nnabla {self.type_name} message>"


# -- the binary wire format ------------------------------------------------------------------


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _scalar_bytes(t: str, v: Any) -> bytes:
    if t == "float":
        return struct.pack("<f", v)
    if t == "double":
        return struct.pack("<d", v)
    if t == "bool":
        return b"\x01" if v else b"\x00"
    return _varint(int(v))


def _wire(t: str) -> int:
    return {"float": 5, "double": 1}.get(t, 0 if t in ("bool", "int64", "uint32") else 2)


def encode(msg: Message) -> bytes:
    """The message in protobuf's binary wire format (as protobuf's ``SerializeToString``:
    fields in number order, proto3 defaults left out, repeated numbers packed)."""
    out = bytearray()
    for f, v in msg.set_fields():
        if f.is_message:
            for m in v if f.repeated else [v]:
                body = encode(m)
                out += _varint(f.number << 3 | 2) + _varint(len(body)) + body
        elif f.type == "string":
            for s in v if f.repeated else [v]:
                b = str(s).encode("utf-8")
                out += _varint(f.number << 3 | 2) + _varint(len(b)) + b
        elif f.repeated:
            if f.type == "float":
                body = struct.pack(f"<{len(v)}f", *v)
            elif f.type == "double":
                body = struct.pack(f"<{len(v)}d", *v)
            else:
                body = b"".join(_scalar_bytes(f.type, e) for e in v)
            out += _varint(f.number << 3 | 2) + _varint(len(body)) + body
        else:
            out += _varint(f.number << 3 | _wire(f.type)) + _scalar_bytes(f.type, v)
    return bytes(out)


class _Malformed(Exception):
    pass


def _read_varint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= end:
            raise _Malformed(f"truncated varint at byte {pos}")
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7
        if shift >= 70:
            raise _Malformed(f"varint too long at byte {pos}")


def _from_varint(t: str, n: int) -> Any:
    if t == "bool":
        return n != 0
    if t == "int64":
        n &= (1 << 64) - 1
        return n - (1 << 64) if n >= 1 << 63 else n
    if t == "uint32":
        return n & 0xFFFFFFFF
    raise _Malformed(f"a varint for a {t} field")


def _decode(type_name: str, buf: memoryview, pos: int, end: int, depth: int) -> Message:
    if depth > _MAX_DEPTH:
        raise _Malformed("messages nested too deeply")
    t = SCHEMA[type_name]
    msg = Message(type_name)
    vals = msg._values
    while pos < end:
        key, pos = _read_varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise _Malformed(f"field number 0 at byte {pos}")
        f = t.by_number.get(num)
        if wt == 0:
            n, pos = _read_varint(buf, pos, end)
            raw: Any = n
        elif wt == 1 or wt == 5:
            size = 8 if wt == 1 else 4
            if pos + size > end:
                raise _Malformed(f"truncated fixed-size value at byte {pos}")
            raw = bytes(buf[pos : pos + size])
            pos += size
        elif wt == 2:
            n, pos = _read_varint(buf, pos, end)
            if pos + n > end:
                raise _Malformed(f"a length of {n} bytes past the end at byte {pos}")
            raw = (pos, pos + n)
            pos += n
        else:
            raise _Malformed(f"unsupported wire type {wt} at byte {pos}")
        if f is None:
            continue  # an unknown field: skipped, as protobuf
        where = f"{type_name}.{f.name}"
        if f.is_message:
            if wt != 2:
                raise _Malformed(f"{where} is a message but has wire type {wt}")
            sub = _decode(f.type, buf, raw[0], raw[1], depth + 1)
            if f.repeated:
                vals.setdefault(f.name, []).append(sub)
            else:
                vals[f.name] = sub
            continue
        if f.type == "string":
            if wt != 2:
                raise _Malformed(f"{where} is a string but has wire type {wt}")
            try:
                s = bytes(buf[raw[0] : raw[1]]).decode("utf-8")
            except UnicodeDecodeError as e:
                raise _Malformed(f"{where} is not UTF-8: {e}") from None
            if f.repeated:
                vals.setdefault(f.name, []).append(s)
            else:
                vals[f.name] = s
            continue
        values: list[Any]
        if wt == 2:  # packed
            a, b = raw
            if not f.repeated:
                raise _Malformed(f"{where} is a single {f.type} but has wire type 2")
            if f.type in ("float", "double"):
                size = 4 if f.type == "float" else 8
                if (b - a) % size:
                    raise _Malformed(f"{where}: packed data of {b - a} bytes")
                values = list(struct.unpack(f"<{(b - a) // size}{f.type[0]}", buf[a:b]))
            else:
                values = []
                while a < b:
                    n, a = _read_varint(buf, a, b)
                    values.append(_from_varint(f.type, n))
        elif f.type in ("float", "double"):
            want = 5 if f.type == "float" else 1
            if wt != want:
                raise _Malformed(f"{where} is a {f.type} but has wire type {wt}")
            values = [struct.unpack("<" + f.type[0], raw)[0]]
        else:
            if wt != 0:
                raise _Malformed(f"{where} is a {f.type} but has wire type {wt}")
            values = [_from_varint(f.type, raw)]
        if f.repeated:
            vals.setdefault(f.name, []).extend(values)
        else:
            vals[f.name] = values[-1]
    if pos != end:
        raise _Malformed("a field runs past the end of its message")
    return msg


def decode(type_name: str, data: bytes, source: str = "<bytes>") -> Message:
    """The message of type ``type_name`` in ``data`` (protobuf's binary wire format); a
    :class:`ValueError` naming ``source`` when ``data`` is not one."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"nnabla protobuf: {source}: expected bytes, got {type(data).__name__}")
    buf = memoryview(bytes(data))
    try:
        return _decode(type_name, buf, 0, len(buf), 0)
    except _Malformed as e:
        raise ValueError(
            f"nnabla protobuf: {source} is not a valid {type_name} message (binary protobuf): {e}"
        ) from None


# -- the text format -------------------------------------------------------------------------


def _fmt_float(v: float, t: str) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if t == "float":  # the shortest repr that reads back to the same float32 (as protobuf's)
        f32 = struct.unpack("<f", struct.pack("<f", v))[0]
        for digits in range(6, 10):
            s = f"{f32:.{digits}g}"
            if struct.unpack("<f", struct.pack("<f", float(s)))[0] == f32:
                break
        return repr(float(s))
    return repr(float(v))


def _quote(s: str) -> str:
    out = []
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "'":
            out.append("\\'")
        elif 32 <= ch < 127:
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


def _text_value(f: _Field, v: Any) -> str:
    if f.type == "string":
        return _quote(v)
    if f.type == "bool":
        return "true" if v else "false"
    if f.type in ("float", "double"):
        return _fmt_float(v, f.type)
    return str(int(v))


def to_text(msg: Message, indent: int = 0) -> str:
    """The message in protobuf's text format (as ``text_format.MessageToString``: fields in
    number order, two-space indents)."""
    pad = " " * indent
    lines: list[str] = []
    for f, v in msg.set_fields():
        for e in v if f.repeated else [v]:
            if f.is_message:
                lines.append(f"{pad}{f.name} {{\n{to_text(e, indent + 2)}{pad}}}\n")
            else:
                lines.append(f"{pad}{f.name}: {_text_value(f, e)}\n")
    return "".join(lines)


_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"""
    r"""[fF]?)(?![\w.])"""
    r"""|(?P<id>[A-Za-z_][\w.]*)|(?P<punct>[{}<>:\[\],;])""",
    re.IGNORECASE,
)
_ESCAPES = {"n": 10, "r": 13, "t": 9, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34}
_ESCAPES["?"] = 63


def _unquote(tok: str) -> str:
    body = tok[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        i += 1
        if i >= len(body):
            raise _Malformed("a string ends with a backslash")
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i:])
            assert m is not None
            out.append(int(m.group(), 8) & 0xFF)
            i += len(m.group())
        elif e == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 1 :])
            if m is None:
                raise _Malformed("\\x without hex digits in a string")
            out.append(int(m.group(), 16))
            i += 1 + len(m.group())
        else:
            raise _Malformed(f"unknown escape \\{e} in a string")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Malformed(f"a string is not UTF-8: {e}") from None


def _tokens(text: str) -> list[tuple[str, str, int]]:
    toks: list[tuple[str, str, int]] = []
    pos = 0
    line = 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Malformed(f"line {line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind is not None:
            toks.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return toks


class _TextParser:
    def __init__(self, toks: list[tuple[str, str, int]]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str, int]:
        t = self.peek()
        if t is None:
            raise _Malformed("unexpected end of the text")
        self.i += 1
        return t

    def scalar(self, f: _Field) -> Any:
        kind, tok, line = self.take()
        if f.type == "string":
            if kind != "str":
                raise _Malformed(f"line {line}: {f.name} expects a string, got {tok!r}")
            s = _unquote(tok)
            while (following := self.peek()) is not None and following[
                0
            ] == "str":  # adjacent strings join
                s += _unquote(self.take()[1])
            return s
        if f.type == "bool":
            low = tok.lower()
            if low in ("true", "t", "1"):
                return True
            if low in ("false", "f", "0"):
                return False
            raise _Malformed(f"line {line}: {f.name} expects true or false, got {tok!r}")
        if kind != "num" and not (kind == "id" and tok.lower() in ("inf", "infinity", "nan")):
            raise _Malformed(f"line {line}: {f.name} expects a number, got {tok!r}")
        if f.type in ("float", "double"):
            return float(tok.rstrip("fF")) if tok.lower() not in ("inf", "-inf") else float(tok)
        try:
            n = int(tok, 0)
        except ValueError:
            raise _Malformed(f"line {line}: {f.name} expects an integer, got {tok!r}") from None
        lo, hi = (-(1 << 63), (1 << 63) - 1) if f.type == "int64" else (0, (1 << 32) - 1)
        if not lo <= n <= hi:
            raise _Malformed(f"line {line}: {f.name}: {n} is out of the range of {f.type}")
        return n

    def message(self, type_name: str, close: str | None, depth: int) -> Message:
        if depth > _MAX_DEPTH:
            raise _Malformed("messages nested too deeply")
        t = SCHEMA[type_name]
        msg = Message(type_name)
        vals = msg._values
        while True:
            nxt = self.peek()
            if nxt is None:
                if close is not None:
                    raise _Malformed(f"unexpected end of the text inside {type_name}")
                return msg
            kind, tok, line = nxt
            if close is not None and tok == close and kind == "punct":
                self.i += 1
                return msg
            if kind != "id":
                raise _Malformed(f"line {line}: expected a field name of {type_name}, got {tok!r}")
            self.i += 1
            f = t.by_name.get(tok)
            if f is None:
                raise _Malformed(f"line {line}: {type_name} has no field {tok!r}")
            sep = self.peek()
            if sep is not None and sep[1] == ":":
                self.i += 1
            elif not f.is_message:
                raise _Malformed(f"line {line}: expected ':' after {tok!r}")
            items: list[Any] = []
            nxt2 = self.peek()
            if nxt2 is not None and nxt2[1] == "[":
                self.i += 1
                while True:
                    if (p := self.peek()) is not None and p[1] == "]":
                        self.i += 1
                        break
                    items.append(self.value(f, depth))
                    if (p := self.peek()) is not None and p[1] == ",":
                        self.i += 1
            else:
                items.append(self.value(f, depth))
            if not f.repeated and len(items) != 1:
                raise _Malformed(f"line {line}: {tok!r} is not a repeated field")
            if f.repeated:
                vals.setdefault(f.name, []).extend(items)
            else:
                vals[f.name] = items[0]
            if (p := self.peek()) is not None and p[1] in (",", ";"):
                self.i += 1

    def value(self, f: _Field, depth: int) -> Any:
        if f.is_message:
            _, tok, line = self.take()
            if tok not in ("{", "<"):
                raise _Malformed(f"line {line}: {f.name} expects '{{', got {tok!r}")
            return self.message(f.type, "}" if tok == "{" else ">", depth + 1)
        return self.scalar(f)


def parse_text(type_name: str, text: str | bytes, source: str = "<text>") -> Message:
    """The message of type ``type_name`` written in protobuf's text format; a
    :class:`ValueError` naming ``source`` when ``text`` is not one (an unknown field too, as
    protobuf's ``text_format.Merge``)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"nnabla protobuf: {source} is not UTF-8 text: {e}") from None
    try:
        return _TextParser(_tokens(text)).message(type_name, None, 0)
    except _Malformed as e:
        raise ValueError(
            f"nnabla protobuf: {source} is not a valid {type_name} message (text format): {e}"
        ) from None


# -- the schema: every message of nnabla 1.39's nnabla.proto ----------------------------------
# ``Type: field=number[*]:type ...`` (``*``: repeated); nested types are ``Outer_Inner``.
_SPEC = """
Shape: dim=1*:int64
Communicator:
Context: backends=1*:string array_class=2:string device_id=3:string backend=4:string
   compute_backend=5:string
NNablaProtoBuf: version=1:string global_config=2:GlobalConfig
   training_config=10:TrainingConfig network=100*:Network parameter=200*:Parameter
   dataset=300*:Dataset optimizer=400*:Optimizer monitor=500*:Monitor executor=600*:Executor
GlobalConfig: default_context=1:Context
TrainingConfig: max_epoch=1:int64 iter_per_epoch=2:int64 save_best=100:bool
   monitor_interval=200:int64
Network: name=1:string batch_size=10:int64 repeat_info=11*:RepeatInfo variable=100*:Variable
   function=200*:Function
RepeatInfo: id=1:string times=2:int64
RepeatParameter: repeat_id=1:string times=2:int64
RecurrentParameter: repeat_id=1:string length=2:int64 axis=3:int64
Variable: name=1:string type=2:string repeat_id=3*:string shape=20:Shape
   initializer=100:Initializer
Initializer: type=2:string multiplier=10:float
Parameter: variable_name=1:string shape=20:Shape data=100*:float need_grad=101:bool
Dataset: name=1:string type=2:string uri=10:string batch_size=20:int64 cache_dir=30:string
   overwrite_cache=31:bool create_cache_explicitly=32:bool shuffle=100:bool
   no_image_normalization=101:bool variable=200*:string
Optimizer: name=1:string order=3:int64 network_name=10:string dataset_name=20*:string
   solver=30:Solver update_interval=40:int64 data_variable=50*:DataVariable
   generator_variable=60*:GeneratorVariable loss_variable=70*:LossVariable
   parameter_variable=80*:ParameterVariable start_iter=100:int64 end_iter=101:int64
SolverStateParameter: shape=20:Shape data=100*:float
SolverState: t=1:uint32 state_parameter=2*:SolverState_StateParameterEntry
SolverState_StateParameterEntry: key=1:string value=2:SolverStateParameter
Solver: type=2:string context=10:Context weight_decay=20:float states=40*:Solver_StatesEntry
   sgd_param=100:SgdParameter sgdw_param=101:SgdWParameter
   momentum_param=102:MomentumParameter lars_param=103:LarsParameter
   nesterov_param=104:NesterovParameter adadelta_param=105:AdadeltaParameter
   adagrad_param=106:AdagradParameter adabelief_param=107:AdaBeliefParameter
   rmsprop_param=108:RMSpropParameter rmsprop_graves_param=109:RMSpropGravesParameter
   adam_param=110:AdamParameter adamw_param=111:AdamWParameter
   adabound_param=112:AdaBoundParameter adamax_param=113:AdamaxParameter
   amsgrad_param=114:AMSGRADParameter amsbound_param=115:AMSBoundParameter
   lamb_param=116:LambParameter lion_param=117:LionParameter lr_scheduler_type=200:string
   polynomial_scheduler_param=210:PolynomialSchedulerParameter
   cosine_scheduler_param=211:CosineSchedulerParameter
   exponential_scheduler_param=212:ExponentialSchedulerParameter
   step_scheduler_param=213:StepSchedulerParameter
   custom_scheduler_param=299:CustomSchedulerParameter lr_warmup_scheduler_type=300:string
   linear_warmup_scheduler_param=310:LinearWarmupSchedulerParameter lr_decay=30:float
   lr_decay_interval=31:int64
Solver_StatesEntry: key=1:string value=2:SolverState
SgdParameter: lr=1:float
SgdWParameter: lr=1:float momentum=2:float wd=3:float
MomentumParameter: lr=1:float momentum=2:float
LarsParameter: lr=1:float momentum=2:float coefficient=3:float eps=4:float
NesterovParameter: lr=1:float momentum=2:float
AdadeltaParameter: lr=1:float decay=2:float eps=3:float
AdagradParameter: lr=1:float eps=2:float
AdaBeliefParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float wd=5:float
   amsgrad=6:bool weight_decouple=7:bool fixed_decay=8:bool rectify=9:bool
RMSpropParameter: lr=1:float decay=2:float eps=3:float
RMSpropGravesParameter: lr=1:float decay=2:float momentum=3:float eps=4:float
AdamParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float
AdamWParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float wd=5:float
AdaBoundParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float final_lr=5:float
   gamma=6:float
AdamaxParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float
AMSGRADParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float
   bias_correction=5:bool
AMSBoundParameter: alpha=1:float beta1=2:float beta2=3:float eps=4:float final_lr=5:float
   gamma=6:float bias_correction=7:bool
LambParameter: eta=1:float beta1=2:float beta2=3:float gamma_l=4:float gamma_u=5:float
   eps=6:float bias_correction=7:bool
LionParameter: lr=1:float beta1=2:float beta2=3:float
PolynomialSchedulerParameter: max_iter=1:float power=2:float
CosineSchedulerParameter: max_iter=1:float
ExponentialSchedulerParameter: gamma=1:float iter_interval=2:int64
StepSchedulerParameter: gamma=1:float iter_steps=2*:int64
CustomSchedulerParameter: max_iter=1:float network_name=10:string
   data_variable=50*:DataVariable output_variable=80*:OutputVariable
LinearWarmupSchedulerParameter: warmup_iter=1:int64
DataVariable: variable_name=1:string data_name=3:string
GeneratorVariable: variable_name=1:string type=2:string multiplier=3:float
LossVariable: variable_name=1:string
ParameterVariable: variable_name=1:string learning_rate_multiplier=2:float
Monitor: name=1:string network_name=10:string dataset_name=20*:string
   data_variable=50*:DataVariable generator_variable=60*:GeneratorVariable
   monitor_variable=70*:MonitorVariable
MonitorVariable: variable_name=1:string type=2:string data_name=3:string
   multiplier=100:float
Executor: name=1:string network_name=10:string num_evaluations=20:int64
   repeat_evaluation_type=21:string need_back_propagation=30:bool
   data_variable=50*:DataVariable generator_variable=60*:GeneratorVariable
   loss_variable=70*:LossVariable output_variable=80*:OutputVariable
   parameter_variable=90*:ParameterVariable no_image_normalization=101:bool
OutputVariable: variable_name=1:string type=2:string data_name=3:string
Function: name=1:string type=2:string repeat_id=3*:string context=10:Context
   input=20*:string output=30*:string affine_param=1001:AffineParameter
   rnn_param=1002:RNNParameter lstm_param=1003:LSTMParameter gru_param=1004:GRUParameter
   convolution_param=1005:ConvolutionParameter
   fused_convolution_param=1006:FusedConvolutionParameter
   depthwise_convolution_param=1007:DepthwiseConvolutionParameter
   deconvolution_param=1008:DeconvolutionParameter
   depthwise_deconvolution_param=1009:DepthwiseDeconvolutionParameter
   deformable_convolution_param=1010:DeformableConvolutionParameter
   max_pooling_param=1012:MaxPoolingParameter
   average_pooling_param=1013:AveragePoolingParameter
   sum_pooling_param=1015:SumPoolingParameter unpooling_param=1016:UnpoolingParameter
   roi_align_param=1018:RoiAlignParameter relu_param=1022:ReLUParameter
   leaky_relu_param=1023:LeakyReLUParameter softmax_param=1024:SoftmaxParameter
   log_softmax_param=1025:LogSoftmaxParameter elu_param=1026:ELUParameter
   selu_param=1027:SELUParameter crelu_param=1028:CReLUParameter
   celu_param=1029:CELUParameter prelu_param=1030:PReLUParameter
   softplus_param=1037:SoftPlusParameter
   fused_batch_normalization_param=1041:FusedBatchNormalizationParameter
   batch_normalization_param=1042:BatchNormalizationParameter
   group_normalization_param=1043:GroupNormalizationParameter
   instance_normalization_param=1044:InstanceNormalizationParameter
   layer_normalization_param=1045:LayerNormalizationParameter
   norm_normalization_param=1046:NormNormalizationParameter
   sync_batch_normalization_param=1047:SyncBatchNormalizationParameter
   tensor_normalization_param=1048:TensorNormalizationParameter
   weight_normalization_param=1049:WeightNormalizationParameter
   weight_standardization_param=1050:WeightStandardizationParameter
   spectral_norm_param=1051:SpectralNormParameter
   mean_subtraction_param=1052:MeanSubtractionParameter
   clip_grad_by_norm_param=1054:ClipGradByNormParameter sum_param=1055:SumParameter
   cumsum_param=1056:CumSumParameter mean_param=1057:MeanParameter
   max_param=1058:MaxParameter min_param=1059:MinParameter norm_param=1060:NormParameter
   prod_param=1061:ProdParameter cumprod_param=1062:CumProdParameter
   add2_param=1065:Add2Parameter bc_add2_param=1067:BcAdd2Parameter
   sub2_param=1068:Sub2Parameter mul2_param=1069:Mul2Parameter div2_param=1071:Div2Parameter
   pow2_param=1072:Pow2Parameter add_scalar_param=1073:AddScalarParameter
   mul_scalar_param=1074:MulScalarParameter pow_scalar_param=1075:PowScalarParameter
   r_sub_scalar_param=1076:RSubScalarParameter r_div_scalar_param=1077:RDivScalarParameter
   r_pow_scalar_param=1078:RPowScalarParameter sign_param=1079:SignParameter
   minimum_scalar_param=1082:MinimumScalarParameter
   maximum_scalar_param=1083:MaximumScalarParameter
   searchsorted_param=1093:SearchSortedParameter
   logical_and_scalar_param=1094:LogicalAndScalarParameter
   logical_or_scalar_param=1095:LogicalOrScalarParameter
   logical_xor_scalar_param=1096:LogicalXorScalarParameter
   equal_scalar_param=1097:EqualScalarParameter
   not_equal_scalar_param=1098:NotEqualScalarParameter
   greater_equal_scalar_param=1099:GreaterEqualScalarParameter
   greater_scalar_param=1100:GreaterScalarParameter
   less_equal_scalar_param=1101:LessEqualScalarParameter
   less_scalar_param=1102:LessScalarParameter reset_nan_param=1106:ResetNaNParameter
   reset_inf_param=1107:ResetInfParameter constant_param=1109:ConstantParameter
   arange_param=1110:ArangeParameter linspace_param=1111:LinspaceParameter
   batch_matmul_param=1116:BatchMatmulParameter round_param=1117:RoundParameter
   ceil_param=1118:CeilParameter floor_param=1119:FloorParameter
   concatenate_param=1133:ConcatenateParameter split_param=1134:SplitParameter
   stack_param=1135:StackParameter slice_param=1136:SliceParameter
   pad_param=1137:PadParameter transpose_param=1138:TransposeParameter
   broadcast_param=1139:BroadcastParameter broadcast_to_param=1140:BroadcastToParameter
   tile_param=1141:TileParameter one_hot_param=1142:OneHotParameter
   flip_param=1143:FlipParameter shift_param=1144:ShiftParameter
   sort_param=1145:SortParameter reshape_param=1146:ReshapeParameter
   shape_param=1147:ShapeParameter trilu_param=1150:TriluParameter
   meshgrid_param=1151:MeshgridParameter batch_cholesky_param=1155:BatchCholeskyParameter
   gather_param=1157:GatherParameter scatter_nd_param=1160:ScatterNdParameter
   scatter_add_param=1161:ScatterAddParameter bool_fill_param=1163:BoolFillParameter
   pack_padded_sequence_param=1164:PackPaddedSequenceParameter
   pad_packed_sequence_param=1165:PadPackedSequenceParameter
   interpolate_param=1167:InterpolateParameter onnx_resize_param=1168:ONNXResizeParameter
   fft_param=1169:FFTParameter ifft_param=1170:IFFTParameter stft_param=1171:STFTParameter
   istft_param=1172:ISTFTParameter dropout_param=1173:DropoutParameter
   top_k_data_param=1174:TopKDataParameter top_k_grad_param=1175:TopKGradParameter
   rand_param=1176:RandParameter randint_param=1177:RandintParameter
   randn_param=1178:RandnParameter rand_binomial_param=1179:RandBinomialParameter
   rand_beta_param=1180:RandBetaParameter rand_gamma_param=1181:RandGammaParameter
   random_choice_param=1182:RandomChoiceParameter random_crop_param=1183:RandomCropParameter
   random_flip_param=1184:RandomFlipParameter random_shift_param=1185:RandomShiftParameter
   random_erase_param=1186:RandomEraseParameter
   image_augmentation_param=1187:ImageAugmentationParameter
   softmax_cross_entropy_param=1190:SoftmaxCrossEntropyParameter
   categorical_cross_entropy_param=1191:CategoricalCrossEntropyParameter
   huber_loss_param=1194:HuberLossParameter
   epsilon_insensitive_loss_param=1195:EpsilonInsensitiveLossParameter
   kl_multinomial_param=1196:KLMultinomialParameter
   affine_grid_param=1197:AffineGridParameter warp_by_grid_param=1198:WarpByGridParameter
   binary_connect_affine_param=1202:BinaryConnectAffineParameter
   binary_connect_convolution_param=1203:BinaryConnectConvolutionParameter
   binary_weight_affine_param=1204:BinaryWeightAffineParameter
   binary_weight_convolution_param=1205:BinaryWeightConvolutionParameter
   inq_affine_param=1206:INQAffineParameter
   inq_convolution_param=1207:INQConvolutionParameter
   fixed_point_quantize_param=1208:FixedPointQuantizeParameter
   min_max_quantize_param=1209:MinMaxQuantizeParameter
   pow2_quantize_param=1210:Pow2QuantizeParameter prune_param=1211:PruneParameter
   quantize_linear_param=1212:QuantizeLinearParameter
   top_n_error_param=1214:TopNErrorParameter
   confusion_matrix_param=1216:ConfusionMatrixParameter
   vat_noise_param=1217:VATNoiseParameter sink_param=1219:SinkParameter
   nms_detection2d_param=1220:NmsDetection2dParameter
   onnx_non_max_suppression_param=1221:ONNXNonMaxSuppressionParameter
   max_pooling_backward_param=1222:MaxPoolingBackwardParameter
   patch_correlation_param=1223:PatchCorrelationParameter unique_param=1224:UniqueParameter
   eye_like_param=1225:EyeLikeParameter mod2_param=1226:Mod2Parameter
   bit_shift_param=1227:BitShiftParameter einsum_param=1228:EinsumParameter
   repeat_param=100:RepeatParameter recurrent_param=101:RecurrentParameter
AffineParameter: base_axis=1:int64
RNNParameter: num_layers=1:int64 nonlinearity=2:string dropout=3:float bidirectional=4:bool
   training=5:bool
LSTMParameter: num_layers=1:int64 dropout=2:float bidirectional=3:bool training=4:bool
GRUParameter: num_layers=1:int64 dropout=2:float bidirectional=3:bool training=4:bool
ConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape dilation=4:Shape
   group=5:int64 channel_last=6:bool
FusedConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape dilation=4:Shape
   group=5:int64 channel_last=6:bool decay_rate=7:float eps=8:float batch_stat=9:bool
   nonlinearity=10:string nonlinearity_args=11*:float pad_mode=12:string
   constant_value=13:float
DepthwiseConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape dilation=4:Shape
   multiplier=5:int64
DeconvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape dilation=4:Shape
   group=5:int64 channel_last=6:bool output_padding=7:Shape
DepthwiseDeconvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape
   dilation=4:Shape divisor=5:int64
DeformableConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape
   dilation=4:Shape group=5:int64 deformable_group=6:int64 channel_last=7:bool
MaxPoolingParameter: kernel=1:Shape stride=2:Shape ignore_border=3:bool pad=4:Shape
   channel_last=5:bool
AveragePoolingParameter: kernel=1:Shape stride=2:Shape ignore_border=3:bool pad=4:Shape
   channel_last=5:bool including_pad=6:bool
SumPoolingParameter: kernel=1:Shape stride=2:Shape ignore_border=3:bool pad=4:Shape
   channel_last=5:bool
UnpoolingParameter: kernel=1:Shape channel_last=2:bool
RoiAlignParameter: output_size=1:Shape spatial_scale=2*:float sampling_ratio=3:int64
   channel_last=4:bool
ReLUParameter: inplace=1:bool
LeakyReLUParameter: alpha=1:float inplace=2:bool
SoftmaxParameter: axis=1:int64
LogSoftmaxParameter: axis=1:int64
ELUParameter: alpha=1:double
SELUParameter: scale=1:double alpha=2:double
CReLUParameter: axis=1:int64
CELUParameter: alpha=1:double axis=2:int64
PReLUParameter: base_axis=1:int64
SoftPlusParameter: beta=1:double
FusedBatchNormalizationParameter: axes=1*:int64 decay_rate=2:float eps=3:float
   batch_stat=4:bool nonlinearity=5:string
BatchNormalizationParameter: axes=1*:int64 decay_rate=2:float eps=3:float batch_stat=4:bool
   no_scale=5:bool no_bias=6:bool
GroupNormalizationParameter: num_groups=1:int64 channel_axis=2:int64 batch_axis=3*:int64
   eps=4:float no_scale=5:bool no_bias=6:bool
InstanceNormalizationParameter: channel_axis=1:int64 batch_axis=2*:int64 eps=3:float
   no_scale=4:bool no_bias=5:bool
LayerNormalizationParameter: batch_axis=1*:int64 eps=2:float no_scale=3:bool no_bias=4:bool
NormNormalizationParameter: p=1:float axes=2*:int64 eps=3:float
SyncBatchNormalizationParameter: comm=1:Communicator group=2:string axes=3*:int64
   decay_rate=4:float eps=5:float batch_stat=6:bool
TensorNormalizationParameter: axes=1*:int64 eps=2:float no_scale=3:bool no_bias=4:bool
WeightNormalizationParameter: dim=1:int64 eps=2:float
WeightStandardizationParameter: channel_axis=1:int64 eps=2:float
SpectralNormParameter: dim=1:int64 itr=2:int64 eps=3:float test=4:bool output_u=5:bool
MeanSubtractionParameter: base_axis=1:int64 update_running_mean=2:bool
ClipGradByNormParameter: clip_norm=1:float axes=2*:int64
SumParameter: axes=1*:int64 keep_dims=2:bool
CumSumParameter: axis=1:int64 exclusive=2:bool reverse=3:bool
MeanParameter: axes=1*:int64 keep_dims=2:bool
MaxParameter: axes=1*:int64 keep_dims=2:bool with_index=3:bool only_index=4:bool
MinParameter: axes=1*:int64 keep_dims=2:bool with_index=3:bool only_index=4:bool
NormParameter: p=1:float axes=2*:int64 keep_dims=3:bool
ProdParameter: axes=1*:int64 keep_dims=2:bool
CumProdParameter: axis=1:int64 exclusive=2:bool reverse=3:bool
Add2Parameter: inplace=1:bool
BcAdd2Parameter: inplace=1:bool
Sub2Parameter: inplace=1:bool
Mul2Parameter: inplace=1:bool
Div2Parameter: inplace=1:bool
Pow2Parameter: inplace=1:bool
AddScalarParameter: val=1:double inplace=2:bool
MulScalarParameter: val=1:double inplace=2:bool
PowScalarParameter: val=1:double inplace=2:bool
RSubScalarParameter: val=1:double
RDivScalarParameter: val=1:double
RPowScalarParameter: val=1:double
SignParameter: alpha=1:float
MinimumScalarParameter: val=1:double
MaximumScalarParameter: val=1:double
SearchSortedParameter: right=1:bool
LogicalAndScalarParameter: val=1:bool
LogicalOrScalarParameter: val=1:bool
LogicalXorScalarParameter: val=1:bool
EqualScalarParameter: val=1:double
NotEqualScalarParameter: val=1:double
GreaterEqualScalarParameter: val=1:double
GreaterScalarParameter: val=1:double
LessEqualScalarParameter: val=1:double
LessScalarParameter: val=1:double
ResetNaNParameter: val=1:double
ResetInfParameter: val=1:double
ConstantParameter: val=1:float shape=2:Shape
ArangeParameter: start=1:float stop=2:float step=3:float
LinspaceParameter: start=1:float stop=2:float num=3:int64
BatchMatmulParameter: transpose_a=1:bool transpose_b=2:bool
RoundParameter:
CeilParameter:
FloorParameter:
ConcatenateParameter: axis=1:int64
SplitParameter: axis=1:int64
StackParameter: axis=1:int64
SliceParameter: start=1*:int64 stop=2*:int64 step=3*:int64
PadParameter: pad_width=1*:int64 mode=2:string constant_value=3:float
TransposeParameter: axes=1*:int64
BroadcastParameter: shape=1:Shape
BroadcastToParameter: axis=1:int64
TileParameter: reps=1*:int64
OneHotParameter: shape=1:Shape
FlipParameter: axes=1*:int64
ShiftParameter: shifts=1*:int64 border_mode=2:string
SortParameter: axis=1:int64 reverse=2:bool with_index=3:bool only_index=4:bool
ReshapeParameter: shape=1:Shape inplace=2:bool
ShapeParameter: start=1:int64 end=2:int64
TriluParameter: k=1:int64 upper=2:bool
MeshgridParameter: ij_indexing=1:bool
BatchCholeskyParameter: upper=1:bool
GatherParameter: axis=1:int64 batch_dims=2:int64
ScatterNdParameter: shape=1*:int64 add=2:bool
ScatterAddParameter: axis=1:int64
BoolFillParameter: value=1:float
PackPaddedSequenceParameter: batch_first=1:bool
PadPackedSequenceParameter: batch_first=1:bool padding_value=2:float total_length=3:int64
InterpolateParameter: output_size=1*:int64 mode=2:string align_corners=3:bool
   half_pixel=4:bool half_pixel_for_nn=5:bool channel_last=6:bool
ONNXResizeParameter: roi=1*:float scales=2*:float sizes=3*:int64 mode=4:string
   coordinate_transformation_mode=5:string cubic_coeff_a=6:float exclude_outside=7:int64
   extrapolation_value=8:float nearest_mode=9:string
FFTParameter: signal_ndim=1:int64 normalized=2:bool
IFFTParameter: signal_ndim=1:int64 normalized=2:bool
STFTParameter: window_size=1:int64 stride=2:int64 fft_size=3:int64 window_type=4:string
   center=5:bool pad_mode=6:string as_istft_backward=7:bool
ISTFTParameter: window_size=1:int64 stride=2:int64 fft_size=3:int64 window_type=4:string
   center=5:bool pad_mode=6:string as_stft_backward=7:bool
DropoutParameter: p=1:double seed=2:int64
TopKDataParameter: k=1:int64 abs=2:bool reduce=3:bool base_axis=4:int64 largest=5:bool
   with_index=6:bool
TopKGradParameter: k=1:int64 abs=2:bool base_axis=3:int64
RandParameter: low=1:float high=2:float shape=3:Shape seed=4:int64
RandintParameter: low=1:int64 high=2:int64 shape=3:Shape seed=4:int64
RandnParameter: mu=1:float sigma=2:float shape=3:Shape seed=4:int64
RandBinomialParameter: n=1:int64 p=2:float shape=3:Shape seed=4:int64
RandBetaParameter: alpha=1:float beta=2:float shape=3:Shape seed=4:int64
RandGammaParameter: k=1:float theta=2:float shape=3:Shape seed=4:int64
RandomChoiceParameter: shape=1:Shape replace=2:bool seed=3:int64
RandomCropParameter: shape=1:Shape base_axis=2:int64 seed=3:int64
RandomFlipParameter: axes=1*:int64 base_axis=2:int64 seed=3:int64
RandomShiftParameter: shifts=1*:int64 border_mode=2:string constant_value=3:float
   base_axis=4:int64 seed=5:int64
RandomEraseParameter: prob=1:float area_ratios=2*:float aspect_ratios=3*:float
   replacements=4*:float n=5:int64 share=6:bool inplace=7:bool base_axis=8:int64
   seed=9:int64 channel_last=10:bool ste_fine_grained=11:bool
ImageAugmentationParameter: shape=1:Shape pad=2:Shape min_scale=3:float max_scale=4:float
   angle=5:float aspect_ratio=6:float distortion=7:float flip_lr=8:bool flip_ud=9:bool
   brightness=10:float brightness_each=11:bool contrast=12:float contrast_center=13:float
   contrast_each=14:bool noise=15:float seed=16:int64
SoftmaxCrossEntropyParameter: axis=1:int64
CategoricalCrossEntropyParameter: axis=1:int64
HuberLossParameter: delta=1:float
EpsilonInsensitiveLossParameter: epsilon=1:float
KLMultinomialParameter: base_axis=1:int64
AffineGridParameter: size=1*:int64 align_corners=2:bool
WarpByGridParameter: mode=1:string padding_mode=2:string align_corners=3:bool
   channel_last=4:bool
BinaryConnectAffineParameter: base_axis=1:int64 quantize_zero_to=2:float
BinaryConnectConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape
   dilation=4:Shape group=5:int64 quantize_zero_to=6:float
BinaryWeightAffineParameter: base_axis=1:int64 quantize_zero_to=2:float
BinaryWeightConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape
   dilation=4:Shape group=5:int64 quantize_zero_to=6:float
INQAffineParameter: base_axis=1:int64 num_bits=2:int64 inq_iterations=3*:int64
   selection_algorithm=4:string seed=5:int64
INQConvolutionParameter: base_axis=1:int64 pad=2:Shape stride=3:Shape dilation=4:Shape
   group=5:int64 num_bits=6:int64 inq_iterations=7*:int64 selection_algorithm=8:string
   seed=9:int64
FixedPointQuantizeParameter: sign=1:bool n=2:int64 delta=3:float ste_fine_grained=4:bool
MinMaxQuantizeParameter: decay=1:float x_min_max=2:bool ema=3:bool ste_fine_grained=4:bool
   eps=5:float
Pow2QuantizeParameter: sign=1:bool with_zero=2:bool n=3:int64 m=4:int64
   ste_fine_grained=5:bool
PruneParameter: rate=1:float
QuantizeLinearParameter: round_mode=1:string narrow_range=2:bool dtype=3:int64
TopNErrorParameter: axis=1:int64 n=2:int64
ConfusionMatrixParameter: axis=1:int64
VATNoiseParameter: base_axis=1:int64 eps=2:float
SinkParameter: one_input_grad=1:bool
NmsDetection2dParameter: thresh=1:float nms=2:float nms_per_class=3:bool
ONNXNonMaxSuppressionParameter: center_point_box=1:int64 max_output_boxes_per_class=2:int64
   iou_threshold=3:float score_threshold=4:float
MaxPoolingBackwardParameter: kernel=1:Shape stride=2:Shape ignore_border=3:bool pad=4:Shape
   channel_last=5:bool
PatchCorrelationParameter: patch=1:Shape shift=2:Shape patch_step=3:Shape shift_step=4:Shape
   padding=5:Shape
UniqueParameter: flatten=1:bool axis=2:int64 sorted=3:bool with_index=4:bool
   with_inverse=5:bool with_counts=6:bool
EyeLikeParameter: k=1:int64
Mod2Parameter: fmod=1:bool
BitShiftParameter: direction=1:string
EinsumParameter: equation=1:string
"""

SCHEMA: dict[str, _Type] = _parse_schema(_SPEC)
