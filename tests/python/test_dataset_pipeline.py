"""mindspore.dataset's pipeline (pijit.dataset): sources from Python data, the operations and the
iterators, against values worked out by hand from the rows the tests feed in.

Rows are numpy arrays (pijit's stand-in where numpy is not installed); iterators give pijit
Tensors unless output_numpy=True. Errors are checked for MindSpore's exception type and for a
message that names the parameter, column or operation.
"""
import unittest

import pijit
import pijit.dataset as ds
from pijit.dataset import config
from pijit.dataset._compat import np


def rows(d, **kw):
    """Every row of one epoch as lists of Python values."""
    return [[a.tolist() for a in r]
            for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True, **kw)]


def col(d, i=0):
    return [r[i] for r in rows(d)]


class Seeded(unittest.TestCase):
    def setUp(self):
        self._saved = dict(config._state)

    def tearDown(self):
        config._state.clear()
        config._state.update(self._saved)


class Sources(Seeded):
    def test_generator_function_rows_and_dtypes(self):
        def gen():
            for i in range(4):
                yield np.array([i, 2 * i], dtype=np.float32), i, 0.5 * i
        d = ds.GeneratorDataset(gen, ["x", "y", "z"])
        self.assertEqual(d.get_col_names(), ["x", "y", "z"])
        self.assertEqual(d.get_dataset_size(), 4)  # counted by running one pass
        got = list(d.create_tuple_iterator(num_epochs=1, output_numpy=True))
        self.assertEqual([r[0].tolist() for r in got], [[0, 0], [1, 2], [2, 4], [3, 6]])
        self.assertEqual(str(got[0][0].dtype), "float32")
        self.assertEqual(str(got[0][1].dtype), "int64")   # Python int -> int64
        self.assertEqual(str(got[0][2].dtype), "float64")  # Python float -> float64
        self.assertEqual([r[1].tolist() for r in got], [0, 1, 2, 3])
        t = next(iter(d.create_tuple_iterator(num_epochs=1)))
        self.assertIsInstance(t, list)
        self.assertIsInstance(t[0], pijit.Tensor)
        self.assertEqual(t[0].shape, (2,))
        self.assertEqual(d.output_shapes(), [[2], [], []])
        self.assertEqual([str(x) for x in d.output_types()], ["float32", "int64", "float64"])

    def test_random_access_source_shuffles_by_default_and_not_when_told(self):
        class Src:
            def __getitem__(self, i):
                return (np.array(i),)

            def __len__(self):
                return 10
        config.set_seed(3)
        shuffled = col(ds.GeneratorDataset(Src(), ["c"]))
        self.assertEqual(sorted(shuffled), list(range(10)))
        self.assertNotEqual(shuffled, list(range(10)))
        self.assertEqual(col(ds.GeneratorDataset(Src(), ["c"], shuffle=False)), list(range(10)))
        self.assertEqual(col(ds.GeneratorDataset(Src(), "c", shuffle=False, num_samples=4)),
                         [0, 1, 2, 3])

    def test_set_seed_repeats_the_order_and_epochs_reshuffle(self):
        src = list(range(20))
        config.set_seed(7)
        self.assertEqual(ds.config.get_seed(), 7)
        a = col(ds.GeneratorDataset(src, "c"))
        b = col(ds.GeneratorDataset(src, "c"))
        self.assertEqual(a, b)
        it = ds.GeneratorDataset(src, "c").create_tuple_iterator(num_epochs=2, output_numpy=True)
        e1 = [int(r[0]) for r in it]
        e2 = [int(r[0]) for r in it]
        self.assertEqual(e1, a)
        self.assertEqual(sorted(e2), src)
        self.assertNotEqual(e1, e2)
        self.assertEqual(list(it), [])  # both epochs done
        config.set_seed(8)
        self.assertNotEqual(col(ds.GeneratorDataset(src, "c")), a)

    def test_shards_partition_rows_with_equal_sizes(self):
        src = list(range(10))
        seen = []
        for k in range(3):
            d = ds.GeneratorDataset(src, "c", num_shards=3, shard_id=k, shuffle=False)
            self.assertEqual(d.get_dataset_size(), 4)  # ceil(10 / 3), the last wrapping around
            seen.append(col(d))
        self.assertEqual(seen, [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]])
        config.set_seed(5)
        shuffled = [col(ds.GeneratorDataset(src, "c", num_shards=2, shard_id=k))
                    for k in range(2)]
        self.assertEqual(sorted(shuffled[0] + shuffled[1]), src)

    def test_samplers(self):
        src = list(range(6))
        self.assertEqual(col(ds.GeneratorDataset(src, "c", sampler=ds.SequentialSampler(2, 3))),
                         [2, 3, 4])
        self.assertEqual(col(ds.GeneratorDataset(src, "c", sampler=ds.SubsetSampler([5, 0, 3]))),
                         [5, 0, 3])
        self.assertEqual(col(ds.GeneratorDataset(src, "c", sampler=[4, 4, 1])), [4, 4, 1])
        r = col(ds.GeneratorDataset(src, "c", sampler=ds.SubsetRandomSampler([1, 2, 3])))
        self.assertEqual(sorted(r), [1, 2, 3])
        with self.assertRaisesRegex(RuntimeError, "sampler and shuffle cannot be specified"):
            ds.GeneratorDataset(src, "c", sampler=ds.RandomSampler(), shuffle=True)

    def test_iterable_and_list_rows(self):
        self.assertEqual(rows(ds.GeneratorDataset(iter([(1, 2), (3, 4)]), ["a", "b"])),
                         [[1, 2], [3, 4]])
        self.assertEqual(col(ds.GeneratorDataset(zip([1, 2], [3, 4]), ["a", "b"],
                                                 shuffle=False), 1), [3, 4])

    def test_numpy_slices(self):
        d = ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], shuffle=False)
        self.assertEqual(d.get_col_names(), ["column_0"])
        self.assertEqual(col(d), [[1, 2], [3, 4], [5, 6]])
        d = ds.NumpySlicesDataset(([1, 2, 3], [[1.5], [2.5], [3.5]]), column_names=["a", "b"],
                                  shuffle=False)
        self.assertEqual(rows(d), [[1, [1.5]], [2, [2.5]], [3, [3.5]]])
        d = ds.NumpySlicesDataset({"x": np.arange(4), "y": np.arange(4) * 10}, shuffle=False)
        self.assertEqual(d.get_col_names(), ["x", "y"])
        self.assertEqual(d.get_dataset_size(), 4)
        self.assertEqual(col(d, 1), [0, 10, 20, 30])
        with self.assertRaisesRegex(ValueError, "first dimension"):
            ds.NumpySlicesDataset(([1, 2], [1, 2, 3]))

    def test_bad_source_input(self):
        with self.assertRaisesRegex(TypeError, "callable, iterable or random accessible"):
            ds.GeneratorDataset(5, ["c"])
        with self.assertRaisesRegex(ValueError, "Neither columns_names nor schema"):
            ds.GeneratorDataset([1, 2])
        with self.assertRaisesRegex(ValueError, "num_shards and shard_id need to be passed"):
            ds.GeneratorDataset([1, 2], "c", num_shards=2)
        with self.assertRaisesRegex(ValueError, "shard_id should be less than num_shards"):
            ds.GeneratorDataset([1, 2], "c", num_shards=2, shard_id=2)
        with self.assertRaisesRegex(ValueError, "num_shards is not supported"):
            ds.GeneratorDataset(lambda: iter([1]), "c", num_shards=2, shard_id=0)
        with self.assertRaisesRegex(TypeError, "Argument shuffle with value 1"):
            ds.GeneratorDataset([1, 2], "c", shuffle=1)
        with self.assertRaisesRegex(ValueError, "num_parallel_workers exceeds the boundary"):
            ds.GeneratorDataset([1, 2], "c", num_parallel_workers=0)

    def test_generator_that_raises_names_the_dataset(self):
        def gen():
            yield 1
            raise ValueError("disk gone")
        d = ds.GeneratorDataset(gen, ["c"])
        it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
        self.assertEqual(int(next(it)[0]), 1)
        with self.assertRaises(RuntimeError) as cm:
            next(it)
        self.assertIn("GeneratorDataset", str(cm.exception))
        self.assertIn("ValueError: disk gone", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, ValueError)

    def test_column_count_mismatch(self):
        d = ds.GeneratorDataset(lambda: iter([(1, 2)]), ["only"])
        with self.assertRaisesRegex(RuntimeError, "number of columns returned in 'source': 2, "
                                                  "the number of 'column_names': 1"):
            rows(d)
        with self.assertRaisesRegex(RuntimeError, "GeneratorDataset.*got dict"):
            rows(ds.GeneratorDataset(lambda: iter([{"a": 1}]), ["a"]))


