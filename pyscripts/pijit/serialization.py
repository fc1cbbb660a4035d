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
_ITEMSIZE = {t.name: t.itemsize for t in _dt._ALL}  # every dtype, by numpy's name


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
        data = _C.tensor_to_bytes(t) if t.size else b""
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


_INT64_MAX = 2 ** 63 - 1


class _Bad(Exception):
    """What is wrong with a checkpoint file; load_checkpoint turns it into one ValueError."""


def _int(v, what, lo=0):
    if type(v) is not int or v < lo:
        raise _Bad("%s must be an int >= %d, got %s" % (what, lo, _short(v)))
    return v


def _short(v):
    """repr(v) cut short; never the whole of a huge JSON int or list (quick to show)."""
    if type(v) is int and v.bit_length() > 200:
        return "<an int of %d bits>" % v.bit_length()
    if type(v) is list:
        text = "[%s%s]" % (", ".join(_short(x) for x in v[:8]), ", ..." if len(v) > 8 else "")
    else:
        text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_entry(i, e, data_len, seen):
    """Validates the i-th tensor record of the header against the format (docs/checkpoint.md)
    and the data section's length; returns (name, dtype, shape, offset, nbytes, requires_grad)."""
    if type(e) is not dict:
        raise _Bad("tensor record %d is a %s, not an object" % (i, type(e).__name__))
    for key in ("name", "dtype", "shape", "offset", "nbytes"):
        if key not in e:
            raise _Bad("tensor record %d has no %r" % (i, key))
    name = e["name"]
    if type(name) is not str or not name:
        raise _Bad("tensor record %d: name must be a non-empty string, got %s" % (i, _short(name)))
    if name in seen:
        raise _Bad("parameter %r appears twice" % name)
    seen.add(name)
    what = "parameter %r" % name
    dtype = e["dtype"]
    if type(dtype) is not str or dtype not in _ITEMSIZE:
        raise _Bad("%s has unknown dtype %s (known: %s)" % (what, _short(dtype), ", ".join(sorted(_ITEMSIZE))))
    shape = e["shape"]
    if type(shape) is not list:
        raise _Bad("%s: shape must be a list of ints, got %s" % (what, _short(shape)))
    count, span = 1, _ITEMSIZE[dtype]
    for d in shape:
        _int(d, "%s: every size in shape %s" % (what, _short(shape)))
        count *= d
        span *= max(d, 1)  # the largest stride times its size: must fit the tensor's int64 strides
        if span > _INT64_MAX:
            raise _Bad("%s: shape %s is too large (its strides do not fit in 64 bits)" % (what, _short(shape)))
    nbytes = _int(e["nbytes"], "%s: nbytes" % what)
    offset = _int(e["offset"], "%s: offset" % what)
    if nbytes != count * _ITEMSIZE[dtype]:
        raise _Bad("%s: nbytes is %s but shape %s of %s needs %s" % (what, _short(nbytes), _short(shape), dtype,
                                                                     _short(count * _ITEMSIZE[dtype])))
    if offset + nbytes > data_len:
        raise _Bad("%s: its data (%s bytes at offset %s) runs past the end of the data section (%d bytes): "
                   "the file is truncated or its header is wrong" % (what, nbytes, _short(offset), data_len))
    requires_grad = e.get("requires_grad", True)
    if type(requires_grad) is not bool:
        raise _Bad("%s: requires_grad must be true or false, got %s" % (what, _short(requires_grad)))
    return name, dtype, tuple(shape), offset, nbytes, requires_grad


def _parse(blob):
    """The header's tensor records, checked, the append_dict and the data section of `blob`."""
    fixed = len(MAGIC) + 8
    head = blob[:len(MAGIC) - 1]
    if head != MAGIC[:len(head)]:
        raise _Bad("not a pijit checkpoint (bad magic)")
    if len(blob) < fixed:
        raise _Bad("truncated: %d bytes, shorter than the %d-byte preamble" % (len(blob), fixed))
    if blob[len(MAGIC) - 1] != MAGIC[-1]:
        raise _Bad("unsupported format version %d (this pijit reads version %d)"
                   % (blob[len(MAGIC) - 1], MAGIC[-1]))
    (hlen,) = struct.unpack("<Q", blob[len(MAGIC):fixed])
    if hlen > len(blob) - fixed:
        raise _Bad("truncated: the header says it is %d bytes but only %d follow"
                   % (hlen, len(blob) - fixed))
    import json  # here, not at import: `import pijit` stays quick (pijit run)
    try:
        header = json.loads(blob[fixed:fixed + hlen].decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise _Bad("corrupt header (%s)" % (str(exc)[:120],))
    if type(header) is not dict or type(header.get("tensors")) is not list:
        raise _Bad("corrupt header (no list of tensors)")
    append = header.get("append_dict", {})
    if type(append) is not dict:
        raise _Bad("corrupt header (append_dict is a %s, not an object)" % type(append).__name__)
    data = memoryview(blob)[fixed + hlen:]
    seen = set()
    entries = [_check_entry(i, e, len(data), seen) for i, e in enumerate(header["tensors"])]
    return entries, append, data


def _read(ckpt_file_name):
    """(entries, append_dict, data) of a checkpoint file; any fault of the file is one ValueError
    naming it and what is wrong."""
    try:
        path = os.fspath(ckpt_file_name)
    except TypeError:
        raise TypeError("For 'load_checkpoint', the type of 'ckpt_file_name' should be str, but got %s"
                        % type(ckpt_file_name).__name__) from None
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        raise ValueError("load_checkpoint: no such file: %s" % path)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as exc:
        raise ValueError("load_checkpoint: cannot read %s: %s" % (path, exc.strerror or exc)) from None
    try:
        return _parse(blob)
    except _Bad as exc:
        raise ValueError("load_checkpoint: %s: %s" % (path, exc)) from None


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
    entries, append, data = _read(ckpt_file_name)
    prefixes = (filter_prefix,) if isinstance(filter_prefix, str) else tuple(filter_prefix or ())
    keep = (specify_prefix,) if isinstance(specify_prefix, str) else tuple(specify_prefix or ())
    out = {}
    for name, dtype_name, shape, offset, nbytes, requires_grad in entries:
        if any(name.startswith(p) for p in prefixes):
            continue
        if keep and not any(name.startswith(p) for p in keep):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        dtype = _dt.as_dtype(dtype_name)
        if nbytes == 0:
            import pijit as pj
            t = pj.zeros(shape, dtype=dtype)
        else:
            t = _C.tensor_from_bytes(data[offset:offset + nbytes], dtype, shape)
        out[name] = Parameter(t, name=name, requires_grad=requires_grad)
    for k, v in append.items():
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
