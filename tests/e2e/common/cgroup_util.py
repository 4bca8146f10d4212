"""A fresh child memory cgroup for end-to-end tests (root only), v1 or v2, whichever
holds this process's memory controller.

    cg = ChildMemoryCgroup.create("deepbatch_e2e", 600 * 2**20)   # raises CgroupUnavailable
    start_server(cg.launcher(binary, tmpdir), ...)               # the server runs inside it
    cg.stats()   # {"usage", "peak", "oom_kills", "failcnt"}
    cg.remove()  # moves anything left to this process's cgroup, then removes the directory

Paths in /proc/self/cgroup are relative to each hierarchy's root; /proc/self/mountinfo
says which part of the hierarchy (its `root` field) is mounted where.
"""
import os
import time


class CgroupUnavailable(Exception):
    """No writable memory cgroup here (not root, no memory controller, read-only mount)."""


def _own_cgroups():
    """{"v1": path, "v2": path}: this process's memory (v1) and unified (v2) cgroup paths."""
    out = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            hier, controllers, path = line.rstrip("\n").split(":", 2)
            if hier == "0" and controllers == "":
                out["v2"] = path
            elif "memory" in controllers.split(","):
                out["v1"] = path
    return out


def _mounts():
    """[(version, root, mount_point)] of the cgroup mounts, v1 ones only with the memory controller."""
    unescape = lambda s: s.encode().decode("unicode_escape")  # noqa: E731 - mountinfo's \ooo escapes
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            tail = fields[fields.index("-") + 1:]
            if tail[0] == "cgroup2":
                out.append(("v2", unescape(fields[3]), unescape(fields[4])))
            elif tail[0] == "cgroup" and "memory" in tail[2].split(","):
                out.append(("v1", unescape(fields[3]), unescape(fields[4])))
    return out


def _own_dir(version):
    """The directory of this process's cgroup in `version`'s hierarchy, or None."""
    path = _own_cgroups().get(version)
    if path is None:
        return None
    for v, root, mount_point in sorted(_mounts(), key=lambda m: len(m[1])):
        if v == version and (root == "/" or path == root or path.startswith(root + "/")):
            rel = path[len(root):] if root != "/" else path
            return os.path.join(mount_point, rel.lstrip("/"))
    return None


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def _keyed(text):
    """{"key": int} of "key value" lines (memory.events, memory.oom_control)."""
    return {k: int(v) for k, v in (line.split() for line in text.splitlines() if len(line.split()) == 2)}


def _parent_for_v2(own):
    """Where a v2 child with the memory controller can be made: under our own cgroup when it
    delegates memory, else beside it (our cgroup has processes, so it cannot delegate)."""
    if "memory" in _read(os.path.join(own, "cgroup.subtree_control")).split():
        return own
    if os.path.exists(os.path.join(own, "memory.max")):
        return os.path.dirname(own)
    raise CgroupUnavailable(f"the memory controller is not enabled for {own}")


class ChildMemoryCgroup:
    def __init__(self, version, path, home):
        self.version = version  # "v1" or "v2"
        self.path = path        # the child cgroup's directory
        self.home = home        # this process's own cgroup: where leftovers go back

    @staticmethod
    def create(name, limit_bytes):
        if os.geteuid() != 0:
            raise CgroupUnavailable("not running as root")
        own_v1 = _own_dir("v1")
        if own_v1 and os.path.exists(os.path.join(own_v1, "memory.limit_in_bytes")):
            version, home, parent, limit_file = "v1", own_v1, own_v1, "memory.limit_in_bytes"
        else:
            home = _own_dir("v2")
            if not home:
                raise CgroupUnavailable("no cgroup v1 memory hierarchy or cgroup2 mount holds this process")
            version, parent, limit_file = "v2", _parent_for_v2(home), "memory.max"
        path = os.path.join(parent, f"{name}_{os.getpid()}")
        try:
            os.mkdir(path)
        except OSError as e:
            raise CgroupUnavailable(f"cannot create {path}: {e}") from e
        cg = ChildMemoryCgroup(version, path, home)
        try:
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(limit_bytes))
        except OSError as e:
            cg.remove()
            raise CgroupUnavailable(f"cannot set {limit_file} in {path}: {e}") from e
        return cg

    def launcher(self, binary, directory):
        """Writes an executable `directory`/deepbatch that moves itself into this cgroup and then
        execs `binary` with its arguments (so the server runs there from its first byte); returns its path."""
        path = os.path.join(directory, "deepbatch")
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\necho $$ > "{self.path}/cgroup.procs" || exit 99\nexec "{binary}" "$@"\n')
        os.chmod(path, 0o755)
        return path

    def stats(self):
        """usage and peak bytes, OOM kills, and how often usage reached the limit (v1 failcnt, v2 max events)."""
        f = lambda name: os.path.join(self.path, name)  # noqa: E731
        if self.version == "v1":
            return {"usage": int(_read(f("memory.usage_in_bytes"), "0")),
                    "peak": int(_read(f("memory.max_usage_in_bytes"), "0")),
                    "oom_kills": _keyed(_read(f("memory.oom_control"))).get("oom_kill", 0),
                    "failcnt": int(_read(f("memory.failcnt"), "0"))}
        events = _keyed(_read(f("memory.events")))
        return {"usage": int(_read(f("memory.current"), "0")),
                "peak": int(_read(f("memory.peak"), "0")),  # absent before Linux 5.19: 0
                "oom_kills": events.get("oom_kill", 0),
                "failcnt": events.get("max", 0)}

    def remove(self):
        """Moves any process left to this process's own cgroup and removes the directory."""
        for _ in range(50):
            pids = _read(os.path.join(self.path, "cgroup.procs")).split()
            for pid in pids:
                try:
                    with open(os.path.join(self.home, "cgroup.procs"), "w") as out:
                        out.write(pid)
                except OSError:
                    pass  # it exited meanwhile
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"cannot remove {self.path}")


SKIPPED = 77  # ctest's SKIP_RETURN_CODE for the tests that need a real cgroup


def skip_unless_cgroups(limit_bytes):
    """None when a child memory cgroup with this limit can be made here; otherwise prints why
    and returns SKIPPED for the test's main() to exit with."""
    try:
        ChildMemoryCgroup.create("deepbatch_e2e_probe", limit_bytes).remove()
        return None
    except CgroupUnavailable as e:
        print("=" * 78)
        print(f"SKIPPED: no real memory cgroup can be made here ({e}).")
        print("These checks need root and a writable cgroup v1 memory hierarchy or cgroup2 memory controller.")
        print("=" * 78)
        return SKIPPED
