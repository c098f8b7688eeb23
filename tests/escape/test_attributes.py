# SPDX-License-Identifier: GPL-2.0-only
"""Read-only files changed without a write: xattrs, POSIX ACLs, inode flags.

Each is a change of the file (`w`), and each can be made through a
descriptor opened read-only, which the profile allows. Every hostile
program is tests/helpers/fsop.c's ro-* operations, which open the file
O_RDONLY and make one change through that descriptor (what setfattr,
setfacl and chattr do), printing "OK" or "ERR <ERRNO>". The file is read-only under the forbidding
profile (`deny file w` on its directory, or no `w` rule under `default
deny`); the control runs the same program under `default allow`.

The files live on the guest's tmpfs: it has trusted.* xattrs, POSIX ACLs and
the inode flags chattr sets (immutable) on both kernels, user.* xattrs from 6.6.
"""
import errno
import fcntl
import os
import struct
import subprocess
import sys

from escape import (FSOP, RUNTIME_RULES, SCRATCH, check, check_eq, got_through, main, profile,
                    read, refused, run, skip, write)

S = SCRATCH
F = S + "/ro/f"
ACL = "system.posix_acl_access"
FS_IOC_GETFLAGS = 0x80086601
FS_IMMUTABLE_FL = 0x10


def read_only_profiles():
    """The file is read-only by a deny rule, and by having no `w` rule under default deny."""
    return [profile("default allow\ndeny file w %s/ro/**\n" % S, name="deny-w"),
            profile("default deny\n" + RUNTIME_RULES + "allow file r %s/ro/**\n" % S,
                    name="r-only")]


def setup():
    write(F, "orig\n")


def xattrs():
    return sorted(os.listxattr(F))


def attempt(op, arg, what, want_op, before, after, prof=None):
    """The forbidding run(s), then the control; before() and after() say the file's state."""
    for p in [prof] if prof else read_only_profiles():
        state = before()
        r = run(p, [FSOP, "ro-" + op, F] + ([arg] if arg else []))
        e = refused(r, "EACCES", F, what)
        check_eq((e["op"], e["access"]), (want_op, "w"), what + ": the event")
        check_eq(before(), state, what + ": the file's state after the refusal")
        check_eq(read(F), "orig\n", what + ": the file's content")
    c = run(profile("default allow\n", name="permissive"),
            [FSOP, "ro-" + op, F] + ([arg] if arg else []))
    got_through(c, what)
    check(after(), what + ", control: the change was made")
    return e


def user_xattrs_supported():
    probe = S + "/probe"
    write(probe, "")
    try:
        os.setxattr(probe, "user.bw", b"1")
        return True
    except OSError as e:
        if e.errno == errno.EOPNOTSUPP:
            return False
        raise


def test_setxattr_through_a_read_only_descriptor():
    setup()
    e = attempt("setxattr", "trusted.bw", "fsetxattr trusted.bw", "setxattr",
                xattrs, lambda: "trusted.bw" in xattrs())
    check(e.get("path_from_fs_root"), "an xattr's hook names no mount: %r" % e)


def test_setxattr_user_through_a_read_only_descriptor():
    setup()
    if not user_xattrs_supported():
        skip("tmpfs has user.* xattrs from 6.6 on; trusted.* is tried on every kernel "
             "(test_setxattr_through_a_read_only_descriptor)")
    attempt("setxattr", "user.bw", "fsetxattr user.bw", "setxattr",
            xattrs, lambda: "user.bw" in xattrs())


def test_removexattr_through_a_read_only_descriptor():
    setup()
    os.setxattr(F, "trusted.bw", b"keep")
    attempt("removexattr", "trusted.bw", "fremovexattr trusted.bw", "removexattr",
            lambda: os.getxattr(F, "trusted.bw"), lambda: "trusted.bw" not in xattrs())


def acl():
    try:
        return os.getxattr(F, ACL)
    except OSError as e:
        if e.errno == errno.ENODATA:
            return None
        raise


def test_posix_acl_through_a_read_only_descriptor():
    """setfacl -m u:1000:rwx: the system.posix_acl_access xattr, which 6.1 passes to
    inode_setxattr and 6.12 to inode_set_acl."""
    setup()
    attempt("setacl", None, "set a POSIX ACL", "setacl", acl, lambda: acl() is not None)


def test_posix_acl_removed_through_a_read_only_descriptor():
    """setfacl -b: removing the ACL (inode_removexattr on 6.1, inode_remove_acl on 6.12)."""
    setup()
    out = subprocess.run([FSOP, "ro-setacl", F], capture_output=True, text=True).stdout
    check_eq(out.strip(), "OK", "the test sets an ACL first")
    attempt("removexattr", ACL, "remove a POSIX ACL", "setacl", acl, lambda: acl() is None)


def flags():
    fd = os.open(F, os.O_RDONLY)
    try:
        return struct.unpack("l", fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("l", 0)))[0]
    finally:
        os.close(fd)


def chattr_minus_i():
    subprocess.run([FSOP, "ro-chattr", F, "-i"], capture_output=True)


def immutable_by(op, what):
    setup()
    try:
        attempt(op, "+i", what, "setflags", flags, lambda: flags() & FS_IMMUTABLE_FL)
    finally:
        chattr_minus_i()


def test_chattr_through_a_read_only_descriptor():
    """chattr +i: FS_IOC_SETFLAGS through the descriptor."""
    immutable_by("chattr", "chattr +i (FS_IOC_SETFLAGS)")


def test_fsxattr_through_a_read_only_descriptor():
    """The same flag through FS_IOC_FSSETXATTR."""
    immutable_by("fsxattr", "FS_IOC_FSSETXATTR immutable")


def test_attribute_changes_where_the_profile_allows_them():
    """Under a profile that allows `w` on the file, every one of these changes is made,
    decided without a mount by the allow rule's pinned directory."""
    setup()
    p = profile("default deny\n" + RUNTIME_RULES + "allow file rw %s/ro/**\n" % S)
    try:
        for op, arg in (("setxattr", "trusted.bw"), ("removexattr", "trusted.bw"),
                        ("setacl", None), ("removexattr", ACL), ("chattr", "+i"),
                        ("chattr", "-i")):
            r = run(p, [FSOP, "ro-" + op, F] + ([arg] if arg else []))
            got_through(r, "%s %s under allow file rw" % (op, arg or ""))
    finally:
        chattr_minus_i()


TESTS = [
    test_setxattr_through_a_read_only_descriptor,
    test_setxattr_user_through_a_read_only_descriptor,
    test_removexattr_through_a_read_only_descriptor,
    test_posix_acl_through_a_read_only_descriptor,
    test_posix_acl_removed_through_a_read_only_descriptor,
    test_chattr_through_a_read_only_descriptor,
    test_fsxattr_through_a_read_only_descriptor,
    test_attribute_changes_where_the_profile_allows_them,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
