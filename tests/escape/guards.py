# SPDX-License-Identifier: GPL-2.0-only
"""What the escape tests of other processes, descriptors and the agent share
(test_processes.py, test_descriptors.py, test_agent.py): their hostile
program, guard_driver.py, and the BPF LSM they need."""
import os

from escape import lsm_active, skip

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
