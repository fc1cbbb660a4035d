"""Top-level mindspore names programs reach for: JitConfig, the auto-parallel context (kept and
read back in one process), the metrics and vjp re-exported at the top."""
import unittest

import pijit as ms
from pijit import nn


class JitConfigs(unittest.TestCase):
    def test_values_are_checked_and_kept(self):
        c = ms.JitConfig(jit_level="O1", jit_syntax_level="LAX")
        self.assertEqual(c.jit_config_dict["jit_level"], "O1")
        self.assertEqual(c.jit_config_dict["jit_syntax_level"], "LAX")
        self.assertEqual(c.jit_config_dict["exc_mode"], "auto")
        with self.assertRaisesRegex(ValueError, "jit_level"):
            ms.JitConfig(jit_level="O7")
        with self.assertRaisesRegex(ValueError, "exc_mode"):
            ms.JitConfig(exc_mode="always")

    def test_jit_takes_one(self):
        f = ms.jit(lambda x: x * 2 + 1, jit_config=ms.JitConfig(jit_level="O0"))
        self.assertEqual(f(ms.Tensor([1.0, 2.0])).tolist(), [3.0, 5.0])


class AutoParallelContext(unittest.TestCase):
    def tearDown(self):
        ms.reset_auto_parallel_context()

    def test_set_get_reset(self):
        self.assertEqual(ms.get_auto_parallel_context("parallel_mode"), "stand_alone")
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                     device_num=1)
        self.assertEqual(ms.get_auto_parallel_context("parallel_mode"), "data_parallel")
        self.assertIs(ms.get_auto_parallel_context("gradients_mean"), True)
        ms.reset_auto_parallel_context()
        self.assertEqual(ms.get_auto_parallel_context("parallel_mode"), "stand_alone")
        self.assertIs(ms.get_auto_parallel_context("gradients_mean"), False)

    def test_bad_settings(self):
        with self.assertRaisesRegex(ValueError, "the key 'paralel_mode' is not supported"):
            ms.set_auto_parallel_context(paralel_mode="data_parallel")
        with self.assertRaisesRegex(ValueError, "'parallel_mode' must be one of"):
            ms.set_auto_parallel_context(parallel_mode="everywhere")
        with self.assertRaisesRegex(TypeError, "'device_num' must be an int, got str"):
            ms.set_auto_parallel_context(device_num="8")
        with self.assertRaisesRegex(ValueError, "'device_num' must be >= 1, got 0"):
            ms.set_auto_parallel_context(device_num=0)
        with self.assertRaisesRegex(ValueError, "the key 'nope' is not supported"):
            ms.get_auto_parallel_context("nope")


class TopLevelReexports(unittest.TestCase):
    def test_same_objects(self):
        for name in ("Accuracy", "F1", "Fbeta", "Loss", "MAE", "MSE", "Metric", "Precision", "Recall",
                     "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "TopKCategoricalAccuracy",
                     "auc", "get_metric_fn", "names", "rearrange_inputs"):
            self.assertIs(getattr(ms, name), getattr(nn, name), name)
        self.assertIs(ms.vjp, ms.ops.vjp)

    def test_accuracy_from_the_top(self):
        m = ms.Accuracy()
        m.update(ms.Tensor([[0.2, 0.8], [0.9, 0.1]]), ms.Tensor([1, 1]))
        self.assertEqual(m.eval(), 0.5)


if __name__ == "__main__":
    unittest.main()
