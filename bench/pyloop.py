# A fixed amount of CPython work for bench/dwarf.sh: Debian's python3 is
# built without frame pointers, the case --call-graph dwarf is for.
# Usage: python3 pyloop.py [ROUNDS]
import sys


def leaf(n):
    return sum(i * i for i in range(n))


def middle(n):
    return leaf(n) + leaf(n // 2)


for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1000):
    middle(20000)
