"""A link with a fixed one-way delay and an optional rate cap between the hosts of
netns_hosts.py, emulated in user space (the role of `tc netem`, which the kernel of the test
machines lacks).

Each host namespace gets a TUN interface on a subnet of its own (DelayLink.subnet); one
forwarder process (this file run as a script) reads every IP packet a host's kernel routes into
its TUN and writes it into the destination host's TUN `delay` later, so the hosts' kernel TCP
stacks talk across it as across a long wire. With a rate cap the link into each host sends one
packet after the other at the rate (a FIFO; a packet that would wait more than the queue's
400 ms is dropped, like tbf's `latency 400ms`) and each then travels the delay. Nothing is
reordered: the packets into a host arrive in the order the forwarder read them.

mpirun's daemons keep talking over the bridge; DelayLink.mpirun_args() points the ranks' TCP
transport (btl) at the TUN subnet only. A 64 KiB MTU keeps the packet rate, and so the
forwarder's work, low. Limits (one Python process): docs/scale-out.md states its forwarding
ceiling and the CPU it takes; `stats` (after exit) says how late it delivered.

Needs /dev/net/tun besides what netns_hosts.py needs; unavailable() says why not."""
import argparse
import ctypes
import fcntl
import heapq
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000
TUN_NAME = "dbtun"
MTU = 65000
QUEUE_S = 0.4  # the most a packet may wait for the rate before it is dropped


def unavailable():
    """Why a TUN interface cannot be made here, or None."""
    try:
        fd = _open_tun(f"dbprobe{os.getpid() % 100000}")
    except OSError as e:
        return f"no TUN interface: {e}"
    os.close(fd)
    return None


def _open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


def _open_tun_in(netns):
    """A TUN interface created inside network namespace `netns` (its fd; the interface lives while it is open)."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            return _open_tun(TUN_NAME)
        finally:
            if libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back home")
    finally:
        os.close(home)
        os.close(target)


class DelayLink:
    """with NetnsHosts(n) as hosts, DelayLink(hosts, delay_ms, rate_mbit=None) as link:
    link.mpirun_args(np) places the ranks as hosts.mpirun_args does, their traffic through the link."""

    def __init__(self, hosts, delay_ms, rate_mbit=None):
        self.hosts = hosts
        self.delay_ms = delay_ms
        self.rate_mbit = rate_mbit
        self.subnet = "172.30.0"  # only inside the host namespaces, so it cannot clash outside them
        self.ips = [f"{self.subnet}.{i + 1}" for i in range(hosts.n)]
        self.proc = None
        self.stats = None

    def __enter__(self):
        fds = []
        try:
            for ns, ip in zip(self.hosts.names, self.ips):
                fds.append(_open_tun_in(ns))
                ns_ip = ["ip", "netns", "exec", ns, "ip"]
                subprocess.run([*ns_ip, "addr", "add", f"{ip}/24", "dev", TUN_NAME], check=True, capture_output=True)
                subprocess.run([*ns_ip, "link", "set", TUN_NAME, "mtu", str(MTU), "up"], check=True,
                               capture_output=True)
            cmd = [sys.executable, os.path.abspath(__file__), "--delay-ms", str(self.delay_ms),
                   *(["--rate-mbit", str(self.rate_mbit)] if self.rate_mbit else []),
                   *[f"{fd}={ip}" for fd, ip in zip(fds, self.ips)]]
            self.proc = subprocess.Popen(cmd, pass_fds=fds, stdout=subprocess.PIPE, text=True)
            if self.proc.stdout.readline().strip() != "ready":
                raise RuntimeError("the delay link's forwarder did not start")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        finally:
            for fd in fds:  # the forwarder holds them now; the interfaces go when it exits
                os.close(fd)
        return self

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            out, _ = self.proc.communicate(timeout=10)
            self.stats = json.loads(out) if out.strip() else None
        return False

    def mpirun_args(self, np):
        return self.hosts.mpirun_args(np, btl_subnet=f"{self.subnet}.0/24")


def forward(routes, delay_s, rate_bps):
    """Moves packets between the TUN fds of `routes` ({4-byte IPv4 address: fd}) until SIGTERM; prints stats."""
    # Deliveries are due to the microsecond while the ranks and builds share the cores: at a
    # real-time priority the forwarder runs when it wakes, as a NIC would (it sleeps between
    # packets, and the kernel keeps 5% of each second for the rest even if it did not).
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    for fd in routes.values():
        os.set_blocking(fd, False)
    fds = list(routes.values())
    due = []  # (time to deliver, sequence number, fd out, packet): a heap, FIFO among equal times
    link_free = dict.fromkeys(routes, 0.0)  # when the link into each host has sent what it holds
    seq = 0
    st = {"packets": 0, "bytes": 0, "dropped": 0, "late_max_us": 0.0, "late_sum_us": 0.0}
    print("ready", flush=True)
    while not stopping:
        timeout = max(0.0, due[0][0] - time.monotonic()) if due else 0.5
        try:
            readable, _, _ = select.select(fds, [], [], timeout)
        except InterruptedError:
            continue
        for fd in readable:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                now = time.monotonic()
                out = routes.get(pkt[16:20]) if len(pkt) >= 20 and pkt[0] >> 4 == 4 else None
                if out is None:
                    st["dropped"] += 1
                    continue
                dst = pkt[16:20]
                leave = now
                if rate_bps:
                    start = max(now, link_free[dst])
                    if start - now > QUEUE_S:
                        st["dropped"] += 1
                        continue
                    leave = link_free[dst] = start + len(pkt) * 8 / rate_bps
                heapq.heappush(due, (leave + delay_s, seq, out, pkt))
                seq += 1
        now = time.monotonic()
        while due and due[0][0] <= now:
            when, _, out, pkt = heapq.heappop(due)
            os.write(out, pkt)
            late = (now - when) * 1e6
            st["packets"] += 1
            st["bytes"] += len(pkt)
            st["late_max_us"] = max(st["late_max_us"], late)
            st["late_sum_us"] += late
    st["cpu_s"] = sum(os.times()[:2])
    print(json.dumps(st), flush=True)


def main():
    p = argparse.ArgumentParser(description="the forwarder of a DelayLink (started by it)")
    p.add_argument("--delay-ms", type=float, required=True)
    p.add_argument("--rate-mbit", type=float)
    p.add_argument("routes", nargs="+", help="FD=IPV4: a TUN fd and the address of the host behind it")
    a = p.parse_args()
    routes = {socket.inet_aton(ip): int(fd) for fd, ip in (r.split("=") for r in a.routes)}
    forward(routes, a.delay_ms * 1e-3, a.rate_mbit * 1e6 if a.rate_mbit else None)


if __name__ == "__main__":
    main()
