# Shared by the terminal tests (10-tty.t, 11-signals.t): agentjail wrappers and the pty driver.
# Needs lib.sh sourced first. Sets PTYDRIVE, PYTHON, and have_py when both are there.

PTYDRIVE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../helpers" && pwd)/ptydrive.py
# Debian's python3 (scripts/deps.sh) before whatever PATH offers: a version manager's shim can
# cost a third of a second per start.
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
have_py=
[ -n "$PYTHON" ] && [ -r "$PTYDRIVE" ] && have_py=1

# aj_wrapper WHO [aj_cmd options] — W: a script that execs agentjail as WHO with the fixture's
# environment, passing its own arguments (exec all the way: the script's pid is agentjail's).
_wn=0
aj_wrapper() {
	local who=$1; shift
	aj_cmd "$who" "$@" --
	_wn=$((_wn + 1))
	W=$AJ_TMP/aj-$who-$_wn
	{ printf '#!/bin/bash\nexec'; printf ' %q' "${AJ_CMD[@]}"; printf ' "$@"\n'; } >"$W"
	chmod 0755 "$W"
}

# pd NAME [ptydrive options] STEP… -- CMD… — runs the driver; sets PD (its report), PD_RC and
# PD_TR (the transcript file).
pd() {
	local name=$1; shift
	PD_TR=$AJ_TMP/pd-$name.transcript
	PD_NAME=$name
	PD_DIAGGED=
	PD=$(timeout 90 "$PYTHON" "$PTYDRIVE" --transcript "$PD_TR" "$@" 2>&1)
	PD_RC=$?
}

_pd_diag() { # the driver's report and the transcript, once per run
	if [ -n "$PD_DIAGGED" ]; then
		diag "  (ptydrive run $PD_NAME: see above)"
		return 0
	fi
	PD_DIAGGED=1
	diag "  ptydrive run: $PD_NAME (rc $PD_RC)"
	diag "$(printf '%s\n' "$PD" | grep -v '^record ' | grep -v '^step [0-9]* ok' | sed 's/^/    /' | head -c 3000)"
	[ -r "$PD_TR" ] && diag "  terminal showed (last 1500 bytes):
$(tail -c 1500 "$PD_TR" | cat -v | sed 's/^/    | /')"
}

# pd_ok DESC — every step of the last driver run passed
pd_ok() {
	if [ "$PD_RC" = 0 ] && grep -qx 'result ok' <<<"$PD"; then _tap_result 0 "$1"; return 0; fi
	_tap_result 1 "$1"; _pd_diag; return 1
}

# pd_has LINE DESC — the report holds LINE (exactly)
pd_has() {
	if grep -qxF -- "$1" <<<"$PD"; then _tap_result 0 "$2"; return 0; fi
	_tap_result 1 "$2"; diag "  expected the line: $1"; _pd_diag; return 1
}

# The command's exit status reported by the driver ("" when it did not exit).
pd_exit() { sed -n 's/^exit //p' <<<"$PD" | tail -n1; }

pd_exit_is() { # STATUS DESC
	local got
	got=$(pd_exit)
	if [ "$got" = "$1" ]; then _tap_result 0 "$2"; return 0; fi
	_tap_result 1 "$2"; diag "  exit status: got '${got:-none}', expected $1"; _pd_diag; return 1
}

pd_text_like() { # ERE DESC — a line of the transcript matches
	if grep -qE -- "$1" "$PD_TR" 2>/dev/null; then _tap_result 0 "$2"; return 0; fi
	_tap_result 1 "$2"; diag "  no line of the terminal's output matches /$1/"; _pd_diag; return 1
}
