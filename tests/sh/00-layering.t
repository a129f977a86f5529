#!/usr/bin/perl
# The layering rule of doc/design.md §6, checked on every `#include` line under src/ (and the
# includes of cmd/ from tests/ and bench/). No build and no bwrap: it reads the sources.
#
# What it sees: `#include "…"` and `#include <…>` lines, and (for a pure file) calls to a list of
# functions that reach the host. What it cannot see: a call through a function pointer, a
# declaration typed by hand instead of included, a syscall reached inside a libc function it does
# not list, or a macro that expands to one. A line that must break the call rule says why with a
# `layering:` comment on the same line.
#
# AJ_LAYER_SRC=DIR checks another tree (used to see the test fail on a planted violation).
use strict;
use warnings;
use File::Find;
use File::Basename qw(dirname);

my $root = $ENV{AJ_SRC} // dirname(dirname(dirname(__FILE__)));
my $src = $ENV{AJ_LAYER_SRC} // "$root/src";

# Which folders each folder may include (its own is always allowed). Acyclic by construction:
# each folder lists only folders above it in this table.
my %allowed = (
	util => [],
	plan => [qw(util)],
	config => [qw(plan util)],
	confine => [qw(plan util)],
	net => [qw(plan util)],
	session => [qw(net plan util)],
	review => [qw(plan util)], # a --fs review session's change set on disk
	tls => [qw(net plan util)], # agentjail-tls's OpenSSL side
	host => [qw(confine plan util)],
	jail => [qw(host confine net plan util)], # net: agentjail-tls's messages (tlshelper.c)
	backend => [qw(jail host confine config plan util)], # the interface (backend.h) and what
							      # the backends share
	# one backend each: the interface and what is below it, never another backend
	'backend/bwrap' => [qw(backend jail host confine config net review plan util)],
	'backend/landlock' => [qw(backend jail host confine config net plan util)],
	'backend/remote' => [qw(backend jail host confine config net plan util)],
	diag => [qw(backend/bwrap backend/landlock backend/remote backend jail host confine session
		config net review plan util)],
	# the commands: of the backends, the interface only (checked below, file by file)
	cmd => [qw(backend diag jail host confine session config net review plan util)],
	main => [qw(cmd backend diag jail host confine session config net tls review plan util)],
);

# Purity is a property of a file (doc/design.md §6): every file of plan/, and these. A pure file
# includes, of ours, only util/ and pure headers (plan/'s, a listed file's header), and of the
# system only the headers below; it calls none of the functions that reach the host.
my %pure_files = map { $_ => 1 } qw(
	config/toml.c config/config.c config/config_edit.c config/profile_user.c config/osb_settings.c
	net/netevent.c net/netsuggest.c net/httpreq.c net/socks5.c net/dnsmsg.c net/tlshello.c
	net/firstbytes.c net/netsynth.c net/httpflow.c net/agentproto.c net/knownhosts.c
	net/inspectmsg.c
	cmd/tui/tui_model.c
	backend/bwrap/bwrapmsg.c backend/bwrap/denial.c backend/bwrap/cmdwords.c
	backend/landlock/llplan.c
	backend/remote/osb_plan.c backend/remote/osb_stream.c backend/remote/osb_names.c
);
# a header is pure when its folder is plan/ or util/, or when its .c is listed (or it is listed)
sub is_pure {
	my ($rel) = @_;
	return 1 if $rel =~ m{^core/plan/};
	(my $short = $rel) =~ s{^core/}{};
	(my $c = $short) =~ s{\.h$}{.c};
	return $pure_files{$short} || $pure_files{$c};
}

# The system headers a pure file may include: none of them declares a system call of consequence
# (file access, processes, mounts, sockets, clocks). <stdio.h> and <stdlib.h> still declare
# fopen and getenv: the call list below covers those.
my %plan_sys = map { $_ => 1 } qw(arpa/inet.h assert.h ctype.h errno.h fnmatch.h idn2.h inttypes.h jansson.h
	limits.h netinet/in.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h strings.h sys/socket.h
	sys/types.h);
