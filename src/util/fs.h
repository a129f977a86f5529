/* fs: small filesystem helpers shared by modules (the few util pieces that make syscalls). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: every missing component of the absolute path `dir` is created with `mode`
 * (existing ones are left as they are). 0, or -1 with errno set and, when failed is not NULL,
 * *failed the component that could not be made (free it). */
int fs_mkdirs(const char *dir, mode_t mode, char **failed);

/* agentjail's own binary as realpath("/proc/self/exe") names it, found once per process: the
 * kernel's name for it (absolute, no links, no "." or "..") when a stat shows it is the same
 * file, else realpath's walk (a link and every component read). A new string, or NULL with
 * errno. */
char *fs_self_exe(void);

/* Read up to n-1 bytes of a file into buf, NUL-terminated (a /proc file, a canary). Bytes read,
 * or -1 with errno. */
ssize_t fs_read_small(const char *path, char *buf, size_t n);

/* Open the absolute path `path` with `flags` (O_PATH, O_DIRECTORY…; O_CLOEXEC is added) without
 * following a symlink in any component, the last one included. An fd, or -1 with errno (ELOOP
 * when a component is a symlink; with O_PATH, a trailing symlink may be returned itself:
 * such callers check the type). */
int fs_open_nofollow(const char *path, int flags);
/* Write all n bytes (retrying short writes and EINTR). 0, or -1 with errno. */
int fs_write_all(int fd, const void *buf, size_t n);

/* Remove a directory tree (not following symlinks, not crossing mounts). 0, or -1 (errno). */
int fs_remove_tree(const char *dir);

/* The directory holding rel (a relative path) inside the directory top, opened through real
 * directories only, each component with O_NOFOLLOW (when make, a missing one is made with
 * `mode`); *base points at rel's last component. -1 with errno: ELOOP or ENOTDIR when a
 * component is a symlink or not a directory, EINVAL for an empty, "." or ".." component or an
 * empty last one. The caller's names are checked before: this is the last line. */
int fs_open_parent(int top, const char *rel, bool make, mode_t mode, const char **base);
