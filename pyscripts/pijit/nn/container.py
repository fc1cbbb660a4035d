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
    def __init__(self, *args):
        super().__init__()
        if args:
            self.update(args[0])

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        self.insert_child_to_cell(key, _check_cell(cell, "CellDict"))

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

    def update(self, cells):
        items = cells.items() if isinstance(cells, dict) else cells
        for k, v in items:
            self[k] = v

    def construct(self, *inputs):
        raise TypeError("CellDict is a container; call its elements instead")
