# What CPython itself says each instruction's line is, for every code
# object of every module of its standard library: one line per code
# object, "FIRST_LINE HEX_LINE_TABLE LINE:COUNT,LINE:COUNT,...", the lines
# of its code units in order (co_positions(), None as 0), run-length
# encoded. The oracle ebprof's decoder of 3.11's location table is held to.
import glob
import sys
import sysconfig
import types


def walk(code, out):
    runs = []
    for start, _, _, _ in code.co_positions():
        line = start or 0
        if runs and runs[-1][0] == line:
            runs[-1][1] += 1
        else:
            runs.append([line, 1])
    out.write(f"{code.co_firstlineno} {code.co_linetable.hex()} "
              + ",".join(f"{l}:{n}" for l, n in runs) + "\n")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            walk(const, out)


for path in sorted(glob.glob(sysconfig.get_paths()["stdlib"] + "/**/*.py", recursive=True)):
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OSError):
        continue  # test files with deliberate errors
    walk(code, sys.stdout)