class Operations(Seeded):
    def src(self, n=10, **kw):
        return ds.GeneratorDataset([(np.array([i, -i]), i) for i in range(n)], ["x", "y"],
                                   shuffle=False, **kw)

    def test_batch_and_drop_remainder(self):
        b = self.src().batch(4)
        self.assertEqual(b.get_dataset_size(), 3)
        self.assertEqual(b.get_batch_size(), 4)
        got = rows(b)
        self.assertEqual([len(r[1]) for r in got], [4, 4, 2])
        self.assertEqual(got[2], [[[8, -8], [9, -9]], [8, 9]])
        b = self.src().batch(4, drop_remainder=True)
        self.assertEqual(b.get_dataset_size(), 2)
        self.assertEqual([r[1] for r in rows(b)], [[0, 1, 2, 3], [4, 5, 6, 7]])

    def test_batch_ragged_rows(self):
        d = ds.GeneratorDataset([(np.ones(2),), (np.ones(3),)], ["v"], shuffle=False).batch(2)
        with self.assertRaisesRegex(RuntimeError, r"Inconsistent batch shapes.*column 0, expected "
                                                  r"shape for this column is:<2>, got shape:<3>"):
            rows(d)

    def test_batch_arguments(self):
        with self.assertRaisesRegex(ValueError, r"Input batch_size is not within the required "
                                                r"interval of \[1, 2147483647\]"):
            self.src().batch(0)
        with self.assertRaisesRegex(TypeError, "batch_size should either be an int or a callable"):
            self.src().batch("4")
        with self.assertRaisesRegex(TypeError, "Argument drop_remainder with value 1"):
            self.src().batch(2, drop_remainder=1)
        with self.assertRaisesRegex(ValueError, "input_columns can be specified only when "
                                                "per_batch_map is set"):
            self.src().batch(2, input_columns=["x"])

    def test_per_batch_map_and_callable_batch_size(self):
        def pbm(ys, info):
            return ([y * 10 + info.get_batch_num() for y in ys],)
        got = rows(self.src(6).batch(3, per_batch_map=pbm, input_columns=["y"]))
        self.assertEqual([r[1] for r in got], [[0, 10, 20], [31, 41, 51]])
        got = rows(self.src(6).batch(2, per_batch_map=lambda ys, info: ([y + 1 for y in ys],
                                                                       [y * 0 for y in ys]),
                                     input_columns=["y"], output_columns=["a", "b"]))
        self.assertEqual(got[0][0], [1, 2])  # outputs first, then the untouched column x
        self.assertEqual(got[0][2], [[0, 0], [1, -1]])
        sizes = [len(r[1]) for r in rows(self.src(6).batch(lambda info: info.get_batch_num() + 1))]
        self.assertEqual(sizes, [1, 2, 3])

    def test_map_columns(self):
        d = self.src(3).map(lambda y: y * 2, input_columns="y")
        self.assertEqual(col(d, 1), [0, 2, 4])
        d = self.src(3).map(lambda x: (x.sum(), x * 0), input_columns=["x"],
                            output_columns=["s", "z"])
        self.assertEqual(d.get_col_names(), ["s", "z", "y"])
        self.assertEqual(rows(d)[1], [0, [0, 0], 1])
        d = self.src(3).map([lambda y: y + 1, lambda y: y * 3], input_columns=["y"],
                            output_columns=["w"])
        self.assertEqual(d.get_col_names(), ["x", "w"])
        self.assertEqual(col(d, 1), [3, 6, 9])
        d = self.src(3).map(lambda x, y: x[0] + y, input_columns=["x", "y"],
                            output_columns=["t"])
        self.assertEqual(rows(d), [[0], [2], [4]])

    def test_map_errors(self):
        def bad(y):
            raise KeyError("no such label")
        with self.assertRaises(RuntimeError) as cm:
            rows(self.src(3).map(bad, input_columns=["y"]))
        self.assertIn("map operation [bad] on input_columns ['y']", str(cm.exception))
        self.assertIn("KeyError", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, KeyError)
        with self.assertRaisesRegex(RuntimeError, "input column: 'nope' does not exist"):
            self.src().map(abs, input_columns=["nope"])
        with self.assertRaisesRegex(TypeError, "neither a c_transform op"):
            self.src().map([abs, 3], input_columns=["y"])
        with self.assertRaisesRegex(ValueError, "column_order"):
            self.src().map(abs, input_columns=["y"], column_order=["y"])

    def test_map_threads_keep_order(self):
        import threading
        names = set()

        def slow(y):
            names.add(threading.current_thread().name)
            return y * 3
        d = self.src(40).map(slow, input_columns=["y"], num_parallel_workers=2).batch(8)
        got = [r[1] for r in rows(d)]
        self.assertEqual(got, [[3 * i for i in range(k, k + 8)] for k in range(0, 40, 8)])
        self.assertTrue(all(n.startswith("pijit-dataset-worker") for n in names), names)

    def test_shuffle(self):
        config.set_seed(11)
        a = col(self.src(30).shuffle(8), 1)
        self.assertEqual(sorted(a), list(range(30)))
        self.assertNotEqual(a, list(range(30)))
        config.set_seed(11)
        self.assertEqual(col(self.src(30).shuffle(8), 1), a)
        with self.assertRaisesRegex(ValueError, r"Input buffer_size is not within the required "
                                                r"interval of \[2, 2147483647\]"):
            self.src().shuffle(1)
        with self.assertRaisesRegex(TypeError, "Argument buffer_size"):
            self.src().shuffle(2.0)

    def test_repeat_take_skip(self):
        d = self.src(3).repeat(2)
        self.assertEqual(d.get_dataset_size(), 6)
        self.assertEqual(col(d, 1), [0, 1, 2, 0, 1, 2])
        self.assertEqual(col(self.src(5).skip(2).take(2), 1), [2, 3])
        self.assertEqual(self.src(5).skip(2).take(2).get_dataset_size(), 2)
        self.assertEqual(self.src(5).skip(9).get_dataset_size(), 0)
        self.assertEqual(col(self.src(3).repeat().take(7), 1), [0, 1, 2, 0, 1, 2, 0])
        with self.assertRaisesRegex(ValueError, "count should be either -1 or positive"):
            self.src().repeat(0)
        with self.assertRaisesRegex(ValueError, "count should be either -1 or within"):
            self.src().take(0)
        with self.assertRaisesRegex(ValueError, "Input count is not within"):
            self.src().skip(-1)

    def test_zip_concat_project_rename(self):
        a = ds.GeneratorDataset([1, 2, 3], "a", shuffle=False)
        b = ds.GeneratorDataset([4, 5], "b", shuffle=False)
        z = a.zip(b)
        self.assertEqual(z.get_col_names(), ["a", "b"])
        self.assertEqual(z.get_dataset_size(), 2)
        self.assertEqual(rows(z), [[1, 4], [2, 5]])
        self.assertEqual(rows(ds.GeneratorDataset([1, 2], "a", shuffle=False).zip((b,))),
                         [[1, 4], [2, 5]])
        with self.assertRaisesRegex(RuntimeError, "column name 'a'"):
            a.zip(a)
        c = a + a.rename("a", "a")
        self.assertEqual(col(c), [1, 2, 3, 1, 2, 3])
        self.assertEqual(a.concat([a, a]).get_dataset_size(), 9)
        with self.assertRaisesRegex(RuntimeError, "column names"):
            a.concat(b)
        with self.assertRaisesRegex(TypeError, "Argument datasets"):
            a.concat(5)
        p = self.src(2).project(["y", "x"])
        self.assertEqual(rows(p), [[0, [0, 0]], [1, [1, -1]]])
        with self.assertRaisesRegex(RuntimeError, "column: 'q' does not exist"):
            self.src().project("q")
        r = self.src(1).rename(["x", "y"], ["image", "label"])
        self.assertEqual(r.get_col_names(), ["image", "label"])
        with self.assertRaisesRegex(ValueError, "Number of column in input_columns and "
                                                "output_columns is not equal"):
            self.src().rename(["x"], ["a", "b"])

    def test_split(self):
        d = ds.GeneratorDataset(list(range(10)), "c", shuffle=False)
        a, b = d.split([7, 3], randomize=False)
        self.assertEqual((col(a), col(b)), (list(range(7)), [7, 8, 9]))
        a, b, c = d.split([0.5, 0.3, 0.2], randomize=False)
        self.assertEqual([x.get_dataset_size() for x in (a, b, c)], [5, 3, 2])
        config.set_seed(4)
        a, b = d.split([0.8, 0.2])
        ca, cb = col(a), col(b)
        self.assertEqual((len(ca), len(cb)), (8, 2))
        self.assertEqual(sorted(ca + cb), list(range(10)))
        g = ds.GeneratorDataset(lambda: iter(range(10)), "c")  # not random access
        a, b = g.split([6, 4])
        ca, cb = col(a), col(b)
        self.assertEqual(sorted(ca + cb), list(range(10)))
        with self.assertRaisesRegex(RuntimeError, "Sum of split sizes 9 is not equal to dataset "
                                                  "size 10"):
            d.split([5, 4])
        with self.assertRaisesRegex(ValueError, "percentages do not sum up to 1"):
            d.split([0.5, 0.2])
        with self.assertRaisesRegex(ValueError, "list of int or list of float"):
            d.split([5, 0.5])
        with self.assertRaisesRegex(RuntimeError, "should not be sharded before split"):
            ds.GeneratorDataset(list(range(10)), "c", num_shards=2, shard_id=0).split([3, 2])