# Calls a pure file must not make (outside comments and strings).
my $plan_calls = qr/(?<![\w.>])(fopen|freopen|popen|open|openat|openat2|creat|read|write|pread|
	pwrite|close|stat|lstat|fstat|fstatat|statx|access|faccessat|getenv|secure_getenv|setenv|
	system|fork|vfork|clone|execve|execv|execvp|execl|execlp|posix_spawn|kill|mount|umount2|
	syscall|ioctl|unlink|unlinkat|rename|renameat|renameat2|mkdir|mkdirat|rmdir|opendir|
	fdopendir|readdir|readlink|readlinkat|realpath|chdir|getcwd|getuid|geteuid|getgid|getpid|
	time|clock_gettime|gettimeofday|getrandom|socket|connect|prctl|chmod|chown|dup2|pipe)\s*\(/x;

sub folder_of {
	my ($rel) = @_; # relative to src/
	return 'main' if $rel eq 'main.c' || $rel eq 'init_main.c' || $rel eq 'remote_main.c' ||
		$rel eq 'tls_main.c'; # the programs
	return $1 if $rel =~ m{^(cmd|util)/[^/]+$};
	return 'cmd' if $rel =~ m{^cmd/tui/[^/]+$}; # the TUI is a command
	return "backend/$1" if $rel =~ m{^core/backend/([a-z_]+)/[^/]+$};
	return 'backend' if $rel =~ m{^core/backend/[^/]+$}; # the interface
	return $1 if $rel =~ m{^core/([a-z_]+)/[^/]+$};
	return undef;
}

my @files;
find({wanted => sub { push @files, $File::Find::name if /\.[ch]$/ }, no_chdir => 1}, $src);
@files = sort @files;

my (@loose, @bad, @plan_sys_bad, @plan_call_bad, %edges, @cross, @insides);
for my $f (@files) {
	(my $rel = $f) =~ s{^\Q$src\E/}{};
	my $from = folder_of($rel);
	if (!defined $from || !exists $allowed{$from}) {
		push @loose, $rel;
		next;
	}
	open(my $fh, '<', $f) or die "$f: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	my $pure = is_pure($rel);
	my $n = 0;
	for my $line (split /\n/, $text) {
		$n++;
		if ($line =~ /^\s*#\s*include\s*"([^"]+)"/) {
			my $inc = $1;
			my $to = $inc =~ m{/} ? folder_of($inc) : $from; # "x.h": next to the file
			$to //= "?($inc)";
			if ($to ne $from && !grep { $_ eq $to } @{$allowed{$from}}) {
				push @bad, "$rel:$n: $from/ includes \"$inc\" ($to/)";
			}
			$edges{"$from $to"} = 1 if $to ne $from;
			# backends do not include each other; the commands include the interface only
			push @cross, "$rel:$n: $from/ includes \"$inc\" ($to/)"
				if $from =~ m{^backend/} && $to =~ m{^backend/} && $to ne $from;
			push @insides, "$rel:$n: $from/ includes \"$inc\""
				if ($from eq 'cmd' || $from eq 'main') && $inc =~ m{^core/backend/}
				&& $inc ne 'core/backend/backend.h';
			my $increl = $inc =~ m{/} ? $inc : dirname($rel) . "/$inc";
			push @plan_sys_bad, "$rel:$n: \"$inc\" (not a pure header)"
				if $pure && $increl !~ m{^util/} && !is_pure($increl);
		} elsif ($pure && $line =~ /^\s*#\s*include\s*<([^>]+)>/) {
			push @plan_sys_bad, "$rel:$n: <$1>" unless $plan_sys{$1};
		}
	}
	if ($pure && $rel =~ /\.c$/) {
		# blank out comments and string literals, keeping the line numbers
		(my $code = $text) =~ s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'}{
			my $m = $&; (my $keep = $m) =~ tr/\n//cd;
			my $c = substr($m, 0, 2) eq '/*' && $m =~ /layering:/ ? ' LAYERING_OK ' : '';
			$c . $keep
		}gse;
		my $ln = 0;
		for my $line (split /\n/, $code) {
			$ln++;
			next if $line =~ /LAYERING_OK/;
			push @plan_call_bad, "$rel:$ln: calls $1()" if $line =~ $plan_calls;
		}
	}
}

