# A CPU-bound CPython loop at a chosen Python stack depth: recurse DEPTH
# frames, then spin for SECONDS and print how many rounds it made (its
# throughput: what a profiler's cost takes away). For bench/python.sh.
import sys
import time


def down(depth, end):
    if depth > 0:
        return down(depth - 1, end)
    x = 0
    while time.monotonic() < end:
        x += 1
    return x


print(down(int(sys.argv[1]), time.monotonic() + float(sys.argv[2])))
