# CPython stack shapes a profiler gets wrong, one per argument, each
# spinning for the given seconds: recursion 100 deep, a generator, a Python
# key function called back from C (sorted), generated code run by exec,
# functions made and freed in a loop (their code objects' addresses
# reused), non-ASCII names, a thread asleep at a known line, and a thread
# that names itself (as a process sets a thread's name: prctl).
import ctypes
import sys
import threading
import time


def spin_until(end):
    x = 0
    while time.monotonic() < end:
        x += 1
    return x


def recurse(depth, end):
    if depth == 0:
        return spin_until(end)
    return recurse(depth - 1, end)


def numbers(end):
    while time.monotonic() < end:
        yield sum(range(100))


def by_key(item):
    return -spin_key(item)


def spin_key(item):
    return sum(range(200)) + item


def ünïcödé_函数(end):
    return spin_until(end)


def sleeper(seconds):
    time.sleep(seconds)  # SLEEP LINE


def named_worker(end):
    ctypes.CDLL(None).prctl(15, b"py-worker", 0, 0, 0)  # PR_SET_NAME
    spin_until(end)


def shape(name, seconds):
    end = time.monotonic() + seconds
    if name == "recursion":
        recurse(100, end)
    elif name == "generator":
        for _ in numbers(end):
            pass
    elif name == "callback":
        while time.monotonic() < end:
            sorted(range(500), key=by_key)
    elif name == "exec":
        source = "def generated_code(end):\n    return spin_until(end)\n"
        scope = {"spin_until": spin_until}
        exec(compile(source, "<generated>", "exec"), scope)
        scope["generated_code"](end)
    elif name == "churn":
        while time.monotonic() < end:
            scope = {"spin_until": spin_until}
            exec("def made_and_freed(end):\n    return sum(range(300))\n", scope)
            scope["made_and_freed"](end)
            del scope
    elif name == "unicode":
        ünïcödé_函数(end)
    elif name == "sleep":
        sleeper(seconds)
    elif name == "named":
        worker = threading.Thread(target=named_worker, args=(end,))
        worker.start()
        worker.join()


for arg in sys.argv[2:]:
    shape(arg, float(sys.argv[1]))
