"""Tensor storage: freed blocks are kept and reused (kernels/tensor.cc), never changing what
an op computes. A kernel that counted on fresh (zeroed) pages would show here: the same ops run on
a cache filled with NaN blocks of every size they ask for must give the same results."""
import unittest

import pijit as pj
from pijit import nn, ops


class Allocator(unittest.TestCase):
    def test_large_blocks_are_kept_reused_and_released(self):
        pj.release_cached_storage()
        self.assertEqual(pj.cached_storage_bytes(), 0)
        x = pj.ones((512, 512))  # 1 MiB
        y = x * 2.0
        del y
        kept = pj.cached_storage_bytes()
        self.assertGreaterEqual(kept, 512 * 512 * 4)
        z = x * 3.0  # the same size again: the kept block
        self.assertEqual(pj.cached_storage_bytes(), kept - 512 * 512 * 4)
        self.assertEqual(z.sum().tolist(), 3.0 * 512 * 512)
        del z
        pj.release_cached_storage()
        self.assertEqual(pj.cached_storage_bytes(), 0)

    def test_small_blocks_are_kept_by_size_and_reused(self):
        pj.release_cached_storage()
        x = pj.ones((16, 16))
        y = x * 2.0  # 1 KiB
        del y
        kept = pj.cached_storage_bytes()
        self.assertGreaterEqual(kept, 16 * 16 * 4)
        z = x * 3.0  # the same size: the kept block, not malloc's
        self.assertEqual(pj.cached_storage_bytes(), kept - 16 * 16 * 4)
        self.assertEqual(z.sum().tolist(), 3.0 * 16 * 16)
        a = pj.ones((17, 16))
        before = pj.cached_storage_bytes()
        w = a * 2.0  # another size class: a new block, the cache untouched
        self.assertEqual(pj.cached_storage_bytes(), before)
        self.assertEqual(w.sum().tolist(), 2.0 * 17 * 16)
        del z, w, a
        pj.release_cached_storage()
        self.assertEqual(pj.cached_storage_bytes(), 0)

    def test_the_bound_is_an_environment_setting(self):
        import os
        import subprocess
        import sys
        code = ("import pijit as pj\ny = pj.ones((1024, 1024)) * 2.0\ndel y\n"
                "print(pj.cached_storage_bytes())")
        env = dict(os.environ, PIJIT_STORAGE_CACHE_MB="0")
        out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env,
                             universal_newlines=True, check=True).stdout
        self.assertEqual(out.split(), ["0"])  # nothing kept

    def test_reused_blocks_never_change_results(self):
        pj.set_seed(3)
        a, b = pj.randn((256, 128)), pj.randn((128, 96))
        img, v = pj.randn((4, 8, 32, 32)), pj.randn((100000,))
        conv, dense, ln = nn.Conv2d(8, 16, 3), nn.Dense(128, 64), nn.LayerNorm((128,))
        bn, pool = nn.BatchNorm2d(8), nn.MaxPool2d(2, 2)

        def battery():
            return [(a @ b).tolist(), conv(img).tolist(), dense(a).tolist(), ln(a).tolist(),
                    bn(img).tolist(), pool(img).tolist(), v.sum().tolist(), a.sum(0).tolist(),
                    a.mean(1).tolist(), ops.softmax(a, -1).tolist(), pj.zeros((300, 300)).sum().tolist(),
                    ops.concat((a, a), 0).tolist(), ops.argmax(a, 1).tolist(),
                    ops.pad(img, (1, 1, 1, 1)).tolist(), pj.jit(lambda t: ops.relu(t @ b) * 2.0)(a).tolist()]
        pj.release_cached_storage()
        want = battery()
        sizes = [1 << k for k in range(16, 25, 2)] + [4 * n for n in (256 * 96, 4 * 16 * 30 * 30, 256 * 64, 256 * 128,
                                                                       4 * 8 * 32 * 32, 300 * 300, 512 * 128, 100000,
                                                                       4 * 8 * 34 * 34)]
        sizes += [4 * n for n in (1, 10, 64, 96, 128, 256, 300, 1000, 4096, 16 * 30 * 30)]  # small blocks too
        junk = [pj.full((n // 4,), float("nan")) for n in sizes for _ in range(3)]
        del junk
        self.assertGreater(pj.cached_storage_bytes(), 0)
        self.assertEqual(battery(), want)


if __name__ == "__main__":
    unittest.main()
