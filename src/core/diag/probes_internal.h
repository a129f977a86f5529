/* probes_internal.h: private to src/core/diag/probes*.c (the public header is probes.h). The
 * system and project headers the probe files use, the syscall numbers old headers lack, and
 * the helpers and probe functions one file defines and another uses. */
#pragma once

#include "core/diag/probes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/plan/bwrap_argv.h"
#include "core/host/gitinfo.h"
#include "core/plan/gitprotect.h"
#include "core/host/gitscan.h"
#include "core/confine/landlock.h"
#include "core/plan/homekeep.h"
#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

extern char **environ;

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define BAIT_PREFIX "agentjail-verify-"

/* probes_util.c */
__attribute__((format(printf, 3, 4))) void pr_set(struct probe_out *o, enum probe_result r,
						   const char *fmt, ...);
const char *pr_ename(int e);
void pr_judge(struct probe_out *o, const char *what, long rc, int err, bool filter_enosys);
void pr_judge_fails(struct probe_out *o, const char *what, long rc, int err);
char *pr_read_all(const char *path);
bool pr_status_field(const char *name, char *val, size_t n);
int pr_try_create(const char *dir, const char *token);
bool pr_is_dir(const char *p);
bool pr_exists(const char *p);
/* The address of a Unix socket NAME (abstract: in the abstract namespace), its length in *len;
 * -1 with ENAMETOOLONG when it does not fit. */
int pr_unix_addr(const char *name, bool abstract, struct sockaddr_un *sa, socklen_t *len);
const char *pr_writable_by_policy(const struct probe_ctx *c, const char *p);
const char *pr_visible_by_policy(const struct probe_ctx *c, const char *p);
void pr_proc_names(pid_t pid, char *argv0, size_t n0, char *comm, size_t nc);
bool pr_proc_has_marker(pid_t pid, const char *marker);
bool pr_is_dead(pid_t pid);
int pr_find_marked(const char *marker, pid_t *pids, int max, int *seen);
void pr_sleep_ms(long ms);
pid_t pr_spawn_sleeper(void);
void pr_reap(pid_t pid);

/* probes_priv.c */
void p_caps(const struct probe_ctx *c, struct probe_out *o);
void p_nnp(const struct probe_ctx *c, struct probe_out *o);
void p_seccomp(const struct probe_ctx *c, struct probe_out *o);
void p_landlock(const struct probe_ctx *c, struct probe_out *o);
void p_setuid_copy(const struct probe_ctx *c, struct probe_out *o);

/* probes_setid.c */
void p_setid_chmod(const struct probe_ctx *c, struct probe_out *o);
void p_setid_fchmodat(const struct probe_ctx *c, struct probe_out *o);
void p_setid_open(const struct probe_ctx *c, struct probe_out *o);
void p_setid_mknod(const struct probe_ctx *c, struct probe_out *o);

/* probes_tty.c */
void p_tiocsti(const struct probe_ctx *c, struct probe_out *o);
void p_tiocsti_high(const struct probe_ctx *c, struct probe_out *o);
void p_tioclinux(const struct probe_ctx *c, struct probe_out *o);
void p_tioclinux_high(const struct probe_ctx *c, struct probe_out *o);
void p_tiocsti_i386(const struct probe_ctx *c, struct probe_out *o);

/* probes_ns.c */
void p_unshare_user(const struct probe_ctx *c, struct probe_out *o);
void p_unshare_mnt(const struct probe_ctx *c, struct probe_out *o);
void p_unshare_net(const struct probe_ctx *c, struct probe_out *o);
void p_clone_newuser(const struct probe_ctx *c, struct probe_out *o);
void p_clone3_newuser(const struct probe_ctx *c, struct probe_out *o);
void p_setns(const struct probe_ctx *c, struct probe_out *o);
void p_chroot(const struct probe_ctx *c, struct probe_out *o);

/* probes_mountapi.c */
bool pr_scratch_target(const struct probe_ctx *c, struct probe_out *o);
void p_mount(const struct probe_ctx *c, struct probe_out *o);
void p_umount2(const struct probe_ctx *c, struct probe_out *o);
void p_pivot_root(const struct probe_ctx *c, struct probe_out *o);
void p_open_tree(const struct probe_ctx *c, struct probe_out *o);
void p_move_mount(const struct probe_ctx *c, struct probe_out *o);
void p_fsopen(const struct probe_ctx *c, struct probe_out *o);
void p_fsconfig(const struct probe_ctx *c, struct probe_out *o);
void p_fsmount(const struct probe_ctx *c, struct probe_out *o);
void p_fspick(const struct probe_ctx *c, struct probe_out *o);
void p_mount_setattr(const struct probe_ctx *c, struct probe_out *o);

