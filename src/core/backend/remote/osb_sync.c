/* osb_sync: the workspace to a sandbox and its changes back (osb_sync.h). */
#include "core/backend/remote/osb_sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/backend/remote/osb_names.h"
#include "core/backend/remote/osb_plan.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define UP_NAME OSB_UP_NAME
/* a service cannot make us hold an unbounded listing */
#define LIST_MAX 1000000

void osb_manifest_free(struct osb_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].rel);
	free(m->v);
	memset(m, 0, sizeof *m);
}

void osb_pull_report_free(struct osb_pull_report *r)
{
	strv_free(&r->written);
	strv_free(&r->protected_);
	strv_free(&r->conflicts);
	strv_free(&r->skipped);
}

static int hash_fd(int fd, uint8_t out[32])
{
	struct sha256 c;
	sha256_init(&c);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		sha256_update(&c, buf, (size_t)n);
	}
	sha256_final(&c, out);
	return 0;
}

/* Run argv in dir with stdout to out_fd (-1: /dev/null), stdin from in_fd (-1: /dev/null). */
static int run_tool(char *const argv[], const char *dir, int in_fd, int out_fd, struct err *e)
{
	pid_t p = fork();
	if (p < 0)
		return err_set(e, errno, argv[0], "cannot fork");
	if (p == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (chdir(dir) < 0 || nul < 0 || dup2(in_fd >= 0 ? in_fd : nul, 0) < 0 ||
		    dup2(out_fd >= 0 ? out_fd : nul, 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return err_set(e, errno, argv[0], "cannot wait for it");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return err_set(e, 0, dir, "%s failed (status %d)", argv[0],
			       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

/* NUL-separated names into v. */
static void split_nul(const char *buf, size_t n, struct strv *v)
{
	for (size_t i = 0; i < n;) {
		size_t l = strnlen(buf + i, n - i);
		if (l)
			strv_push_take(v, xstrndup(buf + i, l));
		i += l + 1;
	}
}

static void walk(const char *ws, const char *rel, struct strv *out, int depth)
{
	if (depth > 64)
		return;
	_cleanup_free_ char *dir = rel[0] ? path_join(ws, rel) : xstrdup(ws);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (!rel[0] && !strcmp(de->d_name, ".git")))
			continue;
		_cleanup_free_ char *r = rel[0] ? xasprintf("%s/%s", rel, de->d_name)
						: xstrdup(de->d_name);
		_cleanup_free_ char *full = path_join(ws, r);
		struct stat st;
		if (lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(ws, r, out, depth + 1);
		else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			strv_push(out, r);
	}
	closedir(d);
}

/* The workspace's files, relative: git's view when it is a repository. */
static int list_files(const char *ws, struct strv *out, struct err *e)
{
	_cleanup_free_ char *gitdir = path_join(ws, ".git");
	struct stat st;
	if (lstat(gitdir, &st) == 0) {
		char tmpl[] = "/tmp/agentjail-ls.XXXXXX";
		_cleanup_close_ int fd = mkstemp(tmpl);
		if (fd < 0)
			return err_set(e, errno, tmpl, "cannot create a temporary file");
		(void)unlink(tmpl);
		/* git reads only .gitignore files here: no fsmonitor, no hooks run by ls-files */
		char *argv[] = {"git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
				"ls-files", "-z", "-c", "-o", "--exclude-standard", NULL};
		if (run_tool(argv, ws, -1, fd, e) < 0) {
			err_hint(e, "the workspace is a git repository: `git ls-files` lists what "
				    "is uploaded");
			return -1;
		}
		off_t len = lseek(fd, 0, SEEK_END);
		if (len < 0 || lseek(fd, 0, SEEK_SET) < 0)
			return err_set(e, errno, tmpl, "cannot read git's list");
		_cleanup_free_ char *buf = xmalloc((size_t)len + 1);
		size_t got = 0;
		while (got < (size_t)len) {
			ssize_t n = read(fd, buf + got, (size_t)len - got);
			if (n <= 0)
				return err_set(e, errno, tmpl, "cannot read git's list");
			got += (size_t)n;
		}
		split_nul(buf, got, out);
		return 0;
	}
	walk(ws, "", out, 0);
	return 0;
}

int osb_pack(const char *ws, uint64_t max, const char *archive, struct osb_manifest *m,
	     struct err *e)
{
	memset(m, 0, sizeof *m);
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (list_files(ws, &names, e) < 0)
		return -1;
	struct strbuf list = STRBUF_INIT;
	m->v = xcalloc(names.n ? names.n : 1, sizeof *m->v);
	for (size_t i = 0; i < names.n; i++) {
		const char *rel = names.v[i];
		if (!strncmp(rel, ".git/", 5) || !strcmp(rel, UP_NAME))
			continue;
		_cleanup_free_ char *full = path_join(ws, rel);
		struct stat st;
		if (lstat(full, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue; /* deleted but still in git's index, or a submodule */
		struct osb_file *f = &m->v[m->n];
		f->rel = xstrdup(rel);
		f->size = (uint64_t)st.st_size;
		f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		f->mode = st.st_mode;
		f->symlink = S_ISLNK(st.st_mode);
		if (!f->symlink) {
			_cleanup_close_ int fd = fs_open_nofollow(full, O_RDONLY | O_NONBLOCK);
			if (fd < 0 || hash_fd(fd, f->sha) < 0) {
				free(f->rel);
				sb_free(&list);
				osb_manifest_free(m);
				return err_set(e, errno, full, "cannot read this file to upload it");
			}
			m->bytes += f->size;
		}
		m->n++;
		sb_addn(&list, rel, strlen(rel) + 1);
		if (m->bytes > max) {
			sb_free(&list);
			uint64_t b = m->bytes;
			osb_manifest_free(m);
			err_set(e, EFBIG, ws, "the workspace is larger than the upload limit (over "
					      "%llu MiB, the limit is %llu MiB)",
				(unsigned long long)(b >> 20), (unsigned long long)(max >> 20));
			err_hint(e, "leave build outputs out with .gitignore, or raise [opensandbox] "
				    "sync_max");
			return -1;
		}
	}
	char tmpl[] = "/tmp/agentjail-tar.XXXXXX";
	_cleanup_close_ int lf = mkstemp(tmpl);
	if (lf < 0) {
		sb_free(&list);
		return err_set(e, errno, tmpl, "cannot create a temporary file");
	}
	(void)unlink(tmpl);
	int rc = fs_write_all(lf, list.s ? list.s : "", list.len);
	sb_free(&list);
	if (rc < 0 || lseek(lf, 0, SEEK_SET) < 0)
		return err_set(e, errno, tmpl, "cannot write the file list");
	char *argv[] = {"tar", "--create", "--file", (char *)archive, "--null", "--no-recursion",
			"--files-from", "-", NULL};
	if (run_tool(argv, ws, lf, -1, e) < 0) {
		osb_manifest_free(m);
		return -1;
	}
	return 0;
}

/* A helper command in the sandbox; its stdout lines into out when out is not NULL. */
struct lines {
	struct strv *out;
	struct strbuf err;
};

static int on_line(void *arg, const struct osb_event *ev)
{
	struct lines *l = arg;
	if (ev->type == OSB_EV_STDOUT && l->out && l->out->n >= LIST_MAX)
		return -1;
	if (ev->type == OSB_EV_STDOUT && l->out && ev->text)
		strv_push(l->out, !strcmp(ev->text, "\n") ? "" : ev->text);
	if (ev->type == OSB_EV_STDERR && ev->text && l->err.len < 2000)
		sb_addf(&l->err, "%s%s", l->err.len ? "; " : "", ev->text);
	return 0;
}

static int helper(struct osb_client *c, const char *cmd, const char *workdir, struct strv *out,
		  struct err *e)
{
	struct lines l = {out, STRBUF_INIT};
	_cleanup_free_ char *id = NULL;
	_cleanup_free_ char *why = NULL;
	int status = 0;
	int rc = osb_command(c, cmd, workdir, on_line, &l, &id, &status, &why, e);
	if (rc < 0 && out && out->n >= LIST_MAX)
		rc = err_set(e, E2BIG, workdir, "the sandbox listed more than %d files", LIST_MAX);
	if (rc == 0 && status != 0)
		rc = err_set(e, 0, workdir, "in the sandbox, `%.60s…` failed (status %d): %.300s",
			     cmd, status, sb_str(&l.err));
	sb_free(&l.err);
	return rc;
}

int osb_push(struct osb_client *c, const char *archive, const char *workdir, struct err *e)
{
	_cleanup_free_ char *dst = xasprintf("%s/%s", workdir, UP_NAME);
	if (osb_upload(c, dst, archive, 0600, e) < 0) {
		err_wrap(e, "uploading the workspace");
		return -1;
	}
	if (helper(c, "tar -xf " UP_NAME " --no-same-owner --no-same-permissions 2>&1 >/dev/null"
		      " && rm -f " UP_NAME,
		   workdir, NULL, e) < 0) {
		err_wrap(e, "unpacking the workspace in the sandbox");
		return -1;
	}
	return 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp((*(const struct osb_file *const *)a)->rel,
		      (*(const struct osb_file *const *)b)->rel);
}

/* The manifest's file rel, from idx (its files sorted by name), or NULL. */
static const struct osb_file *find(struct osb_file *const *idx, size_t n, const char *rel)
{
	struct osb_file key = {.rel = (char *)rel};
	const struct osb_file *kp = &key;
	struct osb_file *const *f = bsearch(&kp, idx, n, sizeof *idx, cmp_file);
	return f ? *f : NULL;
}

/* Whether rel is in a directory that git here would take for a git dir: D/config, D/hooks/…
 * (osb_exec_dirs) with a D/HEAD in the workspace. The listing's own HEADs are osb_names'. */
static bool gitdir_here(int wsfd, const char *rel)
{
	size_t lens[8];
	size_t k = osb_exec_dirs(rel, lens, 8);
	for (size_t i = 0; i < k; i++) {
		_cleanup_free_ char *head = lens[i] ? xasprintf("%.*s/HEAD", (int)lens[i], rel)
						    : xstrdup("HEAD");
		struct stat st;
		if (fstatat(wsfd, head, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true;
	}
	return false;
}

struct todo {
	char *rel;
	mode_t mode;
	uint8_t sha[32];
};

static void remove_staging(int wsfd, const char *name, size_t n)
{
	int sfd = openat(wsfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t i = 0; sfd >= 0 && i < n; i++) {
		char f[32];
		snprintf(f, sizeof f, "%zu", i);
		(void)unlinkat(sfd, f, 0);
	}
	if (sfd >= 0)
		close(sfd);
	(void)unlinkat(wsfd, name, AT_REMOVEDIR);
}

/* What the listing says, against the manifest and the workspace: the files to bring back into
 * todo (*nt of them), everything else into the report. */
static void judge(const struct osb_listing *L, const struct osb_manifest *m, int wsfd,
		  const char *ws, struct todo *todo, size_t *nt, struct osb_pull_report *r)
{
	struct osb_file **idx = xcalloc(m->n ? m->n : 1, sizeof *idx);
	for (size_t i = 0; i < m->n; i++)
		idx[i] = &m->v[i];
	qsort(idx, m->n, sizeof *idx, cmp_file);
	for (size_t i = 0; i < L->n; i++) {
		const struct osb_entry *e = &L->v[i];
		const struct osb_file *f = find(idx, m->n, e->rel);
		if (f && !f->symlink && !memcmp(f->sha, e->sha, 32))
			continue; /* unchanged */
		if (e->protected_ || gitdir_here(wsfd, e->rel)) {
			strv_push(&r->protected_, e->rel);
			continue;
		}
		_cleanup_free_ char *full = path_join(ws, e->rel);
		struct stat st;
		bool here = lstat(full, &st) == 0;
		bool conflict = f ? !here || (uint64_t)st.st_size != f->size ||
					    (int64_t)st.st_mtim.tv_sec * 1000000000 +
							    st.st_mtim.tv_nsec !=
						    f->mtime_ns || f->symlink
				  : here;
		if (conflict) {
			strv_push(&r->conflicts, e->rel);
			continue;
		}
		todo[*nt].rel = xstrdup(e->rel);
		memcpy(todo[*nt].sha, e->sha, 32);
		todo[*nt].mode = e->mode;
		(*nt)++;
	}
	/* a refused name that pointed at a protected path is a violation too: nothing of it came
	 * back, whatever its spelling */
	for (size_t i = 0; i < L->aimed.n; i++)
		if (!strv_contains(&r->protected_, L->aimed.v[i]))
			strv_push(&r->protected_, L->aimed.v[i]);
	for (size_t i = 0; i < L->refused.n; i++)
		strv_push(&r->skipped, L->refused.v[i]);
	if (L->refused_more)
		strv_pushf(&r->skipped, "%zu more lines of the sandbox's listing refused; not brought "
					"back",
			   L->refused_more);
	for (size_t i = 0; i < L->links.n; i++) {
		const char *l = L->links.v[i];
		const struct osb_file *f = find(idx, m->n, l);
		if (f && f->symlink)
			continue; /* uploaded as a symlink */
		if (osb_protected(l))
			strv_push(&r->protected_, l);
		else if (f)
			strv_pushf(&r->skipped, "%s: replaced by a symlink in the sandbox; kept here", l);
		else
			strv_pushf(&r->skipped, "%s: a symlink made in the sandbox is not brought back",
				   l);
	}
	for (size_t i = 0; i < m->n; i++)
		if (!osb_listing_file(L, m->v[i].rel) && !osb_listing_link(L, m->v[i].rel) &&
		    !osb_listing_dup(L, m->v[i].rel))
			strv_pushf(&r->skipped, "%s: deleted in the sandbox; kept here", m->v[i].rel);
	free(idx);
}

int osb_pull(struct osb_client *c, const char *ws, const char *workdir,
	     const struct osb_manifest *m, uint64_t max, struct osb_pull_report *r, struct err *e)
{
	_cleanup_strv_ struct strv out = STRV_INIT;
	if (helper(c,
		   "find . -type l -printf 'L %P\\n'; find . -type f -printf 'M %m %P\\n'; "
		   "find . -type f -print0 | xargs -0r sha256sum --",
		   workdir, &out, e) < 0) {
		err_wrap(e, "listing the sandbox's files");
		return -1;
	}
	_cleanup_close_ int wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0)
		return err_set(e, errno, ws, "cannot open the workspace to bring the changes back");
	struct osb_listing L;
	osb_listing_parse(&out, &L);
	struct todo *todo = xcalloc(L.n ? L.n : 1, sizeof *todo);
	size_t nt = 0;
	judge(&L, m, wsfd, ws, todo, &nt, r);
	osb_listing_free(&L);
	uint64_t bytes = 0;
	/* download everything into the staging directory, checked, before anything moves */
	int rc = 0;
	char sname[64];
	snprintf(sname, sizeof sname, OSB_STAGING_PREFIX "%d", (int)getpid());
	if (mkdirat(wsfd, sname, 0700) < 0)
		rc = err_set(e, errno, ws, "cannot make the staging directory %s", sname);
	_cleanup_close_ int sfd = rc ? -1 : openat(wsfd, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	for (size_t i = 0; rc == 0 && i < nt; i++) {
		char fname[32];
		snprintf(fname, sizeof fname, "%zu", i);
		_cleanup_close_ int fd = openat(sfd, fname, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
						0600);
		_cleanup_free_ char *src = xasprintf("%s/%s", workdir, todo[i].rel);
		uint8_t got[32];
		if (fd < 0)
			rc = err_set(e, errno, sname, "cannot write in the staging directory");
		else if (osb_download(c, src, fd, max - bytes, e) < 0)
			rc = -1;
		else if (lseek(fd, 0, SEEK_SET) < 0 || hash_fd(fd, got) < 0)
			rc = err_set(e, errno, sname, "cannot read a staged file");
		else if (memcmp(got, todo[i].sha, 32))
			rc = err_set(e, 0, todo[i].rel, "changed in the sandbox while it was "
							"downloaded");
		else if (fchmod(fd, todo[i].mode) < 0)
			rc = err_set(e, errno, todo[i].rel, "cannot set the mode of a staged file");
		struct stat st;
		if (rc == 0 && fstat(fd, &st) == 0)
			bytes += (uint64_t)st.st_size;
	}
	/* then into place */
	for (size_t i = 0; rc == 0 && i < nt; i++) {
		char fname[32];
		snprintf(fname, sizeof fname, "%zu", i);
		const char *base;
		int pfd = fs_open_parent(wsfd, todo[i].rel, true, 0755, &base);
		if (pfd < 0 || renameat(sfd, fname, pfd, base) < 0) {
			strv_pushf(&r->skipped, "%s: not written (%s: a directory on its way is a "
						"symlink or not a directory)",
				   todo[i].rel, strerror(errno));
		} else {
			strv_push(&r->written, todo[i].rel);
		}
		if (pfd >= 0)
			close(pfd);
	}
	if (sfd >= 0)
		remove_staging(wsfd, sname, nt);
	if (rc < 0)
		err_wrap(e, "bringing the changes back (nothing was written)");
	for (size_t i = 0; i < nt; i++)
		free(todo[i].rel);
	free(todo);
	return rc;
}
