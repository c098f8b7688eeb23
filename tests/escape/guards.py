# SPDX-License-Identifier: GPL-2.0-only
"""What the escape tests of other processes, descriptors and the agent share
(test_processes.py, test_descriptors.py, test_agent.py): their hostile
program, guard_driver.py, the BPF LSM they need, and how a refusal and a
control are judged (an attempt that got through is an open route, a control
that did not a broken one: tests/escape/selftest.py)."""
import os

from escape import ControlBroken, Failure, RouteOpen, lsm_active, outcome_lines, skip

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "guard_driver.py")
HOLDER = os.path.join(HERE, "holder.py")
PY = "/usr/bin/python3"


def needs_lsm():
    if not lsm_active():
        skip("BPF LSM is not active on this kernel")


def driver(route, *args):
    """guard_driver.py's command line for one route."""
    return [PY, DRIVER, route] + [str(a) for a in args]


def attempt_failed(r, errno_name, what):
    """The forbidding run: the attempt failed with errno_name (None: the
    sender cannot see the refusal). One that got through is an open route."""
    if errno_name is None:
        return
    got = outcome_lines(r)
    if not (got and got[-1] == "ERR " + errno_name):
        raise (RouteOpen if got and got[-1].startswith("OK") else Failure)(
            "%s: the attempt should fail with %s; the program said %r (rc %d, stderr %s)"
            % (what, errno_name, got, r.rc, r.stderr.strip()))


def control(ok, what):
    """A control (the same action from an ungoverned process, or at one that
    is not an agent) must get through: else the route proves nothing here."""
    if not ok:
        raise ControlBroken("%s: the control must get through (a route that no longer works "
                            "is a broken test)" % what)
