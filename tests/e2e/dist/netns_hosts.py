"""Ranks on separate network stacks: each "host" is a Linux network namespace with one
veth interface, the other end attached to a bridge in the launching namespace, so rank
traffic really crosses network devices (no shared memory, no loopback between ranks).
mpirun runs in the launching namespace and starts one orted per host through an rsh
agent that enters the host's namespace; the ranks talk TCP over the bridge's subnet.

A bandwidth cap is a token-bucket qdisc (tc tbf) on each host's bridge-side interface,
i.e. on the traffic into that host. Everything created is removed on exit, also when the
test fails. Needs root (CAP_NET_ADMIN) and iproute2; unavailable() says why not."""
import json
import os
import shutil
import subprocess
import tempfile


def _ip(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["ip", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def unavailable():
    """Why namespaces cannot be used here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"`{tool}` was not found (install iproute2)"
    probe = f"dbprobe{os.getpid() % 100000}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"`ip netns add` failed: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class NetnsHosts:
    """with NetnsHosts(n, rate_mbit=None) as hosts: hosts.mpirun_args(np) -> the mpirun options
    that place one rank per host (ranks r and r + n share host r when np > n)."""

    def __init__(self, n_hosts, rate_mbit=None):
        self.n = n_hosts
        self.rate_mbit = rate_mbit
        tag = os.getpid() % 100000
        self.subnet = f"10.{100 + tag % 100}.{(tag // 100) % 250}"
        self.bridge = f"dbbr{tag}"
        self.names = [f"dbns{tag}h{i}" for i in range(n_hosts)]
        self.host_if = [f"dbh{tag}h{i}" for i in range(n_hosts)]
        self.ips = [f"{self.subnet}.{i + 1}" for i in range(n_hosts)]
        self.tmp = None

    def __enter__(self):
        try:
            self._create()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _create(self):
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.subnet}.254/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for ns, hif, ip in zip(self.names, self.host_if, self.ips):
            subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
            _ip("link", "add", hif, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", hif, "master", self.bridge)
            _ip("link", "set", hif, "up")
            _ip("addr", "add", f"{ip}/24", "dev", "eth0", ns=ns)
            _ip("link", "set", "eth0", "up", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)
            if self.rate_mbit:
                # The queue holds 400 ms at the rate, so bursts wait instead of being dropped.
                subprocess.run(["tc", "qdisc", "add", "dev", hif, "root", "tbf", "rate", f"{self.rate_mbit}mbit",
                                "burst", "64kb", "latency", "400ms"], check=True, capture_output=True, text=True)
        self.tmp = tempfile.mkdtemp(prefix="db-netns-")
        agent = os.path.join(self.tmp, "enter-host")
        cases = "\n".join(f"  {ip}) ns={ns} ;;" for ip, ns in zip(self.ips, self.names))
        with open(agent, "w") as f:
            f.write("#!/bin/sh\n# mpirun's rsh agent: enter-host HOST COMMAND... runs COMMAND in HOST's namespace.\n"
                    f'host=$1; shift\ncase "$host" in\n{cases}\n  *) echo "enter-host: unknown host $host" >&2; '
                    'exit 1 ;;\nesac\n'
                    # Every host shares this machine's /tmp and host name: a session directory of its own
                    # keeps the daemons of two hosts from racing for the same one.
                    f'export OMPI_MCA_orte_tmpdir_base={self.tmp}/$ns\nmkdir -p "$OMPI_MCA_orte_tmpdir_base"\n'
                    'exec ip netns exec "$ns" sh -c "$*"\n')
        os.chmod(agent, 0o755)
        self.agent = agent

    def __exit__(self, *exc):
        for ns, hif in zip(self.names, self.host_if):
            subprocess.run(["ip", "link", "del", hif], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return False

    def mpirun_args(self, np, btl_subnet=None):
        """btl_subnet: where the ranks' own traffic goes (default: the bridge's subnet, as the daemons')."""
        slots = (np + self.n - 1) // self.n
        subnet = f"{self.subnet}.0/24"
        return ["--host", ",".join(f"{ip}:{slots}" for ip in self.ips), "--map-by", "node",
                "--mca", "plm_rsh_agent", self.agent, "--mca", "oob_tcp_if_include", subnet,
                "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", btl_subnet or subnet]

    def interface_bytes(self):
        """Bytes each host received and sent so far (its eth0 counters), per host."""
        out = []
        for ns in self.names:
            s = json.loads(_ip("-s", "-j", "link", "show", "eth0", ns=ns).stdout)[0]["stats64"]
            out.append((s["rx"]["bytes"], s["tx"]["bytes"]))
        return out
