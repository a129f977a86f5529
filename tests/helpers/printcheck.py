#!/usr/bin/env python3
"""printcheck: every string the command layer prints is cleaned, or declared agentjail's own.

Usage: printcheck.py SRC_DIR   (prints one line per finding; exit 1 when there is any)

Only src/cmd/ and the mains print (doc/design.md §6). What a jail chose (a file name in the
workspace, a violation's path, a host, an agent's session id, a line from the remote sandbox)
must reach a terminal through fmt_clean (src/util/termtext.h), or through cmd_warn /
cmd_print_err, which pass their whole line through it. This reads every call of a printing
function there (stdio, write(2) to fds 1 and 2, curses) and maps each string it prints (the
%s arguments of a literal format, the text of fputs/puts/fwrite/write/addstr, a format that is
not a literal) to its expression. An expression passes when it is:
  - a string literal, NULL, or a ?: whose branches both pass;
  - a call of a cleaner (CLEANERS: functions that return cleaned text);
  - a local variable every assignment of which (in that function) passes;
  - listed in OURS below: agentjail's own text, or the user's own (their config, their
    arguments, their paths), each with the reason it cannot come from a jail.
Anything else is a finding: clean it (fmt_clean), or, if it really is agentjail's or the
user's own, add it to OURS with the reason. A reviewer reads OURS; the check makes sure no
print escapes it. It reads text, not types: a string reached through a struct field, a
pointer or another function is judged by the expression printed, so OURS names expressions
precisely (file and expression), never a whole file.
"""
import os
import re
import sys

# Functions whose result is cleaned for the terminal (their documentation says so).
CLEANERS = {
    "fmt_clean", "fmt_cut",                     # util/termtext.h: the cleaner itself
    "fmt_table_render",                         # sessfmt.h: cells through fmt_clean/fmt_cut
    "sessfmt_sessions", "sessfmt_argv", "sessfmt_time", "sessfmt_ago", "sessfmt_status",
    "sessfmt_duration", "sessfmt_policy",       # sessfmt.h: built from numbers or cleaned
    "netfmt_log_header", "netfmt_log_line", "netfmt_log_violation", "netfmt_summary",
    "netfmt_denied_line", "netfmt_cell", "netfmt_hostport", "netfmt_bytes",  # netfmt.h
    "cmd_shown_workspace",                      # cmd.h: the recorded workspace, fmt_clean'd
}

