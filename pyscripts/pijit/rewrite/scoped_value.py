"""ScopedValue: a name (`x`, `self.conv1`) or a constant as it appears in a rewritten statement."""
import enum

from pijit._validate import type_error


class ValueType(enum.Enum):
    """What a ScopedValue holds: a constant, a container of ScopedValues, a reference to a variable
    (NamingValue) or some other object (CustomObjValue)."""
    ConstantValue = 0
    TupleValue = 20
    ListValue = 21
    DictValue = 22
    NamingValue = 40
    CustomObjValue = 41


def _check_str(arg, value):
    if not isinstance(value, str):
        raise type_error("ScopedValue", arg, value, "str")


class ScopedValue(object):
    """A value with its scope: `ScopedValue(ValueType.NamingValue, "self", "conv1")` is `self.conv1`,
    a NamingValue with an empty scope is a local variable, a ConstantValue is a literal."""

    def __init__(self, arg_type, scope="", value=None):
        if not isinstance(arg_type, ValueType):
            raise type_error("ScopedValue", "arg_type", arg_type, "ValueType")
        _check_str("scope", scope)
        self.type = arg_type
        self.scope = scope
        self.value = value

    @classmethod
    def create_variable_value(cls, value):
        """A constant (None, int, float, str, bool), a tuple/list/dict of them (each item a
        ScopedValue), or any other object as a CustomObjValue."""
        if value is None or isinstance(value, (int, float, str, bool)):
            return cls(ValueType.ConstantValue, "", value)
        if isinstance(value, tuple):
            return cls(ValueType.TupleValue, "", tuple(cls.create_variable_value(v) for v in value))
        if isinstance(value, list):
            return cls(ValueType.ListValue, "", [cls.create_variable_value(v) for v in value])
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    raise TypeError("For 'ScopedValue', the keys of a dict value should be str, but got %s."
                                    % type(key).__name__)
            return cls(ValueType.DictValue, "", {k: cls.create_variable_value(v) for k, v in value.items()})
        return cls(ValueType.CustomObjValue, "", value)

    @classmethod
    def create_naming_value(cls, name, scope=""):
        """A reference to the variable `name` (`scope.name` when a scope such as "self" is given)."""
        _check_str("name", name)
        _check_str("scope", scope)
        return cls(ValueType.NamingValue, scope, name)

    @staticmethod
    def create_name_values(names, scopes=None):
        """One NamingValue per name (with the scope of the same index when scopes are given)."""
        if not isinstance(names, (list, tuple)):
            raise type_error("ScopedValue", "names", names, "list or tuple")
        for n in names:
            _check_str("names", n)
        if scopes is not None:
            if not isinstance(scopes, (list, tuple)):
                raise type_error("ScopedValue", "scopes", scopes, "list or tuple")
            for s in scopes:
                _check_str("scopes", s)
            if len(names) != len(scopes):
                raise RuntimeError("Length of names should be equal to length of scopes")
        return [ScopedValue.create_naming_value(n, scopes[i] if scopes is not None else "")
                for i, n in enumerate(names)]

    def is_local_name(self):
        return self.type is ValueType.NamingValue and not self.scope

    def local_names(self):
        """The local variables this value reads (itself, or those inside a container)."""
        if self.is_local_name():
            return [self.value]
        if self.type in (ValueType.TupleValue, ValueType.ListValue):
            return [n for v in self.value for n in v.local_names()]
        if self.type is ValueType.DictValue:
            return [n for v in self.value.values() for n in v.local_names()]
        return []

    def source(self):
        """The text of this value in generated code."""
        t = self.type
        if t is ValueType.NamingValue:
            return "%s.%s" % (self.scope, self.value) if self.scope else str(self.value)
        if t is ValueType.ConstantValue:
            return repr(self.value)
        if t is ValueType.TupleValue:
            items = [v.source() for v in self.value]
            return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)
        if t is ValueType.ListValue:
            return "[%s]" % ", ".join(v.source() for v in self.value)
        if t is ValueType.DictValue:
            return "{%s}" % ", ".join("%r: %s" % (k, v.source()) for k, v in self.value.items())
        raise TypeError("rewrite cannot write the object %r into code: pass it to the network as an "
                        "attribute (a Cell or a Parameter) and refer to it by name" % (self.value,))

    def __str__(self):
        if self.type is ValueType.ConstantValue:
            return str(self.value)
        if self.type is ValueType.CustomObjValue:
            return "CustomObj: %s" % (self.value,)
        return self.source()

    __repr__ = __str__

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, ScopedValue):
            return False
        return self.type == other.type and self.scope == other.scope and self.value == other.value

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        v = self.value
        if isinstance(v, list):
            v = tuple(v)
        elif isinstance(v, dict):
            v = tuple(sorted(v.items()))
        try:
            return hash((self.type, self.scope, v))
        except TypeError:
            return hash((self.type, self.scope, id(self.value)))
