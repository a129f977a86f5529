#!/usr/bin/env python3
"""ptydrive: run a command on a pseudo-terminal of our own and drive it step by step.

Used by the black-box tests (tests/sh/1*.t) to play the user at a terminal: type, press Ctrl-C
or Ctrl-Z, resize the window, signal the program, and compare the terminal's settings.
Standard library only.

usage: ptydrive.py [OPTIONS] STEP... -- CMD [ARG...]

The command runs as the leader of a new session whose controlling terminal is the slave side of
a fresh pty, so it is also the terminal's foreground process group (as a job a shell started).
The window size is set before the command starts.

Options:
  --size ROWSxCOLS      initial window size (default 24x80)
  --timeout SECS        default timeout of the waiting steps (default 10)
  --total SECS          hard limit for the whole run (default 60)
  --transcript FILE     write everything the terminal showed there (CRs and control sequences
                        removed)
  --env NAME=VALUE      set a variable in the command's environment (repeatable)

Steps, run in order; the first one that fails stops the run:
  expect:REGEX          wait until the output not consumed yet matches REGEX (Python re, DOTALL
                        and MULTILINE; CRs and terminal control sequences removed), then consume
                        it up to the end of the match
  mark                  consume all the output received so far
  send:TEXT             type TEXT (Python escapes are decoded: \\r, \\x03 Ctrl-C, \\x1a Ctrl-Z)
  line:TEXT             type TEXT then Return (\\r)
  size:ROWSxCOLS        resize the window (TIOCSWINSZ on the master: the kernel sends SIGWINCH
                        to the terminal's foreground process group)
  signal:SIG            send SIG (a name such as TERM or a number) to the command's process
  sleep:SECS            wait, still reading the output
  termios:NAME          record the terminal's settings (tcgetattr) as NAME; the settings at the
                        start, before the command ran, are recorded as "initial"
  capture:NAME:CMD      (at a shell prompt) run CMD between two markers and record its output as
                        NAME; $? in CMD is the status of the shell's previous command
  same:A:B              the two records A and B are identical
  differ:A:B            the two records A and B are different
  wait[:SECS]           wait for the command to exit (default: --timeout)
  running:REGEX[:SECS]  wait (default 5 s) until some process runs with REGEX in its command
                        line (e.g. before a signal: a shell that vforks a command and is sent a
                        signal before the exec can lose it, jail or not)
  gone:REGEX[:SECS]     wait (default 2 s) until no process runs with REGEX in its command line
                        (the driver and its ancestors, whose command lines hold the steps, are
                        never counted)

Printed on stdout, one fact per line, for the test to check:
  step N ok STEP | step N FAIL STEP: REASON
  matched: TEXT         (after an expect step)
  record NAME: ...      (for termios and capture records)
  compare A B: same | differ
  exit STATUS           the command's exit status, 128+N when killed by signal N (after wait)
  waited SECS           how long the wait step took
  result ok | result FAIL
The exit status is 0 when every step passed, 1 otherwise, 2 on a usage error.

At the end, whatever still runs in the command's session is killed (SIGKILL, by pid).
"""

import codecs
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time

DEFAULT_TIMEOUT = 10.0
# terminal control sequences (bash's bracketed-paste switches…) are left out of the text
ESCAPES = re.compile(r"\x1b(\[[0-9;?<=>]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>])")


def usage(msg):
    sys.stderr.write("ptydrive: %s\n" % msg)
    sys.exit(2)


def parse_size(s):
    m = re.fullmatch(r"(\d+)x(\d+)", s)
    if not m:
        usage("bad size %r (ROWSxCOLS)" % s)
    return int(m.group(1)), int(m.group(2))