# Expressions that are agentjail's own text or the user's own, never a jail's: (file or "*",
# regular expression matched against the whole expression, the reason).
OURS = [
    ("*", r"[A-Za-z_]*usage", "a usage text of agentjail"),
    ("*", r"strerror\(.*\)|strsignal\(.*\)", "libc's text for an errno or a signal"),
    ("*", r"(fs_mode|net_mode|sess_status|attempt_kind|net_proto)_name\(.*\)",
     "the name of an enum value"),
    ("*", r"AGENTJAIL_VERSION|LL_ALLOW_WARNING", "agentjail's constant text"),
    ("*", r"(pr|all\[i\])->(name|title|install|skip_note|session_flag)|"
          r"(pr|all\[i\])->(skip_flags|resume_id|resume_last|exe)\[\w+\]",
     "a profile: built in, or the user's [profile.NAME] (a project's file cannot define one)"),
    ("*", r"req->session_id|s\.id|full|first",
     "a session id: a UUID agentjail made (or the first of a count)"),
    # one file each
    ("verify.c", r"req->pol\.workspace", "the workspace the user chose"),
    ("verify.c", r"d->(id|category)", "the battery's table of probes, built in"),
    ("verify.c|session.c|log.c", r"s", "JSON text printed with JSON_ENSURE_ASCII: jansson "
     "escapes every control character and every non-ASCII one (C1, bidirectional marks)"),
    ("doctor.c", r"out|bad->(detail|fix)|bwrap|v",
     "doctor's report on the host (doctor_add turns control characters into spaces; an "
     "agent's --version output goes through doctor_clean_line, which ends in fmt_clean)"),
    ("config.c", r"r\.considered\.v\[i\]|p",
     "the paths of the configuration files the user asked about"),
    ("config.c", r"lines\.v\[i\]|r\.hash", "a sha256 agentjail computed (%.12s of it)"),
    ("profiles.c", r"label|l\[i\]|s|buf|f\.res\.(path|real|interp)|f\.res\.binds\.v\[i\]|"
                   r"pol\.(agent_rw|agent_private|agent_private_over|protect|env)\.v\[i\]",
     "an agent profile and where its executable is on the user's PATH (the user's files)"),
    ("shim.c", r"on_path|self|dir|exe|shim|real|first|target|names\.v\[i\]|line|rc",
     "shims: paths in the user's home and on the user's PATH, profile names, the user's "
     "shell's rc file"),
    ("cache.c", r"cdir", "the cache directory under the user's state directory"),
    ("tls_main.c", r"buf|line",
     "agentjail-tls's __ca and __ca-info: an error about, or the subject, expiry and fingerprint "
     "of, agentjail's own CA in the user's state directory (masked in every jail, §3 step 8)"),
    ("main.c", r"msg", "a constant: the closed standard stream that /dev/null cannot fill"),
    ("cache.c", r"when", "a date strftime made"),
    ("cache.c", r"what", "agentjail's own words, or cmd_shown_workspace: the recorded "
                         "workspace cleaned (fmt_clean)"),
    ("home.c", r"hdir|dir", "the persisted homes' directories under the user's state directory"),
    ("home.c", r"day|t", "a date and age sessfmt_time and sessfmt_ago made"),
    ("log_suggest.c", r"id|ed\.path|ed\.header",
     "log --suggest: the session's UUID, the user's configuration file and the table of it "
     "that is written ([policy], or [agent.NAME] of a built-in or the user's profile)"),
    ("net.c", r"s", "JSON text printed with JSON_ENSURE_ASCII: jansson "
     "escapes every control character and every non-ASCII one"),
    ("net.c", r"q\.proto", "a question's protocol as ctlproto_question_parse took it: 1 to 7 "
     "lowercase letters"),
    ("backend.c", r"text", "a backend's --dry-run text (struct backend_io's text): the user's "
     "policy as JSON (jansson escapes controls), the plan, ruleset or request built from it and "
     "the user's configuration, the command the user typed, the limits agentjail probed, with "
     "agentjail's comments; made before anything runs, never a jail's words"),
    ("backend.c", r"buf", "the remote command's own output (struct backend_io's output), passed "
     "through as a local jail's reaches the terminal (an agent's interface needs its escapes); "
     "never a line of agentjail's"),
    ("doctor.c", r"j", "__doctor-opensandbox: JSON text (jansson escapes controls)"),
    ("tui.c", r"dir", "the TUI's directory, which the user gave"),
    ("tui_view.c", r".*", "curses: every string drawn comes from the model (cmd/tui/tui_model.h: "
                          "\"every string already cleaned\"), filled by tui.c through fmt_clean"),
    ("session.c", r"s\.profile", "a profile name (built in or the user's)"),
    ("session.c", r"text", "help(): its callers pass usage texts"),
    ("runlines.c", r"p->profile", "a profile name (built in or the user's)"),
    ("runlines.c", r"caps->(noun|private_note)", "a backend's capabilities: agentjail's "
     "built-in words (core/backend/caps.c)"),
    ("runlines.c", r"st", "agentjail's words for an exit status"),
    ("quarantine.c", r"t|v\[i\]\.id", "a time and a session id agentjail made"),
    ("connect.c", r".*", "__connect runs inside the jail, on the jail's own stderr"),
    ("review.c", r"raw", "diff into a pipe or a file: the change set's bytes as they are, for "
                         "patch(1) (on a terminal every line goes through fmt_clean instead)"),
    ("review.c", r"r\.s\.id|s->id", "a session id: a UUID agentjail made"),
    ("review.c", r"what|c->how", "agentjail's own words, and numbers"),
    ("review.c", r"name", "a checkpoint name: checked (review_ckpt_name_ok: A-Z a-z 0-9 . _ -) "
                          "or a time strftime made"),
    ("review.c", r"s", "JSON text printed with JSON_ENSURE_ASCII (jansson escapes controls)"),
    ("jails.c", r"v\[i\]\.id", "a session id: a UUID agentjail made"),
    ("jails.c", r"mem", "ps: a size human_size wrote from a number"),
    ("jails.c", r"pcol", "ps: the profile name through fmt_clean, then sessfmt_policy's words"),
    ("jails.c", r"cmd", "ps: the command through sessfmt_argv (which cleans it)"),
    ("jails.c", r"s", "JSON text printed with JSON_ENSURE_ASCII: jansson escapes every control "
     "character and every non-ASCII one"),
]

