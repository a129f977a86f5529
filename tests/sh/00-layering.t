#!/usr/bin/perl
# The layering rule of doc/design.md §6, checked on every `#include` line under src/ (and the
# includes of cmd/ from tests/ and bench/). No build and no bwrap: it reads the sources.
#
# What it sees: `#include "…"` and `#include <…>` lines, and (for plan/) calls to a list of
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
	confine => [qw(plan util)],
	session => [qw(plan util)],
	net => [qw(plan util)],
	remote => [qw(plan util)],
	tls => [qw(net plan util)],
	host => [qw(confine plan util)],
	jail => [qw(host confine plan util)],
	diag => [qw(jail host confine session remote plan util)],
	cmd => [qw(diag jail host confine session net remote plan util)],
	main => [qw(cmd diag jail host confine session net remote tls plan util)],
);

# The system headers plan/ may include: none of them declares a system call of consequence
# (file access, processes, mounts, sockets, clocks). <stdio.h> and <stdlib.h> still declare
# fopen and getenv: the call list below covers those.
my %plan_sys = map { $_ => 1 } qw(arpa/inet.h assert.h ctype.h errno.h fnmatch.h idn2.h inttypes.h jansson.h
	limits.h netinet/in.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h strings.h sys/socket.h
	sys/types.h);
# Calls plan/ must not make (outside comments and strings).
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
	return $1 if $rel =~ m{^core/([a-z_]+)/[^/]+$};
	return undef;
}

my @files;
find({wanted => sub { push @files, $File::Find::name if /\.[ch]$/ }, no_chdir => 1}, $src);
@files = sort @files;

my (@loose, @bad, @plan_sys_bad, @plan_call_bad, %edges);
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
		} elsif ($from eq 'plan' && $line =~ /^\s*#\s*include\s*<([^>]+)>/) {
			push @plan_sys_bad, "$rel:$n: <$1>" unless $plan_sys{$1};
		}
	}
	if ($from eq 'plan' && $rel =~ /\.c$/) {
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

print "1..6\n";
ok_list("every source file is in a known folder (src/main.c, src/init_main.c, cmd/, util/, core/FOLDER/)", @loose);
ok_list("every #include \"…\" goes to the same folder or one the rule allows", @bad);
ok_list("plan/ includes only the system headers without system calls of consequence",
	@plan_sys_bad);
ok_list("plan/ calls nothing that reaches the host (open, stat, getenv, time, …)",
	@plan_call_bad);

# No cycle between folders, from the edges actually found (tsort says which edges loop).
my @cycle;
{
	my $in = join('', map { "$_\n" } sort keys %edges);
	my $out = `printf '%s' '$in' | tsort 2>&1 >/dev/null`;
	push @cycle, split /\n/, $out if $? != 0 || $out =~ /loop/;
}
ok_list("no include cycle between folders", @cycle);

# Nothing outside src/main.c and src/cmd/ includes cmd/ (tests, benchmarks, fuzz targets too).
my @cmd_users;
for my $dir (grep { -d } ("$root/tests", "$root/bench")) {
	find({wanted => sub {
		return unless /\.[ch]$/;
		open(my $fh, '<', $_) or return;
		while (my $l = <$fh>) {
			push @cmd_users, "$File::Find::name:$.: $l" =~ s/\n//r
				if $l =~ /^\s*#\s*include\s*"cmd\//;
		}
		close $fh;
	}, no_chdir => 1}, $dir);
}
ok_list("nothing outside src/main.c and src/cmd/ includes cmd/", @cmd_users);