def set_winsize(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def signum(name):
    if name.isdigit():
        return int(name)
    name = name.upper()
    if not name.startswith("SIG"):
        name = "SIG" + name
    return int(getattr(signal, name))


class Driver:
    def __init__(self, argv, size, timeout, total, transcript, env):
        self.argv = argv
        self.timeout = timeout
        self.deadline = time.monotonic() + total
        self.transcript_path = transcript
        self.raw = bytearray()   # everything received
        self.pos = 0             # first byte not consumed yet (index into text())
        self.records = {}
        self.status = None
        self.failed = False
        self.master, self.slave = os.openpty()
        set_winsize(self.master, *size)
        # the settings before anything ran (tcgetattr on the slave we keep open)
        self.records["initial"] = self.termios_record()
        self.pid = self.spawn(env)

    # ---- the command ----

    def spawn(self, env):
        e = dict(os.environ)
        e.setdefault("TERM", "xterm")
        e.update(env)
        slave_name = os.ttyname(self.slave)
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                fd = os.open(slave_name, os.O_RDWR)  # the first terminal opened: controlling
                fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
                for n in (0, 1, 2):
                    os.dup2(fd, n)
                os.closerange(3, 65536)
                for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP,
                          signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGPIPE,
                          signal.SIGCHLD, signal.SIGWINCH):
                    signal.signal(s, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                os.execvpe(self.argv[0], self.argv, e)
            except BaseException as ex:  # noqa: BLE001 - report anything, then leave
                try:
                    os.write(2, ("ptydrive: cannot run %s: %s\n" % (self.argv[0], ex)).encode())
                finally:
                    os._exit(127)
        return pid

    def reap(self):
        """Has the command exited? (sets self.status)"""
        if self.status is not None:
            return True
        try:
            p, ws = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if p == 0:
            return False
        if os.WIFEXITED(ws):
            self.status = os.WEXITSTATUS(ws)
        elif os.WIFSIGNALED(ws):
            self.status = 128 + os.WTERMSIG(ws)
        else:
            return False
        return True

    # ---- output ----

    def pump(self, seconds):
        """Read the master for up to `seconds` (returns earlier when something arrived)."""
        seconds = max(0.0, min(seconds, self.deadline - time.monotonic()))
        try:
            r, _, _ = select.select([self.master], [], [], seconds)
        except InterruptedError:
            return
        if not r:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if data:
            self.raw.extend(data)
        else:
            time.sleep(min(seconds, 0.02))  # EIO: no slave open (we keep one: rare)

    def text(self):
        return ESCAPES.sub("", self.raw.decode("utf-8", "replace")).replace("\r", "")

    def pending(self):
        return self.text()[self.pos:]

    def out_of_time(self):
        return time.monotonic() >= self.deadline

    # ---- records ----

    def termios_record(self):
        iflag, oflag, cflag, lflag, ispeed, ospeed, cc = termios.tcgetattr(self.slave)
        cc = [c if isinstance(c, int) else ord(c) for c in cc]
        return ("iflag=%#o oflag=%#o cflag=%#o lflag=%#o ispeed=%d ospeed=%d cc=%s"
                % (iflag, oflag, cflag, lflag, ispeed, ospeed, ",".join(str(c) for c in cc)))

    # ---- steps ----

    def step_expect(self, pattern, timeout=None):
        rx = re.compile(pattern, re.S | re.M)
        end = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            m = rx.search(self.pending())
            if m:
                self.pos += m.end()
                return m, None
            if time.monotonic() >= end or self.out_of_time():
                return None, "timeout waiting for /%s/; not consumed yet: %r" % (
                    pattern, self.pending()[-600:])
            self.pump(min(0.1, max(0.0, end - time.monotonic())))

    def write(self, data):
        while data:
            try:
                n = os.write(self.master, data)
            except BlockingIOError:
                self.pump(0.01)
                continue
            data = data[n:]

    def run_step(self, step):
        kind, _, arg = step.partition(":")
        if kind == "expect":
            m, err = self.step_expect(arg)
            if m:
                print("matched: %r" % m.group(0))
            return err
        if kind == "mark":
            self.pump(0.05)
            self.pos = len(self.text())
            return None
        if kind in ("send", "line"):
            data = codecs.decode(arg, "unicode_escape").encode("latin-1")
            if kind == "line":
                data += b"\r"
            self.write(data)
            return None
        if kind == "size":
            set_winsize(self.master, *parse_size(arg))
            return None
        if kind == "signal":
            try:
                os.kill(self.pid, signum(arg))
            except ProcessLookupError:
                return "the command is gone already"
            return None
        if kind == "sleep":
            end = time.monotonic() + float(arg)
            while time.monotonic() < end and not self.out_of_time():
                self.pump(end - time.monotonic())
            return None
        if kind == "termios":
            self.records[arg] = self.termios_record()
            print("record %s: %s" % (arg, self.records[arg]))
            return None
        if kind == "capture":
            name, _, cmd = arg.partition(":")
            # the markers appear in the output only once the shell expanded them, never in
            # the echo of what we typed
            tag = "@@$((6*7))-%s-" % name
            # $? in CMD is still the status of the command before
            self.write(('__pd_st=$?; echo "%s<"; (exit $__pd_st); %s; echo "%s>"\r'
                        % (tag, cmd, tag)).encode())
            done = "@@42-%s-" % name
            m, err = self.step_expect(re.escape(done + "<") + r"\n(.*?)" + re.escape(done + ">"))
            if err:
                return err
            self.records[name] = m.group(1)
            for ln in m.group(1).splitlines():
                print("record %s: %s" % (name, ln))
            return None
        if kind in ("same", "differ"):
            a, _, b = arg.partition(":")
            if a not in self.records or b not in self.records:
                return "no record %r or %r" % (a, b)
            same = self.records[a] == self.records[b]
            print("compare %s %s: %s" % (a, b, "same" if same else "differ"))
            if same != (kind == "same"):
                return "%s is %r, %s is %r" % (a, self.records[a], b, self.records[b])
            return None
        if kind == "wait":
            limit = float(arg) if arg else self.timeout
            start = time.monotonic()
            end = start + limit
            while not self.reap():
                if time.monotonic() >= end or self.out_of_time():
                    return "the command did not exit within %.1f s" % limit
                self.pump(0.02)
            print("waited %.2f" % (time.monotonic() - start))
            print("exit %d" % self.status)
            # what is left in the master's queue
            for _ in range(10):
                before = len(self.raw)
                self.pump(0.05)
                if len(self.raw) == before:
                    break
            return None
        if kind == "running":
            pat, secs = regex_secs(arg, 5.0)
            end = time.monotonic() + secs
            while not any(re.search(pat, cmd) for _, cmd in processes()):
                if time.monotonic() >= end:
                    return "no process runs with /%s/ in its command line" % pat
                self.pump(0.02)
            return None
        if kind == "gone":
            pat, secs = regex_secs(arg, 2.0)
            end = time.monotonic() + secs
            while True:
                left = [p for p, cmd in processes() if re.search(pat, cmd)]
                if not left:
                    return None
                if time.monotonic() >= end:
                    return "still running: %s" % ", ".join(
                        "%d (%s)" % (p, c) for p, c in processes() if p in left)
                self.pump(0.05)
        return "unknown step"

    def run(self, steps):
        for i, step in enumerate(steps, 1):
            if self.out_of_time():
                print("step %d FAIL %s: the whole run took too long" % (i, step))
                self.failed = True
                break
            err = self.run_step(step)
            if err:
                print("step %d FAIL %s: %s" % (i, step, err))
                self.failed = True
                break
            print("step %d ok %s" % (i, step))
        if self.status is None:
            self.reap()
        print("result %s" % ("FAIL" if self.failed else "ok"))

    def cleanup(self):
        """Kill (by pid) whatever still runs in the command's session; save the transcript."""
        for _ in range(3):
            left = session_members(self.pid)
            if self.status is None and not self.reap():
                left.add(self.pid)
            if not left:
                break
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
            self.reap()
        if self.status is None:
            end = time.monotonic() + 2
            while not self.reap() and time.monotonic() < end:
                time.sleep(0.02)
        self.pump(0.01)
        if self.transcript_path:
            with open(self.transcript_path, "w", encoding="utf-8") as f:
                f.write(self.text())
        os.close(self.master)
        os.close(self.slave)


def regex_secs(arg, default):
    """REGEX[:SECS]"""
    m = re.fullmatch(r"(.*):([0-9]+(?:\.[0-9]+)?)", arg, re.S)
    return (m.group(1), float(m.group(2))) if m else (arg, default)


def ancestors():
    """Our own pid and those of our ancestors (whose command lines hold our arguments)."""
    pids = set()
    p = os.getpid()
    while p > 1 and p not in pids:
        pids.add(p)
        try:
            with open("/proc/%d/status" % p) as f:
                p = int(next(ln for ln in f if ln.startswith("PPid:")).split()[1])
        except (OSError, StopIteration, ValueError):
            break
    return pids


def processes():
    """(pid, command line) of every process we can see, but ourselves and our ancestors."""
    out = []
    skip = ancestors()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in skip:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        out.append((int(d), cmd))
    return out


def session_members(sid):
    pids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # the fields after the command name (which may hold spaces and parentheses)
        fields = st[st.rfind(")") + 2:].split()
        if len(fields) > 3 and int(fields[3]) == sid and int(d) != os.getpid():
            pids.add(int(d))
    return pids


def main(argv):
    size = (24, 80)
    timeout = DEFAULT_TIMEOUT
    total = 60.0
    transcript = None
    env = {}
    steps = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a in ("--size", "--timeout", "--total", "--transcript", "--env"):
            if i + 1 >= len(argv):
                usage("%s needs a value" % a)
            v = argv[i + 1]
            if a == "--size":
                size = parse_size(v)
            elif a == "--timeout":
                timeout = float(v)
            elif a == "--total":
                total = float(v)
            elif a == "--transcript":
                transcript = v
            else:
                name, eq, value = v.partition("=")
                if not eq:
                    usage("--env NAME=VALUE")
                env[name] = value
            i += 2
            continue
        if a.startswith("--"):
            usage("unknown option %s" % a)
        steps.append(a)
        i += 1
    cmd = argv[i:]
    if not cmd:
        usage("no command (STEP... -- CMD [ARG...])")
    for s in steps:
        if s.partition(":")[0] not in ("expect", "mark", "send", "line", "size", "signal",
                                       "sleep", "termios", "capture", "same", "differ",
                                       "wait", "running", "gone"):
            usage("unknown step %r" % s)

    sys.stdout.reconfigure(line_buffering=True)
    # killed by a timeout(1) around us, still clean up the command's session
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))
    d = Driver(cmd, size, timeout, total, transcript, env)
    try:
        d.run(steps)
    finally:
        d.cleanup()
    return 1 if d.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