/* probes_kernel.c */
void p_keyctl(const struct probe_ctx *c, struct probe_out *o);
void p_add_key(const struct probe_ctx *c, struct probe_out *o);
void p_request_key(const struct probe_ctx *c, struct probe_out *o);
void p_bpf(const struct probe_ctx *c, struct probe_out *o);
void p_perf_event_open(const struct probe_ctx *c, struct probe_out *o);
void p_userfaultfd(const struct probe_ctx *c, struct probe_out *o);
void p_io_uring(const struct probe_ctx *c, struct probe_out *o);
void p_personality(const struct probe_ctx *c, struct probe_out *o);
void p_open_by_handle(const struct probe_ctx *c, struct probe_out *o);
void p_init_module(const struct probe_ctx *c, struct probe_out *o);
void p_finit_module(const struct probe_ctx *c, struct probe_out *o);
void p_kexec_load(const struct probe_ctx *c, struct probe_out *o);
void p_af_vsock(const struct probe_ctx *c, struct probe_out *o);
void p_syslog(const struct probe_ctx *c, struct probe_out *o);

/* probes_ptrace.c */
void p_ptrace_child(const struct probe_ctx *c, struct probe_out *o);
void p_vm_readv_child(const struct probe_ctx *c, struct probe_out *o);
void p_ptrace_pid1(const struct probe_ctx *c, struct probe_out *o);
void p_vm_readv_pid1(const struct probe_ctx *c, struct probe_out *o);
void p_pid1_mem(const struct probe_ctx *c, struct probe_out *o);

/* probes_proc.c */
void p_pid_init(const struct probe_ctx *c, struct probe_out *o);
void p_sentinel_hidden(const struct probe_ctx *c, struct probe_out *o);
void p_sentinel_signal(const struct probe_ctx *c, struct probe_out *o);
void p_orphan(const struct probe_ctx *c, struct probe_out *o);
void p_fds(const struct probe_ctx *c, struct probe_out *o);
void p_env_bait(const struct probe_ctx *c, struct probe_out *o);
void p_env_forbidden(const struct probe_ctx *c, struct probe_out *o);
void p_proc_sys(const struct probe_ctx *c, struct probe_out *o);
void p_core_pattern(const struct probe_ctx *c, struct probe_out *o);
void p_sysrq(const struct probe_ctx *c, struct probe_out *o);
void p_kernel_info(const struct probe_ctx *c, struct probe_out *o);

/* probes_mounts.c */
/* One line of /proc/self/mountinfo, unescaped. */
struct mnt_entry {
	char root[PATH_MAX];
	char point[PATH_MAX];
	char opts[256];
	char fstype[64];
};

bool pr_mnt_next(const char **p, struct mnt_entry *m);
bool pr_in_list(const char *s, const char *const *l);
/* the device nodes a jail may have bound in /dev */
extern const char *const pr_dev_nodes[];
/* a list in a verdict names at most LIST_MAX entries, then "(+N more)" */
#define LIST_MAX 5
void pr_list_add(struct strbuf *b, int *n, const char *s);
void p_mounts_rw(const struct probe_ctx *c, struct probe_out *o);
void p_mounts_nosuid(const struct probe_ctx *c, struct probe_out *o);
void p_mounts_nodev(const struct probe_ctx *c, struct probe_out *o);

/* probes_fs.c */
void p_write_usr(const struct probe_ctx *c, struct probe_out *o);
void p_write_etc(const struct probe_ctx *c, struct probe_out *o);
void p_write_root(const struct probe_ctx *c, struct probe_out *o);
void p_write_home_parent(const struct probe_ctx *c, struct probe_out *o);
void p_workspace(const struct probe_ctx *c, struct probe_out *o);
void p_protected(const struct probe_ctx *c, struct probe_out *o);
void p_canary(const struct probe_ctx *c, struct probe_out *o);
void p_ssh(const struct probe_ctx *c, struct probe_out *o);
void p_shadow(const struct probe_ctx *c, struct probe_out *o);
void p_hardlink(const struct probe_ctx *c, struct probe_out *o);
void p_mknod(const struct probe_ctx *c, struct probe_out *o);
void p_git_rename(const struct probe_ctx *c, struct probe_out *o);
void p_git_metadata(const struct probe_ctx *c, struct probe_out *o);
void p_dev_minimal(const struct probe_ctx *c, struct probe_out *o);

/* probes_net.c */
void p_unix_run(const struct probe_ctx *c, struct probe_out *o);
void p_unix_tmp(const struct probe_ctx *c, struct probe_out *o);
void p_abstract(const struct probe_ctx *c, struct probe_out *o);
void p_loopback_tcp(const struct probe_ctx *c, struct probe_out *o);
void p_egress4(const struct probe_ctx *c, struct probe_out *o);
void p_egress6(const struct probe_ctx *c, struct probe_out *o);
/* probes_netallow.c */
void p_raw_tcp(const struct probe_ctx *c, struct probe_out *o);
void p_dns_stub(const struct probe_ctx *c, struct probe_out *o);
void p_capture(const struct probe_ctx *c, struct probe_out *o);
void p_sni_tunnel(const struct probe_ctx *c, struct probe_out *o);
void p_sni_capture(const struct probe_ctx *c, struct probe_out *o);
void p_links(const struct probe_ctx *c, struct probe_out *o);
