"""map(operations=[...]) with a list of image transforms (as model-zoo scripts write it) runs
them as one fused kernel pass, with exactly the values and random draws of applying them one by
one; non-image operations in the list keep their place."""
import unittest

import pijit.dataset as ds
from pijit.dataset import vision
from pijit.dataset._compat import np


def images(n=6):
    rows = []
    for k in range(n):
        vals = [(k * 37 + i * 11) % 256 for i in range(8 * 8 * 3)]
        rows.append(np.array(vals, dtype=np.uint8).reshape((8, 8, 3)))
    return rows


def pipeline():
    return [vision.RandomCrop(8, padding=2), vision.RandomHorizontalFlip(),
            vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize([0.5, 0.4, 0.3], [0.2, 0.2, 0.2]),
            vision.HWC2CHW()]


class MapFusesImageTransforms(unittest.TestCase):
    def run_map(self, ops):
        ds.config.set_seed(7)
        data = ds.NumpySlicesDataset(images(), column_names=["image"], shuffle=False)
        data = data.map(operations=ops, input_columns=["image"])
        return [row[0].tolist() for row in data.create_tuple_iterator(output_numpy=True)]

    def test_list_equals_one_by_one(self):
        fused = self.run_map(pipeline())
        ds.config.set_seed(7)
        ops = pipeline()
        one_by_one = []
        for img in images():
            for op in ops:
                img = op(img)
            one_by_one.append(img.tolist())
        self.assertEqual(fused, one_by_one)
        self.assertEqual(len(fused[0]), 3)  # CHW

    def test_a_python_op_in_the_list_keeps_its_place(self):
        ops = pipeline()[:2] + [lambda img: img] + pipeline()[2:]
        self.assertEqual(self.run_map(ops), self.run_map(pipeline()))


if __name__ == "__main__":
    unittest.main()
