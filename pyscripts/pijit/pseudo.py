"""Python-like pseudo-source of a code object, for reading what pijit generated (resume functions,
rewritten code) in dumps: a symbolic stack turns each instruction back into an expression, a
statement is printed where a value is stored, returned or dropped, and jumps become labelled
`goto`s. It never runs anything and never fails: an instruction it does not model is shown as a
comment with the stack marked unknown.

    from pijit.pseudo import pseudo_source
    print(pseudo_source(code))
"""
import dis

_BINARY = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
           "MODULO": "%", "POWER": "**", "MATRIX_MULTIPLY": "@", "LSHIFT": "<<", "RSHIFT": ">>",
           "AND": "&", "OR": "|", "XOR": "^"}
_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_NOT": "not ", "UNARY_INVERT": "~"}
_LOADS = ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF")
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")
_NULL = "<null>"  # 3.11: the NULL under a callable (PUSH_NULL, LOAD_GLOBAL's, LOAD_METHOD's)


class _ConstText(str):
    """A constant's shown text that still carries the constant itself, so an instruction that
    needs the value (CALL_FUNCTION_KW's names) reads the object, never parses or evaluates text:
    a code object's constants are whatever its maker put there."""
    __slots__ = ("value",)


# The constant types a compiler emits, whose builtin repr runs no Python code. Exact types only:
# a subclass (which only a crafted code object holds) could define __repr__.
_PLAIN = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))
_CODE = type((lambda: 0).__code__)


def _const_repr(v, depth=0):
    t = type(v)
    if t in _PLAIN:
        return repr(v)
    if t is _CODE:
        return "<code %s>" % _text(v.co_name)
    if t in (tuple, frozenset) and depth < 4:
        items = [_const_repr(x, depth + 1) for x, _ in zip(v, range(16))]
        more = ", ..." if len(v) > 16 else ""
        if t is tuple:
            return "(%s%s%s)" % (", ".join(items), "," if len(v) == 1 else "", more)
        return "frozenset({%s%s})" % (", ".join(items), more)
    return "<%s constant>" % t.__name__


def _const(v):
    text = _const_repr(v)
    out = _ConstText(text if len(text) <= 60 else text[:57] + "...")
    out.value = v
    return out


def _text(s):
    """A str field of a code object as plain text (str.__str__ copies a subclass without calling
    its own __str__)."""
    return str.__str__(s) if isinstance(s, str) else "<?>"


def _placeholder_consts(code):
    """`code` with its constants replaced by their indices: dis reprs every constant it decodes,
    and a crafted constant's __repr__ is code of its maker's choosing."""
    consts = tuple(range(len(code.co_consts)))
    if hasattr(code, "replace"):
        return code.replace(co_consts=consts)
    return _CODE(code.co_argcount, code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize,  # 3.7
                 code.co_flags, code.co_code, consts, code.co_names, code.co_varnames,
                 _text(code.co_filename), _text(code.co_name), code.co_firstlineno, code.co_lnotab,
                 code.co_freevars, code.co_cellvars)


def _kw_names(item):
    """The keyword names of CALL_FUNCTION_KW: a constant tuple of str, read as the object."""
    names = getattr(item, "value", None)
    if type(names) is tuple and all(type(n) is str for n in names):
        return list(names)
    return []


def _kw_tuple(names):
    """3.11's KW_NAMES constant: a tuple of str, read as the object (anything else: none)."""
    if type(names) is tuple and all(type(n) is str for n in names):
        return list(names)
    return []


