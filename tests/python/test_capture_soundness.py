"""Capture never changes what a program means (issue 10): each program runs in a subprocess plainly
and with every frame a capture candidate (stress mode); output and exit status must be equal. A
subprocess, so that a crash is a failed test, not a lost suite. Reproducers from
../shared/capture-defects/ live here once fixed."""
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(HERE, "..", "..", "pyscripts")
SUPPORTED = sys.version_info[:2] in ((3, 7), (3, 9))

PROGRAMS = {
    # RC-3a: a self-referential container reached while capture walks values.
    "self_referential_list": """
        def f():
            a = []
            a.append(a)
            return repr(a)
        def g(d):
            return len(str(d))
        d = {}
        d["me"] = d
        print(f(), g(d))
    """,
    # RC-3b: a class attribute named __self__ must not be mistaken for super()'s object.
    "super_with_class_attribute_self": """
        class A:
            __self__ = None
            def m(self):
                return 1
        class B(A):
            def m(self):
                return super().m() + 1
        print(B().m(), B().m())
    """,
    # RC-3c: a type that was never readied (no tp_dict) as an operand.
    "unready_type_operand": """
        import functools
        def eq(a, b):
            return a == b
        key = functools.cmp_to_key(lambda x, y: 0)
        print(eq(key(1), key(2)), eq(key(1), key(2)))
    """,
    # RC-4: pijit's recompile-limit message never goes through `warnings`.
    "no_warnings_from_recompiles": """
        import warnings
        def f(x):
            return x
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for i in range(12):
                f(i)
        print("warnings:", len(w))
        warnings.simplefilter("error")
        def g(x):
            return x
        print([g(i) for i in range(12)][-1])
    """,
    # Deeply nested data passed around (deeper than capture walks).
    "deeply_nested_tuple": """
        def nest(n):
            t = ()
            for i in range(n):
                t = (t, i)
            return t
        def depth(t):
            d = 0
            while t:
                t = t[0]
                d += 1
            return d
        print(depth(nest(200)), depth(nest(200)))
    """,
}


def run(source, stress):
    prelude = "import pijit\npijit.set_stress(True)\n" if stress else ""
    env = dict(os.environ, PYTHONPATH=PYSCRIPTS)
    env.pop("PIJIT_STRESS", None)
    p = subprocess.run([sys.executable, "-W", "ignore", "-c", prelude + textwrap.dedent(source)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@unittest.skipUnless(SUPPORTED, "capture is built for Python 3.7 and 3.9")
class StressEqualsPlain(unittest.TestCase):
    def check(self, name):
        plain = run(PROGRAMS[name], False)
        self.assertEqual(plain[0], 0, plain[2])
        stressed = run(PROGRAMS[name], True)
        self.assertEqual(stressed[:2], plain[:2], "%s under stress: %s" % (name, stressed[2][-2000:]))


for _name in PROGRAMS:
    setattr(StressEqualsPlain, "test_" + _name,
            (lambda n: lambda self: self.check(n))(_name))


if __name__ == "__main__":
    unittest.main()
