/* The review overlay's holder (core/jail/ovlns, doc/design.md §3c): the overlay mounted in
 * namespaces of a child's own, each source opened beneath it with its identity sent back, a
 * symlink or a missing path on the way refused naming it, a failed step named, a layer
 * replaced between agentjail's open and the child's refused, and nothing left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/backend/bwrap/ovlns.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

static char top[] = "/tmp/agentjail-test-ovlns.XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(top))
		return -1;
	const char *dirs[] = {"ws/sub", "rv/upper", "rv/work", "rv/mnt", "state"};
	for (size_t i = 0; i < 5; i++) {
		char *d = path_join(top, dirs[i]);
		int rc = fs_mkdirs(d, 0700, NULL);
		free(d);
		if (rc < 0)
			return -1;
	}
	char *f = path_join(top, "ws/sub/file");
	FILE *fp = fopen(f, "w");
	free(f);
	if (!fp)
		return -1;
	fputs("x\n", fp);
	fclose(fp);
	char *l = path_join(top, "ws/link");
	int rc = symlink("/etc", l);
	free(l);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(top) < 0 ? -1 : 0;
}

/* A plan over top/ws with these sources ("" the top). */
static void plan_of(struct bw_plan *p, const char *const *rels, size_t n)
{
	memset(p, 0, sizeof *p);
	p->ovl.lower = path_join(top, "ws");
	p->ovl.dir = path_join(top, "rv");
	p->ovl.upper = path_join(top, "rv/upper");
	p->ovl.work = path_join(top, "rv/work");
	p->ovl.mnt = path_join(top, "rv/mnt");
	p->ops = xcalloc(n ? n : 1, sizeof *p->ops);
	p->nops = p->capops = n;
	for (size_t i = 0; i < n; i++) {
		p->ops[i].ovl_rel = xstrdup(rels[i]);
		p->ops[i].fd = 40 + (int)i;
	}
}

/* Run the holder in a child (inject: a step to fail, or ""); receive. */
static int run(struct bw_plan *p, const char *inject, struct ovlns_id *ids, struct err *e)
{
	struct ovlns_req req;
	int sock;
	assert_int_equal(ovlns_prepare(p, &req, &sock, e), 0);
	snprintf(req.inject.step, sizeof req.inject.step, "%s", inject);
	req.high = 100;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(ovlns_enter(&req) == 0 && ovlns_place(&req) == 0 ? 0 : 1);
	close(req.sock);
	req.sock = -1;
	int rc = ovlns_receive(sock, req.n, 5000, ids, e);
	close(sock);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), rc == 0 ? 0 : 1);
	ovlns_req_free(&req);
	return rc;
}

static bool works(void)
{
	char *state = path_join(top, "state");
	struct err e = {0};
	int rc = ovlns_probe(state, top, &e);
	free(state);
	return rc == 0;
}

static void sources(void **state)
{
	(void)state;
	if (!works())
		skip();
	static const char *const rels[] = {"", "sub", "sub/file"};
	struct bw_plan p;
	plan_of(&p, rels, 3);
	struct ovlns_id ids[3];
	struct err e = {0};
	assert_int_equal(run(&p, "", ids, &e), 0);
	assert_int_equal(ids[0].mode, S_IFDIR);
	assert_int_equal(ids[1].mode, S_IFDIR);
	assert_int_equal(ids[2].mode, S_IFREG);
	assert_true(ids[0].dev == ids[2].dev); /* one overlay */
	struct stat host;
	char *f = path_join(top, "ws/sub/file");
	assert_int_equal(stat(f, &host), 0);
	free(f);
	assert_true(ids[2].dev != (unsigned long long)host.st_dev); /* the overlay's, not the host's */
	/* the mount was the child's: nothing on the host's mount point, nothing in the upper */
	char *cmd = xasprintf("test -z \"$(find %s/rv/mnt %s/rv/upper -mindepth 1)\"", top, top);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	bw_plan_free(&p);
}

static void refused(void **state)
{
	(void)state;
	if (!works())
		skip();
	/* a symlink as a source, or on the way to one: named, never followed */
	static const char *const link[] = {"link"};
	static const char *const below[] = {"link/passwd"};
	static const char *const missing[] = {"nope"};
	const char *const *cases[] = {link, below, missing};
	for (size_t i = 0; i < 3; i++) {
		struct bw_plan p;
		plan_of(&p, cases[i], 1);
		struct ovlns_id id;
		struct err e = {0};
		assert_int_equal(run(&p, "", &id, &e), -1);
		assert_string_equal(e.path, cases[i][0]);
		assert_non_null(strstr(e.what, "the change set holds something else"));
		bw_plan_free(&p);
	}
	/* a failed step: named, with nothing run */
	struct bw_plan p;
	plan_of(&p, NULL, 0);
	struct err e = {0};
	assert_int_equal(run(&p, "mount overlayfs", NULL, &e), -1);
	assert_non_null(strstr(e.what, "overlay could not be mounted: mount overlayfs"));
	assert_int_equal(e.errnum, EPERM);
	assert_non_null(strstr(e.hint, "nothing was run"));
	bw_plan_free(&p);
}

static void layer_replaced(void **state)
{
	(void)state;
	if (!works())
		skip();
	struct bw_plan p;
	plan_of(&p, NULL, 0);
	struct ovlns_req req;
	int sock;
	struct err e = {0};
	assert_int_equal(ovlns_prepare(&p, &req, &sock, &e), 0);
	/* the upper layer swapped after agentjail opened it */
	char *up = path_join(top, "rv/upper"), *old = path_join(top, "rv/upper.old");
	assert_int_equal(rename(up, old), 0);
	assert_int_equal(mkdir(up, 0700), 0);
	req.high = 100;
	pid_t pid = fork();
	if (pid == 0)
		_exit(ovlns_enter(&req) == 0 ? 0 : 1);
	close(req.sock);
	req.sock = -1;
	assert_int_equal(ovlns_receive(sock, 0, 5000, NULL, &e), -1);
	assert_int_equal(e.errnum, ESTALE);
	assert_string_equal(e.path, up);
	close(sock);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(rmdir(up), 0);
	assert_int_equal(rename(old, up), 0);
	free(up);
	free(old);
	ovlns_req_free(&req);
	bw_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sources),
		cmocka_unit_test(refused),
		cmocka_unit_test(layer_replaced),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
