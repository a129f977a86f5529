#!/usr/bin/env bash
# The seccomp filter is compiled at build time (issue 17, doc/design.md §3): agentjail and its test
# build carry the BPF programs and no libseccomp, so a run never generates a filter. Nor libcurl:
# the remote backend is agentjail-remote (doc/design.md §4b). Nor OpenSSL: TLS inspection is
# agentjail-tls (§4d). What the
# programs hold is checked against libseccomp in tests/unit/test_seccomp_prebuilt.c; that the
# jail enforces them, in 07-seccomp.t and the verify tests.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! command -v nm >/dev/null 2>&1; then
	skip "no libseccomp in the binaries" "nm (binutils) is not installed"
	done_testing
fi
for b in agentjail agentjail-testbuild; do
	syms=$(nm "$AJ_BUILD/$b" 2>&1)
	if [ -z "$syms" ] || printf '%s\n' "$syms" | grep -q 'no symbols'; then
		skip "$b: no libseccomp inside" "$b is stripped"
		continue
	fi
	lib=$(printf '%s\n' "$syms" | grep -E ' (seccomp_init|seccomp_rule_add|seccomp_export_bpf|gen_bpf_generate)$')
	is "$lib" "" "$b: no libseccomp function is linked in (the filter is prebuilt)"
	printf '%s\n' "$syms" | grep -q ' seccomp_prebuilt$'
	ok $? "$b: the prebuilt programs are linked in"
	# libcurl is only in agentjail-remote (doc/design.md §4b): it cannot be linked statically
	curl=$(printf '%s\n' "$syms" | grep -E ' (curl|Curl)_[A-Za-z_]+(@.*)?$' | head -3)
	is "$curl" "" "$b: no libcurl function is linked in or referenced (the remote backend is agentjail-remote)"
	ssl=$(printf '%s\n' "$syms" | grep -E ' (SSL_|EVP_|X509_|OPENSSL_)[A-Za-z_0-9]+(@.*)?$' | head -3)
	is "$ssl" "" "$b: no OpenSSL function is linked in or referenced (TLS inspection is agentjail-tls)"
done
syms=$(nm -D "$AJ_BUILD/agentjail-remote" 2>&1)
printf '%s\n' "$syms" | grep -q ' U curl_easy_perform'
ok $? "agentjail-remote uses libcurl, linked dynamically" || diag "$(printf '%s\n' "$syms" | head -3)"
syms=$(nm -D "$AJ_BUILD/agentjail-tls" 2>&1)
printf '%s\n' "$syms" | grep -q ' U SSL_do_handshake'
ok $? "agentjail-tls uses OpenSSL, linked dynamically" || diag "$(printf '%s\n' "$syms" | head -3)"

# agentjail and its test build are static PIEs (no loader, no libc.so or libm.so pages: issue 17
# measured 4.4 MB peak RSS dynamic, 3.3 MB static); a sanitised build cannot be.
for b in agentjail agentjail-testbuild; do
	if [ "${AJ_SAN:-}" = 1 ]; then
		skip "$b is a static PIE" "a sanitised build is linked dynamically"
	elif ! command -v readelf >/dev/null 2>&1; then
		skip "$b is a static PIE" "readelf (binutils) is not installed"
	else
		hdr=$(readelf -lh "$AJ_BUILD/$b" 2>&1)
		printf '%s\n' "$hdr" | grep -q 'Type: *DYN' && ! printf '%s\n' "$hdr" | grep -q INTERP
		ok $? "$b is a static PIE (position-independent, no program interpreter)" ||
			diag "$(printf '%s\n' "$hdr" | grep -E 'Type:|INTERP')"
	fi
done

# A jail still starts with the filter in force, as root and as the user.
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_run "$who" -- run -- "$P" unshare-user
	probe_denied "$who: the prebuilt filter refuses unshare in the jail" 1
	# the test build's variant, with its sentinel rewritten to the errno asked for
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_SECCOMP_ERRNO=4000 -- run -- "$P" unshare-user
	probe_denied "$who: the test build's filter answers with its distinctive errno" 4000
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_SECCOMP_ERRNO=38 -- run -- /bin/true
	isnt "$RC" 0 "$who: the test build refuses ENOSYS as its distinctive errno"
done
done_testing
