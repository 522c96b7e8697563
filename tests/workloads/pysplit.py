# A CPython workload with a known split: main() spends about 70% of its
# CPU in hot() and 30% in cold(), both called through middle(); a second
# thread spins in its own spinner(); hashed() calls C (hashlib) from
# Python. It measures its own CPU per function (time.thread_time) and
# prints "FUNCTION SECONDS" lines, the truth the report is held to.
import hashlib
import sys
import threading
import time


def burn(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1  # BUSY LINE
    return x


def hot(spent):
    start = time.thread_time()
    burn(0.007)
    spent["hot"] += time.thread_time() - start


def cold(spent):
    start = time.thread_time()
    burn(0.003)
    spent["cold"] += time.thread_time() - start


def hashed(spent):
    start = time.thread_time()
    hashlib.sha256(b"x" * (1 << 20)).hexdigest()
    spent["hashed"] += time.thread_time() - start


def middle(spent):
    hot(spent)
    cold(spent)


def spinner(stop):
    while not stop.is_set():
        burn(0.01)


def main(seconds):
    spent = {"hot": 0.0, "cold": 0.0, "hashed": 0.0}
    stop = threading.Event()
    worker = threading.Thread(target=spinner, args=(stop,), name="spinner")
    worker.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        middle(spent)
        hashed(spent)
    stop.set()
    worker.join()
    for name, value in spent.items():
        print(name, f"{value:.4f}")


main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