USED = set()  # the OURS entries that matched something: the others are stale

PRINTERS = {
    # name: (index of the format, or None), (indexes of plain text arguments)
    "printf": (0, ()), "fprintf": (1, ()), "dprintf": (1, ()),
    "vprintf": (0, ()), "vfprintf": (1, ()),
    "fputs": (None, (0,)), "puts": (None, (0,)), "fwrite": (None, (0,)),
    "printw": (0, ()), "wprintw": (1, ()), "mvprintw": (2, ()), "mvwprintw": (3, ()),
    "addstr": (None, (0,)), "addnstr": (None, (0,)), "waddstr": (None, (1,)),
    "waddnstr": (None, (1,)), "mvaddstr": (None, (2,)), "mvaddnstr": (None, (2,)),
    "mvwaddstr": (None, (3,)), "mvwaddnstr": (None, (3,)),
}
# write(fd, buf, n) and fs_write_all(fd, buf, n) count when fd is the terminal's
FD_WRITERS = {"write": 1, "fs_write_all": 1}
TERM_FDS = re.compile(r"^(1|2|STDOUT_FILENO|STDERR_FILENO|fd)$")

STR = r'"(?:[^"\\\n]|\\.)*"'
LIT = re.compile(r"^\s*(?:%s\s*)+$" % STR, re.S)
CONV = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfgGaAcspn%])")


def string_end(s, i):
    """s[i] opens a string or character literal: the index just after it."""
    j = i + 1
    while j < len(s) and s[j] != s[i]:
        j += 2 if s[j] == "\\" else 1
    return j + 1


