"""The GPU backend's probe and MindSpore's device queries (issue 19, the part that needs no GPU):
pijit.hal, device_context.cpu/gpu, set_context(device_target="GPU") and sysinfo answer from what
the machine has. On a machine without a usable GPU (no driver, no device, a build without the
backend) every GPU query says so and names the reason, and asking for the GPU target raises that
reason without changing the context. On a machine with one, the devices are listed; the target is
still refused (no GPU kernels yet) with a message naming the devices found."""
import unittest

import pijit as pj
from pijit import _C


INFO = _C.gpu_info()
USABLE = INFO["usable"]


class GpuProbe(unittest.TestCase):
    def test_probe_is_consistent(self):
        self.assertIsInstance(INFO["built"], bool)
        if not INFO["built"]:
            self.assertFalse(USABLE)
            self.assertIn("built without the GPU backend", INFO["why"])
            return
        self.assertRegex(INFO["built_with"], r"^CUDA \d+\.\d+, cuDNN \d+\.\d+\.\d+, cuBLAS \d+\.\d+\.\d+$")
        if USABLE:
            self.assertEqual(INFO["why"], "")
            self.assertTrue(INFO["devices"])
            for k, d in enumerate(INFO["devices"]):
                self.assertEqual(d["index"], k)
                self.assertTrue(d["name"])
                self.assertGreaterEqual(d["capability"][0], 3)
                self.assertGreater(d["total_memory"], 0)
        else:
            self.assertTrue(INFO["why"])  # a sentence naming what is missing
            self.assertEqual(pj.hal.device_count("GPU"), 0)

    def test_probe_is_cached(self):
        self.assertEqual(_C.gpu_info(), INFO)


class HalQueries(unittest.TestCase):
    def test_cpu(self):
        self.assertTrue(pj.hal.is_available("CPU"))
        self.assertTrue(pj.hal.is_initialized("CPU"))
        self.assertEqual(pj.hal.device_count("CPU"), 1)
        self.assertIsNone(pj.hal.get_device_capability(0, "CPU"))
        self.assertIsNone(pj.hal.get_arch_list("CPU"))
        self.assertTrue(pj.device_context.cpu.is_available())
        self.assertEqual(pj.device_context.cpu.device_count(), 1)

    def test_gpu(self):
        self.assertEqual(pj.hal.is_available("GPU"), USABLE)
        self.assertEqual(pj.device_context.gpu.is_available(), USABLE)
        self.assertEqual(pj.hal.device_count("GPU"), len(INFO["devices"]) if USABLE else 0)
        self.assertEqual(pj.device_context.gpu.device_count(), pj.hal.device_count("GPU"))
        self.assertFalse(pj.hal.is_initialized("GPU"))
        self.assertFalse(pj.hal.is_available("Ascend"))
        self.assertEqual(pj.hal.device_count("Ascend"), 0)
        if USABLE:
            d = INFO["devices"][0]
            self.assertEqual(pj.hal.get_device_name(0, "GPU"), d["name"])
            self.assertEqual(pj.hal.get_device_capability(0, "GPU"), tuple(d["capability"]))
            props = pj.hal.get_device_properties(0, "GPU")
            self.assertEqual((props.name, props.major, props.minor), (d["name"],) + tuple(d["capability"]))
            self.assertIn("sm_%d%d" % tuple(d["capability"]), pj.hal.get_arch_list("GPU"))
            with self.assertRaisesRegex(ValueError, "device_id %d is out of range" % len(INFO["devices"])):
                pj.hal.get_device_name(len(INFO["devices"]), "GPU")
        else:
            with self.assertRaises(RuntimeError) as cm:
                pj.hal.get_device_name(0, "GPU")
            self.assertIn(INFO["why"], str(cm.exception))
            self.assertEqual(pj.hal.get_arch_list("GPU"), [])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "device_target must be one of CPU, GPU, Ascend, got 'TPU'"):
            pj.hal.is_available("TPU")
        with self.assertRaisesRegex(TypeError, "device_id must be an int"):
            pj.hal.get_device_name("0", "GPU")
        with self.assertRaisesRegex(ValueError, "device queries by id are for GPUs"):
            pj.hal.get_device_name(0, "CPU")

    def test_default_target_is_the_context(self):
        self.assertEqual(pj.get_context("device_target"), "CPU")
        self.assertEqual(pj.hal.device_count(), 1)


class GpuTarget(unittest.TestCase):
    def test_set_context_gpu_says_why_and_keeps_the_context(self):
        before = pj.get_context("device_target")
        for call in (lambda: pj.set_context(device_target="GPU"), lambda: pj.set_device("GPU", 0)):
            with self.assertRaises(RuntimeError) as cm:
                call()
            msg = str(cm.exception)
            if USABLE:
                self.assertIn("has no GPU kernels yet", msg)
                self.assertIn(INFO["devices"][0]["name"], msg)
            else:
                self.assertEqual(msg, "set_context: device_target='GPU' needs a usable NVIDIA GPU: " + INFO["why"])
            self.assertEqual(pj.get_context("device_target"), before)

    def test_a_program_that_picks_its_device_runs(self):
        # MindSpore's idiom: here the CPU; on a GPU machine the GPU target is refused (no GPU
        # kernels yet) and the program's fallback to the CPU runs.
        target = "GPU" if pj.hal.is_available("GPU") else "CPU"
        self.assertEqual(target, "GPU" if USABLE else "CPU")
        if target == "GPU":
            with self.assertRaisesRegex(RuntimeError, "has no GPU kernels yet"):
                pj.set_context(device_target=target)
            target = "CPU"
        pj.set_context(device_target=target)
        self.assertEqual(pj.get_context("device_target"), "CPU")
        x = pj.ones((2, 2))
        self.assertEqual((x @ x).tolist(), [[2.0, 2.0], [2.0, 2.0]])


if __name__ == "__main__":
    unittest.main()
