"""SequentialCell, CellList, CellDict."""
from collections import OrderedDict

from pijit.nn.cell import Cell


def _check_cell(c, who):
    if not isinstance(c, Cell):
        raise TypeError("%s: every element must be a Cell, got %s" % (who, type(c).__name__))
    return c


def _key_at(cells, index, who):
    """The child name at position `index` of an ordered container (negative from the end)."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError("%s indices must be integers, not %s" % (who, type(index).__name__))
    keys = list(cells.keys())
    if not -len(keys) <= index < len(keys):
        raise IndexError("%s index %d out of range for %d cells" % (who, index, len(keys)))
    return keys[index]


class SequentialCell(Cell):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for name, cell in args[0].items():
                self.insert_child_to_cell(name, _check_cell(cell, "SequentialCell"))
        else:
            cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
            for i, cell in enumerate(cells):
                self.insert_child_to_cell(str(i), _check_cell(cell, "SequentialCell"))

    def __getitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return SequentialCell(cells[index])
        return cells[index]

    def __setitem__(self, index, cell):
        self._cells[_key_at(self._cells, index, "SequentialCell")] = _check_cell(cell, "SequentialCell")

    def __delitem__(self, index):
        keys = list(self._cells.keys())
        for k in (keys[index] if isinstance(index, slice) else [_key_at(self._cells, index, "SequentialCell")]):
            del self._cells[k]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        self.insert_child_to_cell(str(len(self._cells)), _check_cell(cell, "SequentialCell"))
        return self

    def construct(self, x):
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    def __init__(self, *args):
        super().__init__()
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        for cell in cells:
            self.append(cell)

    def __getitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return CellList(cells[index])
        return cells[index]

    def __setitem__(self, index, cell):
        self._cells[_key_at(self._cells, index, "CellList")] = _check_cell(cell, "CellList")

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        if isinstance(cell, CellDict):  # MindSpore keeps CellDicts out of CellLists
            raise TypeError("For 'CellList', a CellDict can not be an element of a CellList.")
        self.insert_child_to_cell(str(len(self._cells)), _check_cell(cell, "CellList"))
        return self

    def extend(self, cells):
        for c in cells:
            self.append(c)
        return self

    def insert(self, index, cell):
        cells = list(self._cells.values())
        cells.insert(index, _check_cell(cell, "CellList"))
        self._cells.clear()
        for c in cells:
            self.append(c)

    def construct(self, *inputs):
        raise TypeError("CellList is a container; call its elements instead")


class CellDict(Cell):
    """MindSpore's CellDict: Cells by string key, in insertion order. Keys are non-empty strings
    without '.' that are not already attributes of the CellDict; values are Cells other than
    containers (CellDict, CellList, SequentialCell)."""

    def __init__(self, *args):
        super().__init__()
        if len(args) > 1:
            raise TypeError("For 'CellDict', CellDict takes at most 1 positional argument, but got %d."
                            % len(args))
        if args and args[0] is not None:
            self.update(args[0])

    def _validate_key(self, key):
        if not isinstance(key, str):
            raise TypeError("For 'CellDict', the type of key should be str, but got %s."
                            % type(key).__name__)
        if not key:
            raise KeyError("For 'CellDict', the key can not be an empty string.")
        if "." in key:
            raise KeyError("For 'CellDict', the key can not contain '.', but got %r." % key)
        if key not in self._cells and hasattr(self, key):
            raise KeyError("For 'CellDict', the key %r already exists as an attribute of the "
                           "CellDict." % key)

    @staticmethod
    def _validate_cell(cell):
        if cell is None:
            raise TypeError("For 'CellDict', the value can not be None.")
        if not isinstance(cell, Cell):
            raise TypeError("For 'CellDict', the type of value should be a subclass of Cell, but got %s."
                            % type(cell).__name__)
        if isinstance(cell, (CellDict, CellList, SequentialCell)):
            raise TypeError("For 'CellDict', the value can not be a CellDict, CellList or "
                            "SequentialCell, but got %s." % type(cell).__name__)

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        self._validate_key(key)
        self._validate_cell(cell)
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, key):
        del self._cells[key]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells)

    def __contains__(self, key):
        return key in self._cells

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def clear(self):
        """Removes every Cell."""
        self._cells.clear()

    def pop(self, key):
        """Removes the Cell at `key` and returns it (KeyError when absent)."""
        cell = self[key]
        del self[key]
        return cell

    def update(self, cells):
        """Adds or replaces Cells from a mapping (a dict, OrderedDict or CellDict) or from an
        iterable of (key, Cell) pairs, in their order."""
        if isinstance(cells, (dict, CellDict)):
            for k, v in cells.items():
                self[k] = v
            return
        try:
            pairs = iter(cells)
        except TypeError:
            raise TypeError("For 'CellDict', the 'cells' must be an iterable object, but got %s."
                            % type(cells).__name__) from None
        for i, kv in enumerate(pairs):
            if isinstance(kv, (str, bytes)) or not hasattr(kv, "__iter__"):
                raise TypeError("For 'CellDict', element %d of 'cells' must be a (key, Cell) pair, "
                                "but got %s." % (i, type(kv).__name__))
            kv = tuple(kv)
            if len(kv) != 2:
                raise ValueError("For 'CellDict', element %d of 'cells' must have 2 items (key, Cell), "
                                 "but got %d." % (i, len(kv)))
            self[kv[0]] = kv[1]

    def construct(self, *inputs):
        raise TypeError("CellDict is a container; call its elements instead")