def strip_comments(src):
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = string_end(src, i)
            out.append(src[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(s, i=0):
    """(index, char, depth after it) of s from i, brackets counted, literals stepped over."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "\"'":
            i = string_end(s, i)
            continue
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
        yield i, c, depth
        i += 1


def close_paren(src, i):
    """i: just after '('; returns the index of the matching ')'."""
    for j, c, depth in scan(src, i):
        if depth == -1:
            return j
    return len(src)


def until_semicolon(s, i):
    """The index of the ';' that ends the statement going on at i."""
    for j, c, depth in scan(s, i):
        if c == ";" and depth == 0:
            return j
    return len(s)


def split_args(s):
    out, start = [], 0
    for i, c, depth in scan(s):
        if c == "," and depth == 0:
            out.append(s[start:i].strip())
            start = i + 1
    if s[start:].strip():
        out.append(s[start:].strip())
    return out


def literal_text(expr):
    return "".join(re.findall(STR, expr))


def string_args(fmt, args):
    """The arguments printed with %s (in order), from a literal format; None if unparsable."""
    out, k = [], 0
    for m in CONV.finditer(bytes(literal_text(fmt), "utf-8").decode("unicode_escape",
                                                                   "replace")):
        flags, width, prec, _, conv = m.groups()
        if conv == "%":
            continue
        if width == "*":
            k += 1
        if prec == "*":
            k += 1
        if k >= len(args):
            return None
        if conv == "s":
            out.append(args[k])
        k += 1
    return out


def functions(src):
    """(start, end) of each top-level brace block: the function bodies."""
    spans, start = [], None
    for i, c, depth in scan(src):
        if c == "{" and depth == 1:
            start = i
        elif c == "}" and depth == 0:
            spans.append((start, i))
    return spans


def unparen(e):
    e = e.strip()
    while e.startswith("(") and close_paren(e, 1) == len(e) - 1:
        e = e[1:-1].strip()
    return e


def split_ternary(e):
    q = -1
    for i, c, depth in scan(e):
        if depth == 0 and c == "?" and q < 0:
            q = i
        elif depth == 0 and c == ":" and q >= 0:
            # the first ':' at depth 0 after the first '?' (nested ?: in the else branch only)
            return e[q + 1:i], e[i + 1:]
    return None


class Checker:
    def __init__(self, fname, src):
        self.fname, self.src = fname, src
        self.spans = functions(src)
        self.findings = []

    def body(self, pos):
        for a, b in self.spans:
            if a <= pos <= b:
                return self.src[a:b + 1]
        return ""

    def ours(self, e):
        flat = re.sub(r"\s+", " ", e)
        for k, (f, rx, _) in enumerate(OURS):
            if (f == "*" or self.fname in f.split("|")) and re.fullmatch(rx, flat):
                USED.add(k)
                return True
        return False

    def clean(self, e, pos, seen=()):
        e = unparen(e)
        e = re.sub(r"^\((?:const\s+)?(?:unsigned\s+)?char\s*\*\)\s*", "", e)
        if not e or LIT.match(e) or e == "NULL":
            return True
        t = split_ternary(e)
        if t:
            return self.clean(t[0], pos, seen) and self.clean(t[1], pos, seen)
        m = re.match(r"^([A-Za-z_]\w*)\s*\(", e)
        whole = m and close_paren(e, m.end()) == len(e) - 1
        if whole and m.group(1) in CLEANERS:
            return True
        if whole and m.group(1) in ("xstrdup", "strdup", "xasprintf"):
            # a copy, or a string formatted from a literal: as clean as what it holds
            args = split_args(e[m.end():-1])
            if m.group(1) != "xasprintf":
                return len(args) == 1 and self.clean(args[0], pos, seen)
            sargs = string_args(args[0], args[1:]) if args and LIT.match(args[0]) else None
            return sargs is not None and all(self.clean(a, pos, seen) for a in sargs)
        if self.ours(e):
            return True
        if re.fullmatch(r"[A-Za-z_]\w*", e) and e not in seen:
            body = self.body(pos)
            # its assignments: "NAME = EXPR;" (declarations included), each must pass
            assigns = [m.end() for m in re.finditer(r"(?<![\w.>])%s\s*=(?!=)" % re.escape(e),
                                                     body)]
            if not assigns:
                return False
            for a in assigns:
                if not self.clean(body[a:until_semicolon(body, a)], pos, seen + (e,)):
                    return False
            return True
        return False

    def report(self, pos, name, expr):
        line = self.src.count("\n", 0, pos) + 1
        self.findings.append("%s:%d: %s prints %s raw: clean it (fmt_clean) or, if a jail can "
                             "never choose it, declare it in tests/helpers/printcheck.py's OURS"
                             % (self.fname, line, name, re.sub(r"\s+", " ", expr)[:80]))

    def run(self):
        names = "|".join(list(PRINTERS) + list(FD_WRITERS))
        for m in re.finditer(r"(?<![\w.>])(%s)\s*\(" % names, self.src):
            name = m.group(1)
            # a declaration or definition of the name itself is not a call
            before = self.src[max(0, m.start() - 40):m.start()]
            if re.search(r"(int|void|size_t|ssize_t|\*)\s*$", before):
                continue
            end = close_paren(self.src, m.end())
            args = split_args(self.src[m.end():end])
            texts = []
            if name in FD_WRITERS:
                if len(args) < 2 or not TERM_FDS.match(args[0]):
                    continue
                texts = [args[FD_WRITERS[name]]]
            else:
                fi, plain = PRINTERS[name]
                texts = [args[i] for i in plain if i < len(args)]
                if fi is not None and fi < len(args):
                    fmt = args[fi]
                    if LIT.match(fmt) and not name.startswith("v"):
                        sargs = string_args(fmt, args[fi + 1:])
                        if sargs is None:
                            self.report(m.start(), name, fmt + " (its arguments do not match)")
                            continue
                        texts += sargs
                    elif not LIT.match(fmt):
                        texts.append(fmt)
            for t in texts:
                if not self.clean(t, m.start()):
                    self.report(m.start(), name, t)
        return self.findings


def main():
    root = sys.argv[1]
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, "src/cmd"))
                   for f in fs if f.endswith(".c"))  # src/cmd/tui/ too
    files += sorted(os.path.join(root, "src", f) for f in os.listdir(os.path.join(root, "src"))
                    if f.endswith(".c"))
    findings = []
    for path in files:
        src = strip_comments(open(path, encoding="utf-8").read())
        findings += Checker(os.path.basename(path), src).run()
    for k, (f, rx, why) in enumerate(OURS):
        if k not in USED:
            findings.append("printcheck.py: OURS entry (%s, %s) matches no print: remove it"
                            % (f, rx))
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
