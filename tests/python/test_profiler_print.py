"""set_context(print_file_path=...) and mindspore.parse_print: ops.Print appends MindSpore's
print.proto records to the file (nothing on the screen) and parse_print reads them back, eagerly
and from a jitted function; the bytes follow print.proto's field numbers."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

import pijit as ms
from pijit import Tensor, context, nn, ops
from pijit import print_file


class PrintToFile(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_print_")
        self.path = os.path.join(self.dir, "log.data")
        ms.set_context(print_file_path=self.path)

    def tearDown(self):
        context._state.pop("print_file_path", None)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_documented_example(self):
        class PrintInputTensor(nn.Cell):
            def __init__(self):
                super().__init__()
                self.print = ops.Print()

            def construct(self, input_pra):
                self.print('print:', input_pra)
                return input_pra

        x = Tensor([[1, 2, 3, 4], [5, 6, 7, 8]], ms.float32)
        screen = io.StringIO()
        with contextlib.redirect_stdout(screen):
            PrintInputTensor()(x)
        self.assertEqual(screen.getvalue(), "")
        got = ms.parse_print(self.path)
        self.assertEqual(len(got), 2)
        self.assertEqual(got[0], "print:")
        self.assertIsInstance(got[1], Tensor)
        self.assertEqual(got[1].dtype, ms.float32)
        self.assertEqual(got[1].shape, (2, 4))
        self.assertEqual(got[1].tolist(), [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])

    def test_calls_append_in_order_with_dtypes_and_scalars(self):
        ops.print_("a", Tensor([1, 2], ms.int8))
        ops.Print()(3, 2.5, True, (Tensor([[1.0, 2.0], [3.0, 4.0]]).T, "b"))
        ops.print_(Tensor([1.5, -2.0], ms.float16), Tensor(7, ms.int64))
        got = ms.parse_print(self.path)
        self.assertEqual(got[0], "a")
        self.assertEqual((got[1].dtype, got[1].tolist()), (ms.int8, [1, 2]))
        self.assertEqual((got[2].dtype, got[2].shape, got[2].tolist()), (ms.int64, (), 3))
        self.assertEqual((got[3].dtype, got[3].tolist()), (ms.float32, 2.5))
        self.assertEqual((got[4].dtype, got[4].tolist()), (ms.bool_, True))
        self.assertEqual(got[5].tolist(), [[1.0, 3.0], [2.0, 4.0]])  # a transposed view, in logical order
        self.assertEqual(got[6], "b")
        self.assertEqual((got[7].dtype, got[7].tolist()), (ms.float16, [1.5, -2.0]))
        self.assertEqual((got[8].shape, got[8].tolist()), ((), 7))
        self.assertEqual(len(got), 9)

    def test_from_a_jitted_function(self):
        @ms.jit
        def f(x):
            ops.print_("x is", x)
            return x * 2

        for k in range(3):
            self.assertEqual(f(Tensor([float(k)])).tolist(), [2.0 * k])
        got = ms.parse_print(self.path)
        self.assertEqual(got[0::2], ["x is"] * 3)
        self.assertEqual([t.tolist() for t in got[1::2]], [[0.0], [1.0], [2.0]])

    def test_bytes_follow_print_proto(self):
        ops.print_("a", Tensor([1], ms.int32))
        with open(self.path, "rb") as f:
            data = f.read()
        # Print.value (1, bytes) { desc (1) = "a" } ; Print.value { tensor (2) { dims (1) = 1,
        # tensor_type (2) = "Int32", tensor_content (3) = 01 00 00 00 } }
        tensor = b"\x08\x01" + b"\x12\x05Int32" + b"\x1a\x04\x01\x00\x00\x00"
        value2 = b"\x12" + bytes([len(tensor)]) + tensor
        self.assertEqual(data, b"\x0a\x03\x0a\x01a" + b"\x0a" + bytes([len(value2)]) + value2)

    def test_train_module_and_toplevel_name(self):
        import pijit.train
        self.assertIs(pijit.train.parse_print, ms.parse_print)
        self.assertIn("parse_print", pijit.train.__all__)


class ParseErrors(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_print_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_empty_missing_and_garbage(self):
        empty = os.path.join(self.dir, "empty")
        open(empty, "wb").close()
        with self.assertRaisesRegex(ValueError, "may be empty"):
            ms.parse_print(empty)
        with self.assertRaisesRegex(ValueError, "does not exist"):
            ms.parse_print(os.path.join(self.dir, "nope"))
        bad = os.path.join(self.dir, "bad")
        with open(bad, "wb") as f:
            f.write(b"\x0a\x50\x01")  # a length past the end
        with self.assertRaisesRegex(ValueError, "Failed to read the print file"):
            ms.parse_print(bad)

    def test_screen_when_no_file_is_set(self):
        context._state.pop("print_file_path", None)
        self.assertIsNone(print_file.target())
        screen = io.StringIO()
        with contextlib.redirect_stdout(screen):
            ops.print_("hello")
        self.assertEqual(screen.getvalue(), "hello\n")


if __name__ == "__main__":
    unittest.main()
