#!/usr/bin/env python3
"""Run a command behind sandrun-egress without `sandrun sandbox`, as the
supervisor would: start the gateway (control socket, log memfd), join its
network namespace in a private mount namespace whose /etc/resolv.conf
points at the stub, drop to nobody, run the command with the proxy
variables, then stop the gateway and write its log lines to LOGFILE.

usage: egress_drive.py GATEWAY LOGFILE [GATEWAY OPTIONS] -- COMMAND..."""
import os
import socket
import subprocess
import sys

gw, logfile = sys.argv[1], sys.argv[2]
sep = sys.argv.index("--")
opts, cmd = sys.argv[3:sep], sys.argv[sep + 1:]
ctl, ctl_child = socket.socketpair()
log = os.memfd_create("egress-log", 0)
os.set_inheritable(ctl_child.fileno(), True)
os.set_inheritable(log, True)
p = subprocess.Popen([gw, "--control-fd", str(ctl_child.fileno()),
                      "--log-fd", str(log)] + opts,
                     pass_fds=(ctl_child.fileno(), log))
ctl_child.close()
line = ctl.makefile().readline().split()
if not line or line[0] != "ready":
    sys.stderr.write("gateway: %s\n" % " ".join(line))
    sys.exit(125)
ns = "/proc/%d/fd/%s" % (p.pid, line[1])
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
proxy = "http://127.0.0.1:3128"
for k in ("http_proxy", "https_proxy", "all_proxy"):
    if os.environ.get("EGRESS_NO_PROXY_VARS") is None:
        env[k] = env[k.upper()] = proxy
env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1"
resolv = "/tmp/egress-resolv.%d" % os.getpid()
with open(resolv, "w") as f:
    f.write("nameserver 127.0.0.1\n")
script = ('ns="$1"; shift; mount --bind "$0" /etc/resolv.conf && exec nsenter --net="$ns" '
          'setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all '
          '--bounding-set=-all -- "$@"')
r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh",
                    "-c", script, resolv, ns] + cmd, env=env)
os.unlink(resolv)
ctl.close()
p.wait()
os.lseek(log, 0, 0)
with open(logfile, "wb") as f:
    while True:
        b = os.read(log, 65536)
        if not b:
            break
        f.write(b)
sys.exit(r.returncode)
