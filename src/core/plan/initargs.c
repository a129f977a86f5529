/* initargs: see initargs.h. */
#include "core/plan/initargs.h"

#include <stdlib.h>
#include <string.h>

void initargs_build(const struct init_args *a, struct strv *out)
{
	strv_push(out, INIT_VERB);
	if (a->ctl >= 0) {
		strv_push(out, INIT_OPT_CONTROL);
		strv_pushf(out, "%d", a->ctl);
	}
	for (size_t i = 0; i < a->writable.n; i++) {
		strv_push(out, INIT_OPT_WRITABLE);
		strv_push(out, a->writable.v[i]);
	}
	for (size_t i = 0; i < a->deny_read.n; i++) {
		strv_push(out, INIT_OPT_DENY_READ);
		strv_push(out, a->deny_read.v[i]);
	}
	if (a->scope)
		strv_push(out, INIT_OPT_SCOPE);
	if (a->rlimit_data) {
		strv_push(out, INIT_OPT_RLIMIT_DATA);
		strv_pushf(out, "%llu", a->rlimit_data);
	}
	if (a->rlimit_nproc) {
		strv_push(out, INIT_OPT_RLIMIT_NPROC);
		strv_pushf(out, "%llu", a->rlimit_nproc);
	}
	if (a->note_lock) {
		strv_push(out, INIT_OPT_NOTE_LOCK);
		strv_push(out, a->note_lock);
	}
	for (size_t i = 0; i < a->publish.n; i++) {
		strv_push(out, INIT_OPT_PUBLISH);
		strv_push(out, a->publish.v[i]);
	}
	if (a->capture)
		strv_push(out, INIT_OPT_CAPTURE);
	strv_push(out, "--");
}

int initargs_parse(int argc, char **argv, struct init_args *a)
{
	*a = (struct init_args){.ctl = -1, .writable = STRV_INIT, .deny_read = STRV_INIT,
				.publish = STRV_INIT};
	int i = 1;
	if (i < argc && !strcmp(argv[i], INIT_VERB))
		i++;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], INIT_OPT_CONTROL) && i + 1 < argc)
			a->ctl = atoi(argv[++i]);
		else if (!strcmp(argv[i], INIT_OPT_WRITABLE) && i + 1 < argc)
			strv_push(&a->writable, argv[++i]);
		else if (!strcmp(argv[i], INIT_OPT_DENY_READ) && i + 1 < argc)
			strv_push(&a->deny_read, argv[++i]);
		else if (!strcmp(argv[i], INIT_OPT_SCOPE))
			a->scope = true;
		else if (!strcmp(argv[i], INIT_OPT_RLIMIT_DATA) && i + 1 < argc)
			a->rlimit_data = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], INIT_OPT_RLIMIT_NPROC) && i + 1 < argc)
			a->rlimit_nproc = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], INIT_OPT_NOTE_LOCK) && i + 1 < argc && !a->note_lock)
			a->note_lock = argv[++i]; /* points into argv, as cmd does */
		else if (!strcmp(argv[i], INIT_OPT_PUBLISH) && i + 1 < argc)
			strv_push(&a->publish, argv[++i]);
		else if (!strcmp(argv[i], INIT_OPT_CAPTURE))
			a->capture = true;
		else
			return -1;
	}
	if (i >= argc)
		return -1;
	a->cmd = argv + i;
	return 0;
}

void initargs_free(struct init_args *a)
{
	strv_free(&a->writable);
	strv_free(&a->deny_read);
	strv_free(&a->publish);
	a->cmd = NULL;
	a->note_lock = NULL;
}