my $t = 0;
sub ok_list {
	my ($name, @problems) = @_;
	$t++;
	print(@problems ? "not ok $t - $name\n" : "ok $t - $name\n");
	print "#   $_\n" for @problems;
}

my @plants = (
	# [file to plant in, the line, the check that must fail, what it shows]
	['core/backend/landlock/landlock.c', '#include "core/backend/bwrap/launch.h"', 6,
	 "one backend's header planted in another is rejected"],
	['core/backend/remote/osbrun.c', '#include "core/backend/landlock/llplan.h"', 6,
	 "… from the remote backend too"],
	['cmd/run.c', '#include "core/backend/bwrap/launch.h"', 7,
	 "a backend's header planted in cmd/ is rejected"],
	['cmd/verify.c', '#include "core/backend/report.h"', 7,
	 "… and so is the interface folder's private report.h"],
	['core/config/toml.c', '#include <unistd.h>', 3,
	 "a system header with system calls planted in a pure file is rejected"],
);
print "1..", 8 + (defined $ENV{AJ_LAYER_SRC} ? 0 : scalar @plants), "\n";
ok_list("every source file is in a known folder (src/main.c, src/init_main.c, cmd/, util/, core/FOLDER/, "
	. "core/backend/NAME/)", @loose);
ok_list("every #include \"…\" goes to the same folder or one the rule allows", @bad);
ok_list("a pure file (plan/ and the list) includes only pure headers and the system headers "
	. "without system calls of consequence", @plan_sys_bad);
ok_list("a pure file (plan/ and the list) calls nothing that reaches the host (open, stat, "
	. "getenv, time, …)", @plan_call_bad);

# No cycle between folders, from the edges actually found (tsort says which edges loop).
my @cycle;
{
	my $in = join('', map { "$_\n" } sort keys %edges);
	my $out = `printf '%s' '$in' | tsort 2>&1 >/dev/null`;
	push @cycle, split /\n/, $out if $? != 0 || $out =~ /loop/;
}
ok_list("no include cycle between folders", @cycle);
ok_list("no backend includes another backend's files (core/backend/NAME/)", @cross);
ok_list("cmd/ and the mains include of the backends the interface only (core/backend/backend.h)",
	@insides);

# Nothing outside src/main.c and src/cmd/ includes cmd/ (tests, benchmarks, fuzz targets too), but
# a pure header there (the TUI's model, for its unit test).
my @cmd_users;
for my $dir (grep { -d } ("$root/tests", "$root/bench")) {
	find({wanted => sub {
		return unless /\.[ch]$/;
		open(my $fh, '<', $_) or return;
		while (my $l = <$fh>) {
			push @cmd_users, "$File::Find::name:$.: $l" =~ s/\n//r
				if $l =~ /^\s*#\s*include\s*"(cmd\/[^"]+)"/ && !is_pure($1);
		}
		close $fh;
	}, no_chdir => 1}, $dir);
}
ok_list("nothing outside src/main.c and src/cmd/ includes cmd/ (but a pure header)", @cmd_users);

# The check is seen failing: each violation above planted in a copy of the tree, this file run on
# it (AJ_LAYER_SRC), the named check must say "not ok" and name the planted line.
exit 0 if defined $ENV{AJ_LAYER_SRC};
use File::Temp qw(tempdir);
for my $p (@plants) {
	my ($file, $line, $check, $name) = @$p;
	my $tmp = tempdir(CLEANUP => 1);
	system('cp', '-r', $src, "$tmp/src") == 0 or die "cp: $?";
	my $f = "$tmp/src/$file";
	open(my $in, '<', $f) or die "$f: $!";
	my $text = do { local $/; <$in> };
	close $in;
	open(my $out, '>', $f) or die "$f: $!";
	print $out "$line\n$text";
	close $out;
	my $res = `AJ_LAYER_SRC='$tmp/src' AJ_SRC='$root' perl '$0' 2>&1`;
	my $failed = $res =~ /^not ok $check - .*\n(?:#.*\n)*#   \Q$file\E:1: /m;
	ok_list("$name ($file: $line)", $failed ? () : ("check $check did not fail:", split /\n/, $res));
}
