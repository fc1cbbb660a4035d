"""Checkpoints: save_checkpoint, load_checkpoint, load_param_into_net (MindSpore's names).

File format (pijit checkpoint v1, documented in docs/checkpoint.md):
    10 bytes   magic b"PIJITCKPT" + version byte 0x01
    8 bytes    little-endian uint64: length H of the header
    H bytes    UTF-8 JSON: {"tensors": [{"name", "dtype", "shape", "offset", "nbytes",
               "requires_grad"}], "append_dict": {str: JSON value}}
    data       each tensor's elements, C order, little-endian, at `offset` bytes from the start
               of the data section (offsets are 64-byte aligned)
"""
import os
import struct

from pijit import _C
from pijit import dtype as _dt
from pijit._state import runtime_state

MAGIC = b"PIJITCKPT\x01"
_FORMATS = {"bool": "?", "int32": "i", "int64": "q", "float32": "f", "float64": "d"}


def _entries(save_obj):
    from pijit.nn.cell import Cell
    if isinstance(save_obj, Cell):
        return [(p.name, p) for p in save_obj.get_parameters()]
    if isinstance(save_obj, dict):
        return list(save_obj.items())
    if isinstance(save_obj, (list, tuple)):
        out = []
        for item in save_obj:
            if not isinstance(item, dict) or "name" not in item or "data" not in item:
                raise TypeError("save_checkpoint: list elements must be {'name': str, 'data': Tensor}")
            out.append((item["name"], item["data"]))
        return out
    raise TypeError("save_checkpoint: save_obj must be a Cell, a dict or a list of "
                    "{'name', 'data'} dicts, got %s" % type(save_obj).__name__)


def _no_encryption(fn, key):
    if key is not None:
        raise NotImplementedError("%s: encrypted checkpoints (enc_key/dec_key) are not supported "
                                  "by pijit" % fn)


def _ckpt_format(fn, format):
    if format != "ckpt":
        raise ValueError("%s: format must be 'ckpt' (pijit's format, docs/checkpoint.md), got %r"
                         % (fn, format))


