# SPDX-License-Identifier: GPL-2.0-only
"""`bpfwarden selftest`: the escape corpus, route by route.

Every test_* function of tests/escape/test_*.py is a route (escape.py says
what one is). Each is run as the VM tests run it and printed as:

  refused  the forbidding run was refused as the test demands, and the
           control got through (the route is real here, and closed);
  OPEN     the forbidding run got what it tried: the route is open;
  broken   the control did not get through: the route proves nothing on
           this node (a missing tool, a kernel that lacks the route);
  failed   any other check failed (a wrong errno, a missing or extra
           event): the route may be closed, but not as promised;
  skipped  the route cannot be tried here, with the reason.

Exit status 0 when no route is open, broken or failed, 1 otherwise, 2 when
the corpus cannot run at all. Arguments name routes (with or without the
test_ prefix); --list lists them with the first line of each docstring.
"""
import glob
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import escape  # noqa: E402
from bwtest import BW, FSOP, Skipped, describe, lsm_active, run_one  # noqa: E402


def routes():
    """(module, test function) in file order, then definition order."""
    out = []
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        mod = importlib.import_module(os.path.basename(path)[:-3])
        tests = getattr(mod, "TESTS", None)
        if tests is None:
            tests = [v for k, v in vars(mod).items() if k.startswith("test_") and callable(v)]
            tests.sort(key=lambda f: f.__code__.co_firstlineno)
        out += [(mod.__name__, t) for t in tests]
    return out


def summary(t):
    """The first sentence of the test's docstring, on one line."""
    para = " ".join((t.__doc__ or "").strip().split("\n\n")[0].split())
    first = para.split(". ")[0].rstrip(".")
    return first if len(first) <= 100 else first[:99] + "\u2026"


def classify(e):
    if e is None:
        return "refused"
    if isinstance(e, Skipped):
        return "skipped"
    if isinstance(e, escape.RouteOpen):
        return "OPEN"
    if isinstance(e, escape.ControlBroken):
        return "broken"
    return "failed"


def main(argv):
    listing = "--list" in argv
    names = set(a for a in argv if a != "--list")
    all_routes = routes()
    chosen = [(m, t) for m, t in all_routes
              if not names or t.__name__ in names or t.__name__[5:] in names]
    unknown = names - set(t.__name__ for _, t in all_routes) - set(t.__name__[5:] for _, t in all_routes)
    if unknown:
        print("selftest: no route named %s (--list lists them)" % " ".join(sorted(unknown)),
              file=sys.stderr)
        return 2
    if listing:
        for m, t in chosen:
            print("%-45s %s" % (t.__name__, summary(t)))
        return 0
    for tool in (BW, FSOP):
        if not os.access(tool, os.X_OK):
            print("selftest: %s is missing: the corpus cannot run" % tool, file=sys.stderr)
            return 2
    if not lsm_active():
        print("selftest: this kernel cannot run BPF LSM programs (`bpfwarden status` says "
              "why): no route can be refused here", file=sys.stderr)
        return 2
    counts = {}
    for m, t in chosen:
        e, took = run_one(t)
        verdict = classify(e)
        counts[verdict] = counts.get(verdict, 0) + 1
        if verdict == "skipped":
            print("%-8s %s: %s" % (verdict, t.__name__, e))
        else:
            print("%-8s %s (%s, %.1fs)" % (verdict, t.__name__, m, took))
        if verdict not in ("refused", "skipped"):
            print(describe(e))
        sys.stdout.flush()
    order = ("refused", "OPEN", "broken", "failed", "skipped")
    print("%d routes: %s" % (len(chosen), ", ".join("%d %s" % (counts.get(v, 0), v) for v in order)))
    return 1 if any(counts.get(v) for v in ("OPEN", "broken", "failed")) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