def pseudo_source(code):
    """The pseudo-source of `code` as a str (a `def` line, then one statement per line)."""
    args = list(code.co_varnames[:code.co_argcount + getattr(code, "co_kwonlyargcount", 0)])
    out = ["def %s(%s):  # pseudo-source of %s:%d" % (_text(code.co_name), ", ".join(args),
                                                     _text(code.co_filename), code.co_firstlineno)]
    instrs = list(dis.get_instructions(_placeholder_consts(code)))
    targets = {i.argval for i in instrs if i.opcode in dis.hasjabs or i.opcode in dis.hasjrel}
    stack = []
    kw_names = [None]  # 3.11: KW_NAMES' tuple, for the CALL after it

    def pop(n=1):
        vals = [stack.pop() if stack else "<?>" for _ in range(n)]
        return vals[::-1]

    def emit(text):
        out.append("    " + text)

    for ins in instrs:
        op, arg = ins.opname, ins.argval
        if ins.offset in targets:
            out.append("  L%d:" % ins.offset)
        if op == "LOAD_GLOBAL" and ins.arg is not None and ins.arg & 1 and "NULL" in ins.argrepr:
            stack.extend([_NULL, str(arg)])  # (3.11)
        elif op in _LOADS:
            stack.append(str(arg))
        elif op == "PUSH_NULL":
            stack.append(_NULL)
        elif op == "LOAD_CONST":
            stack.append(_const(code.co_consts[ins.arg]))
        elif op == "LOAD_METHOD" and "PRECALL" in dis.opmap:  # 3.11: a slot under the method
            stack.extend([_NULL, "%s.%s" % (pop()[0], arg)])
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            stack.append("%s.%s" % (pop()[0], arg))
        elif op in _STORES:
            emit("%s = %s" % (arg, pop()[0]))
        elif op == "STORE_ATTR":
            obj, val = pop()[0], pop()[0]
            emit("%s.%s = %s" % (obj, arg, val))
        elif op == "STORE_SUBSCR":
            key, obj, val = pop()[0], pop()[0], pop()[0]
            emit("%s[%s] = %s" % (obj, key, val))
        elif op in ("DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL"):
            emit("del %s" % arg)
        elif (op.startswith(("BINARY_", "INPLACE_")) and op.split("_", 1)[1] in _BINARY) or op == "BINARY_OP":
            a, b = pop(2)
            if op == "BINARY_OP":  # (3.11: its operator by its argument, "+=" in place)
                sym, inplace = ins.argrepr.rstrip("="), ins.argrepr.endswith("=") and ins.argrepr != "=="
            else:
                sym, inplace = _BINARY[op.split("_", 1)[1]], op.startswith("INPLACE_")
            if inplace:
                emit("%s %s= %s" % (a, sym, b))
                stack.append(a)
            else:
                stack.append("(%s %s %s)" % (a, sym, b))
        elif op == "BINARY_SUBSCR":
            a, b = pop(2)
            stack.append("%s[%s]" % (a, b))
        elif op == "COMPARE_OP":
            a, b = pop(2)
            stack.append("(%s %s %s)" % (a, arg, b))
        elif op == "IS_OP":
            a, b = pop(2)
            stack.append("(%s %s %s)" % (a, "is not" if ins.arg else "is", b))
        elif op == "CONTAINS_OP":
            a, b = pop(2)
            stack.append("(%s %s %s)" % (a, "not in" if ins.arg else "in", b))
        elif op in _UNARY:
            stack.append("(%s%s)" % (_UNARY[op], pop()[0]))
        elif op == "KW_NAMES":
            kw_names[0] = code.co_consts[ins.arg]
        elif op == "PRECALL":
            pass  # (3.11: the CALL after it calls)
        elif op == "CALL":  # 3.11: a slot (NULL or a method's callable), the callable, the arguments
            a = pop(ins.arg or 0)
            fn, slot = pop()[0], pop()[0]
            if slot != _NULL:  # a method: the "callable" is its self
                fn, a = slot, [fn] + a
            kw = _kw_tuple(kw_names[0])
            kw_names[0] = None
            if len(kw) > len(a):
                kw = []
            pos = a[:len(a) - len(kw)]
            stack.append("%s(%s)" % (fn, ", ".join(pos + ["%s=%s" % (k, v) for k, v in zip(kw, a[len(a) - len(kw):])])))
        elif op in ("CALL_FUNCTION", "CALL_METHOD"):
            n = ins.arg or 0
            a = pop(n)
            stack.append("%s(%s)" % (pop()[0], ", ".join(a)))
        elif op == "CALL_FUNCTION_KW":
            names = pop()[0]
            a = pop(ins.arg)
            kw = _kw_names(names)  # unknown names: shown positionally
            if len(kw) > len(a):
                kw = []
            pos = a[:len(a) - len(kw)]
            kws = ["%s=%s" % (k, v) for k, v in zip(kw, a[len(a) - len(kw):])]
            stack.append("%s(%s)" % (pop()[0], ", ".join(pos + kws)))
        elif op == "CALL_FUNCTION_EX":
            kw = pop()[0] if ins.arg & 1 else None
            a = pop()[0]
            fn = pop()[0]
            if stack and stack[-1] == _NULL:  # (3.11)
                pop()
            stack.append("%s(*%s%s)" % (fn, a, ", **" + kw if kw else ""))
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
            a = pop(ins.arg)
            fmt = {"BUILD_TUPLE": "(%s%s)", "BUILD_LIST": "[%s%s]", "BUILD_SET": "{%s%s}"}[op]
            stack.append(fmt % (", ".join(a), "," if op == "BUILD_TUPLE" and len(a) == 1 else ""))
        elif op == "BUILD_MAP":
            a = pop(2 * ins.arg)
            stack.append("{%s}" % ", ".join("%s: %s" % (a[i], a[i + 1]) for i in range(0, len(a), 2)))
        elif op == "UNPACK_SEQUENCE":
            v = pop()[0]
            emit("_unpacked = %s" % v)
            stack.extend("_unpacked[%d]" % k for k in reversed(range(ins.arg)))
        elif op == "POP_TOP":
            v = pop()[0]
            if "(" in v:  # a call: its effect is the statement
                emit(v)
        elif op == "DUP_TOP":
            stack.append(stack[-1] if stack else "<?>")
        elif op == "COPY":  # (3.11)
            stack.append(stack[-ins.arg] if len(stack) >= ins.arg else "<?>")
        elif op == "SWAP":
            if len(stack) >= ins.arg:
                stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        elif op == "ROT_TWO":
            a, b = pop(2)
            stack.extend([b, a])
        elif op == "ROT_THREE":
            a, b, c = pop(3)
            stack.extend([c, a, b])
        elif op == "RETURN_VALUE":
            emit("return %s" % pop()[0])
        elif op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
                    "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE"):
            emit("if %s%s: goto L%d" % ("not " if op.endswith("FALSE") else "", pop()[0], arg))
        elif op.startswith("POP_JUMP_") and op.endswith("NONE"):  # (3.11: is None / is not None)
            emit("if %s is %sNone: goto L%d" % (pop()[0], "not " if "NOT_NONE" in op else "", arg))
        elif op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            emit("if %s%s: goto L%d  # (keeping the value)" % ("not " if "FALSE" in op else "", stack[-1] if stack
                                                                 else "<?>", arg))
        elif op in ("JUMP_ABSOLUTE", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
            emit("goto L%d" % arg)
        elif op == "GET_ITER":
            stack.append("iter(%s)" % pop()[0])
        elif op == "FOR_ITER":
            it = stack[-1] if stack else "<?>"
            emit("_next = next(%s)  # exhausted: goto L%d" % (it, arg))
            stack.append("_next")
        elif op in ("NOP", "EXTENDED_ARG", "RESUME", "CACHE", "SETUP_LOOP", "POP_BLOCK", "MAKE_CELL", "COPY_FREE_VARS"):
            pass
        else:
            emit("# %s %s" % (op, "" if ins.arg is None else ins.argrepr or ins.arg))
            stack.append("<%s>" % op.lower())
    return "\n".join(out) + "\n"