@runtime_state("writes a file")
def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="ckpt", **kwargs):
    """MindSpore's save_checkpoint. pijit writes synchronously (async_save only says the caller
    does not wait, which holds), has no sharded parameters to integrate, and always writes its own
    format; choice_func(name) -> bool selects the parameters written."""
    from pijit.tensor import Tensor
    _no_encryption("save_checkpoint", enc_key)
    _ckpt_format("save_checkpoint", format)
    if kwargs:
        raise TypeError("save_checkpoint() got unexpected keyword argument(s) %s"
                        % ", ".join(map(repr, sorted(kwargs))))
    entries = _entries(save_obj)
    if choice_func is not None:
        entries = [(n, t) for n, t in entries if choice_func(n)]
    tensors, blobs, offset = [], [], 0
    for name, t in entries:
        if not isinstance(name, str):
            raise TypeError("save_checkpoint: parameter names must be str, got %r" % (name,))
        if not isinstance(t, _C.TensorBase):
            t = Tensor(t)
        data = bytes(memoryview(t.contiguous()).cast("B")) if t.size else b""
        tensors.append({"name": name, "dtype": t.dtype.name, "shape": list(t.shape),
                        "offset": offset, "nbytes": len(data),
                        "requires_grad": bool(getattr(t, "requires_grad", True))})
        blobs.append(data)
        offset += (len(data) + 63) // 64 * 64
    import json  # here, not at import: `import pijit` stays quick (pijit run)
    header = json.dumps({"tensors": tensors, "append_dict": append_dict or {}}).encode("utf-8")
    if not ckpt_file_name.endswith(".ckpt"):
        ckpt_file_name += ".ckpt"
    tmp = ckpt_file_name + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for data in blobs:
            f.write(data)
            f.write(b"\0" * ((len(data) + 63) // 64 * 64 - len(data)))
    os.replace(tmp, ckpt_file_name)  # never leaves a half-written checkpoint behind


def _read(ckpt_file_name):
    if not os.path.exists(ckpt_file_name):
        raise ValueError("load_checkpoint: no such file: %s" % ckpt_file_name)
    with open(ckpt_file_name, "rb") as f:
        blob = f.read()
    if blob[:len(MAGIC)] != MAGIC:
        raise ValueError("load_checkpoint: %s is not a pijit checkpoint (bad magic)" % ckpt_file_name)
    (hlen,) = struct.unpack("<Q", blob[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    try:
        import json
        header = json.loads(blob[start:start + hlen].decode("utf-8"))
    except ValueError:
        raise ValueError("load_checkpoint: %s has a corrupt header" % ckpt_file_name) from None
    return header, memoryview(blob)[start + hlen:]


@runtime_state("reads a file")
def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="ckpt"):
    """MindSpore's load_checkpoint: returns {name: Parameter}; loads into `net` too when given.
    filter_prefix drops names with those prefixes, specify_prefix keeps only those, choice_func
    (name -> bool) keeps those it accepts."""
    from pijit.parameter import Parameter
    from pijit.tensor import Tensor
    _no_encryption("load_checkpoint", dec_key)
    _ckpt_format("load_checkpoint", format)
    header, data = _read(ckpt_file_name)
    prefixes = (filter_prefix,) if isinstance(filter_prefix, str) else tuple(filter_prefix or ())
    keep = (specify_prefix,) if isinstance(specify_prefix, str) else tuple(specify_prefix or ())
    out = {}
    for e in header["tensors"]:
        name = e["name"]
        if any(name.startswith(p) for p in prefixes):
            continue
        if keep and not any(name.startswith(p) for p in keep):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        if e["dtype"] not in _FORMATS:
            raise ValueError("load_checkpoint: %s has unknown dtype %r" % (name, e["dtype"]))
        shape = tuple(e["shape"])
        raw = data[e["offset"]:e["offset"] + e["nbytes"]]
        if len(raw) != e["nbytes"]:
            raise ValueError("load_checkpoint: %s is truncated (parameter %s)" % (ckpt_file_name, name))
        dtype = _dt.as_dtype(e["dtype"])
        n = 1
        for d in shape:
            n *= d
        if n == 0:
            import pijit as pj
            t = pj.zeros(shape, dtype=dtype)
        else:
            t = Tensor(raw.cast(_FORMATS[e["dtype"]]), dtype).reshape(shape)
        out[name] = Parameter(t, name=name, requires_grad=e.get("requires_grad", True))
    for k, v in header.get("append_dict", {}).items():
        out.setdefault(k, v)
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load)
    return out


@runtime_state("replaces parameters")
def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Copies values into net's parameters by name. Returns (params not loaded, checkpoint
    entries not used). Shape mismatches raise ValueError naming both shapes."""
    from pijit.nn.cell import Cell
    if not isinstance(net, Cell):
        raise TypeError("load_param_into_net: net must be a Cell, got %s" % type(net).__name__)
    if not isinstance(parameter_dict, dict):
        raise TypeError("load_param_into_net: parameter_dict must be a dict")
    not_loaded, used = [], set()
    for name, p in net.parameters_and_names():
        key = p.name if p.name in parameter_dict else name
        if key not in parameter_dict:
            not_loaded.append(p.name)
            continue
        new = parameter_dict[key]
        if not isinstance(new, _C.TensorBase):
            continue
        if tuple(new.shape) != tuple(p.shape):
            raise ValueError("load_param_into_net: parameter %s has shape %s in the network but "
                             "%s in the checkpoint" % (p.name, p.shape, new.shape))
        p.set_data(new.astype(p.dtype) if new.dtype is not p.dtype else new)
        used.add(key)
    unused = [k for k, v in parameter_dict.items() if k not in used and isinstance(v, _C.TensorBase)]
    if strict_load and (not_loaded or unused):
        raise ValueError("load_param_into_net(strict_load=True): not loaded %s; unused %s"
                         % (not_loaded, unused))
    return not_loaded, unused