class Iterators(Seeded):
    def test_epochs_dicts_columns_and_direct_iteration(self):
        d = ds.GeneratorDataset([(1, 2.0), (3, 4.0)], ["a", "b"], shuffle=False)
        it = d.create_dict_iterator(num_epochs=2, output_numpy=True)
        self.assertEqual([{k: v.tolist() for k, v in r.items()} for r in it],
                         [{"a": 1, "b": 2.0}, {"a": 3, "b": 4.0}])
        self.assertEqual(len(list(it)), 2)
        self.assertEqual(list(it), [])
        t = list(d)
        self.assertEqual(len(t), 2)
        self.assertIsInstance(t[1][0], pijit.Tensor)
        self.assertEqual(t[1][0].tolist(), 3)
        only_b = list(d.create_tuple_iterator(columns=["b"], num_epochs=1, output_numpy=True))
        self.assertEqual([r[0].tolist() for r in only_b], [2.0, 4.0])
        with self.assertRaisesRegex(ValueError, "num_epochs should be either -1 or positive"):
            d.create_tuple_iterator(num_epochs=0)
        with self.assertRaisesRegex(TypeError, "Argument output_numpy"):
            d.create_tuple_iterator(output_numpy=1)

    def test_config(self):
        ds.config.set_num_parallel_workers(4)
        self.assertEqual(ds.config.get_num_parallel_workers(), 4)
        ds.config.set_prefetch_size(4)
        self.assertEqual(ds.config.get_prefetch_size(), 4)
        with self.assertRaisesRegex(ValueError, "seed is not within the required interval"):
            ds.config.set_seed(-1)
        with self.assertRaisesRegex(TypeError, "Argument seed"):
            ds.config.set_seed("1")
        with self.assertRaisesRegex(ValueError, "num_parallel_workers"):
            ds.config.set_num_parallel_workers(0)
        with self.assertRaisesRegex(ValueError, "Prefetch size"):
            ds.config.set_prefetch_size(0)
        # with a default of 4 workers set, a map without num_parallel_workers uses a pool
        got = col(ds.GeneratorDataset(list(range(12)), "c", shuffle=False)
                  .map(lambda c: c + 1, input_columns="c"))
        self.assertEqual(got, list(range(1, 13)))


if __name__ == "__main__":
    unittest.main()
