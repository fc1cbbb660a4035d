"""A pure-Python program (no tensors): what `python -m pijit run` costs a program pijit cannot help.

    time python pyscripts/bench/pure_python.py            # plain
    time python -m pijit run pyscripts/bench/pure_python.py
(bench_cli_overhead.py runs both in one go and prints the ratio.)"""


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(n):
    counts = {}
    for i in range(n):
        w = "w%d" % (i % 97)
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items())[:3]


class Point(object):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x * self.x + self.y * self.y


def points(n):
    return sum(Point(i, -i).norm2() for i in range(n))


if __name__ == "__main__":
    import sys
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):  # repeats: a longer-running program
        print(fib(24), words(200000), points(200000))
