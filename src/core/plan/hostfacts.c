/* hostfacts: the fact table and the fixture loader (pure apart from reading a fixture file). */
#include "core/plan/hostfacts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

void hostfacts_init(struct hostfacts *hf) { memset(hf, 0, sizeof *hf); }

static void entry_free(struct hf_entry *en)
{
	free(en->path);
	free(en->st.link);
	strv_free(&en->children);
	free(en->head);
}

void hf_secrets_free(struct hf_secrets *s)
{
	free(s->bundle);
	free(s->bundle_host);
	free(s->ssh_sock);
	free(s->gpg_sock);
	free(s->gpg_home);
	memset(s, 0, sizeof *s);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void hf_secrets_copy(struct hf_secrets *dst, const struct hf_secrets *src)
{
	dst->bundle = dup_or_null(src->bundle);
	dst->bundle_host = dup_or_null(src->bundle_host);
	dst->ssh_sock = dup_or_null(src->ssh_sock);
	dst->gpg_sock = dup_or_null(src->gpg_sock);
	dst->gpg_home = dup_or_null(src->gpg_home);
}

static void reals_forget(struct hostfacts *hf)
{
	for (size_t i = 0; i < hf->capreals; i++) {
		struct hf_real *r = hf->reals[i];
		if (!r)
			continue;
		free(r->path);
		free(r->real);
		strv_free(&r->links);
		free(r);
	}
	free(hf->reals);
	hf->reals = NULL;
	hf->nreals = hf->capreals = 0;
}

void hostfacts_free(struct hostfacts *hf)
{
	hf_secrets_free(&hf->sec);
	char **strs[] = {&hf->home,	     &hf->user,		 &hf->cwd,
			 &hf->state_dir,     &hf->scan_dir,	 &hf->config_dir,
			 &hf->self_exe,
			 &hf->resolv_target,
			 &hf->gitdir,	     &hf->commondir,	 &hf->hooks_path,
			 &hf->session_id,    &hf->cgroup_parent,	 &hf->limits_why};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		free(*strs[i]);
	strv_free(&hf->env);
	strv_free(&hf->etc_unreadable);
	for (size_t i = 0; i < hf->ntrees; i++) {
		free(hf->trees[i]->root);
		strv_free(&hf->trees[i]->unreadable);
		free(hf->trees[i]);
	}
	free(hf->trees);
	strv_free(&hf->nested_git);
	strv_free(&hf->git_includes);
	free(hf->git_refused);
	for (size_t i = 0; i < hf->ntab; i++) {
		entry_free(hf->tab[i]);
		free(hf->tab[i]);
	}
	free(hf->tab);
	free(hf->idx);
	reals_forget(hf);
	memset(hf, 0, sizeof *hf);
}

static size_t path_hash(const char *path)
{
	size_t h = 14695981039346656037u; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		h = (h ^ *c) * 1099511628211u;
	return h;
}

/* The slot of path in idx: where it is, or the empty slot where it would go. */
static size_t slot_of(const struct hostfacts *hf, const char *path)
{
	size_t mask = hf->capidx - 1, i = path_hash(path) & mask;
	while (hf->idx[i] && strcmp(hf->tab[hf->idx[i] - 1]->path, path))
		i = (i + 1) & mask;
	return i;
}

static void index_grow(struct hostfacts *hf)
{
	free(hf->idx);
	hf->capidx = hf->capidx ? hf->capidx * 2 : 256;
	hf->idx = xcalloc(hf->capidx, sizeof *hf->idx);
	for (size_t n = 0; n < hf->ntab; n++)
		hf->idx[slot_of(hf, hf->tab[n]->path)] = n + 1;
}

static struct hf_entry *find(struct hostfacts *hf, const char *path)
{
	if (!hf->capidx)
		return NULL;
	size_t i = slot_of(hf, path);
	return hf->idx[i] ? hf->tab[hf->idx[i] - 1] : NULL;
}

static struct hf_entry *insert(struct hostfacts *hf, const char *path)
{
	struct hf_entry *en = find(hf, path);
	if (en) {
		free(en->st.link);
		memset(&en->st, 0, sizeof en->st);
		return en;
	}
	if (hf->ntab == hf->captab) {
		hf->captab = hf->captab ? hf->captab * 2 : 64;
		hf->tab = xrealloc(hf->tab, hf->captab * sizeof *hf->tab);
	}
	/* entries are allocated one by one so pointers handed out stay valid */
	en = xcalloc(1, sizeof *en);
	hf->tab[hf->ntab++] = en;
	en->path = xstrdup(path);
	if (2 * hf->ntab > hf->capidx)
		index_grow(hf); /* indexes the new entry too */
	else
		hf->idx[slot_of(hf, path)] = hf->ntab;
	return en;
}

void hf_add(struct hostfacts *hf, const char *path, enum hf_type type, mode_t mode, uid_t uid,
	    const char *link)
{
	reals_forget(hf); /* a walk may meet this fact now */
	struct hf_entry *en = insert(hf, path);
	en->st.type = type;
	en->st.mode = mode;
	en->st.uid = uid;
	en->st.link = link ? xstrdup(link) : NULL;
}

/* The slot of path in reals: where it is, or the empty slot where it would go. */
static size_t real_slot(const struct hostfacts *hf, const char *path)
{
	size_t mask = hf->capreals - 1, i = path_hash(path) & mask;
	while (hf->reals[i] && strcmp(hf->reals[i]->path, path))
		i = (i + 1) & mask;
	return i;
}

const struct hf_real *hf_real_find(const struct hostfacts *hf, const char *path)
{
	return hf->capreals ? hf->reals[real_slot(hf, path)] : NULL;
}

void hf_real_store(struct hostfacts *hf, const char *path, const char *real,
		   const struct strv *links)
{
	if (2 * (hf->nreals + 1) > hf->capreals) {
		struct hf_real **old = hf->reals;
		size_t n = hf->capreals;
		hf->capreals = n ? n * 2 : 128;
		hf->reals = xcalloc(hf->capreals, sizeof *hf->reals);
		for (size_t i = 0; i < n; i++)
			if (old[i])
				hf->reals[real_slot(hf, old[i]->path)] = old[i];
		free(old);
	}
	size_t i = real_slot(hf, path);
	if (hf->reals[i])
		return; /* known already: the same answer */
	struct hf_real *r = xcalloc(1, sizeof *r);
	r->path = xstrdup(path);
	r->real = real ? xstrdup(real) : NULL;
	if (links)
		strv_copy(&r->links, links);
	hf->reals[i] = r;
	hf->nreals++;
}

static struct hf_tree *tree_entry(struct hostfacts *hf, const char *root, bool *fresh)
{
	*fresh = false;
	for (size_t i = 0; i < hf->ntrees; i++)
		if (!strcmp(hf->trees[i]->root, root))
			return hf->trees[i];
	/* allocated one by one so the lists handed out stay where they are */
	hf->trees = xrealloc(hf->trees, (hf->ntrees + 1) * sizeof *hf->trees);
	struct hf_tree *t = xcalloc(1, sizeof *t);
	hf->trees[hf->ntrees++] = t;
	t->root = xstrdup(root);
	*fresh = true;
	return t;
}

const struct strv *hf_unreadable(struct hostfacts *hf, const char *root)
{
	bool fresh;
	struct hf_tree *t = tree_entry(hf, root, &fresh);
	if (fresh && hf->scan && hf->scan(hf, root, &t->unreadable) < 0) {
		strv_free(&t->unreadable);
		strv_push(&t->unreadable, root);
	}
	return &t->unreadable;
}

const struct hf_stat *hf_stat(struct hostfacts *hf, const char *path)
{
	static const struct hf_stat missing = {.type = HF_MISSING};
	struct hf_entry *en = find(hf, path);
	if (en)
		return &en->st;
	if (!hf->probe)
		return &missing;
	struct hf_stat st = {0};
	if (hf->probe(hf, path, &st) < 0)
		st.type = HF_MISSING;
	en = insert(hf, path);
	en->st = st;
	return &en->st;
}

enum hf_type hf_type(struct hostfacts *hf, const char *path) { return hf_stat(hf, path)->type; }

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const struct strv *hf_children(struct hostfacts *hf, const char *path)
{
	static struct strv none = STRV_INIT;
	if (hf_type(hf, path) != HF_DIR)
		return &none;
	struct hf_entry *en = find(hf, path);
	if (en->listed)
		return &en->children;
	struct strv names = STRV_INIT;
	if (hf->list) {
		if (hf->list(hf, path, &names) < 0)
			strv_free(&names);
	} else {
		for (size_t i = 0; i < hf->ntab; i++) {
			const char *rel = path_below(hf->tab[i]->path, path);
			if (rel && *rel && !strchr(rel, '/') && hf->tab[i]->st.type != HF_MISSING)
				strv_push(&names, rel);
		}
	}
	if (names.n)
		qsort(names.v, names.n, sizeof *names.v, cmp_str);
	strv_free(&en->children);
	en->children = names;
	en->listed = true;
	return &en->children;
}

bool hf_has_symlink_below(struct hostfacts *hf, const char *root, const char *path)
{
	const char *rel = path_below(path, root);
	if (!rel)
		return true; /* not below: treat as unsafe */
	_cleanup_free_ char *cur = xstrdup(root);
	while (*rel) {
		const char *slash = strchr(rel, '/');
		size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
		char *comp = xstrndup(rel, n);
		char *next = path_join(cur, comp);
		free(comp);
		free(cur);
		cur = next;
		if (hf_type(hf, cur) == HF_SYMLINK)
			return true;
		rel += n;
		while (*rel == '/')
			rel++;
	}
	return false;
}

const char *hf_head(struct hostfacts *hf, const char *path)
{
	if (hf_type(hf, path) != HF_FILE)
		return NULL;
	struct hf_entry *en = find(hf, path);
	if (en->head_known)
		return en->head;
	en->head_known = true;
	if (!hf->head) {
		en->head = xstrdup(""); /* a fixture file without a head line is no script */
		return en->head;
	}
	char *h = NULL;
	if (hf->head(hf, path, &h) == 0)
		en->head = h;
	return en->head;
}

const char *hf_getenv(const struct hostfacts *hf, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < hf->env.n; i++)
		if (!strncmp(hf->env.v[i], name, n) && hf->env.v[i][n] == '=')
			return hf->env.v[i] + n + 1;
	return NULL;
}

/* ---- fixtures (tests) ---- */

int hostfacts_load_fixture(struct hostfacts *hf, const char *file, struct err *e);

static int fixture_line(struct hostfacts *hf, char *line, const char *file, int lineno,
			struct err *e)
{
	char *key = strtok(line, " \t");
	if (key && !strcmp(key, "include")) {
		char *name = strtok(NULL, " \t");
		if (!name)
			return err_set(e, 0, file, "fixture line %d: include needs a file", lineno);
		_cleanup_free_ char *dir = path_dirname(file);
		_cleanup_free_ char *inc = name[0] == '/' ? xstrdup(name) : path_join(dir, name);
		return hostfacts_load_fixture(hf, inc, e);
	}
	if (!key || key[0] == '#')
		return 0;
	char *rest = strtok(NULL, "");
	while (rest && (*rest == ' ' || *rest == '\t'))
		rest++;
	struct {
		const char *key;
		char **dst;
	} scalars[] = {{"home", &hf->home},
		       {"user", &hf->user},
		       {"cwd", &hf->cwd},
		       {"state_dir", &hf->state_dir},
		       {"config_dir", &hf->config_dir},
		       {"self_exe", &hf->self_exe},
		       {"resolv_target", &hf->resolv_target},
		       {"gitdir", &hf->gitdir},
		       {"commondir", &hf->commondir},
		       {"hooks_path", &hf->hooks_path},
		       {"session_id", &hf->session_id},
		       {"sec_bundle", &hf->sec.bundle},
		       {"sec_bundle_host", &hf->sec.bundle_host},
		       {"sec_ssh_sock", &hf->sec.ssh_sock},
		       {"sec_gpg_sock", &hf->sec.gpg_sock},
		       {"sec_gpg_home", &hf->sec.gpg_home}};
	for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++) {
		if (!strcmp(key, scalars[i].key)) {
			free(*scalars[i].dst);
			*scalars[i].dst = xstrdup(rest ? rest : "");
			return 0;
		}
	}
	if (!strcmp(key, "uid") && rest) {
		hf->uid = (uid_t)strtoul(rest, NULL, 10);
		return 0;
	}
	if (!strcmp(key, "gid") && rest) {
		hf->gid = (gid_t)strtoul(rest, NULL, 10);
		return 0;
	}
	if (!strcmp(key, "git_refused") && rest) { /* PATH WHAT…: a pointer gitinfo refused */
		size_t n = strcspn(rest, " ");
		free(hf->git_refused);
		hf->git_refused = xcalloc(1, sizeof *hf->git_refused);
		_cleanup_free_ char *path = xstrndup(rest, n);
		err_set(hf->git_refused, 0, path, "%s", rest[n] ? rest + n + 1 : "");
		return 0;
	}
	if (!strcmp(key, "git_include") && rest) {
		strv_push(&hf->git_includes, rest);
		return 0;
	}
	if (!strcmp(key, "nested_git") && rest) {
		strv_push(&hf->nested_git, rest);
		return 0;
	}
	if (!strcmp(key, "env") && rest) {
		/* a later line for the same variable replaces the earlier one (includes) */
		size_t n = strcspn(rest, "=");
		for (size_t i = 0; i < hf->env.n; i++) {
			if (!strncmp(hf->env.v[i], rest, n) && hf->env.v[i][n] == '=') {
				free(hf->env.v[i]);
				hf->env.v[i] = xstrdup(rest);
				return 0;
			}
		}
		strv_push(&hf->env, rest);
		return 0;
	}
	if (!strcmp(key, "head") && rest) {
		/* head PATH #!LINE: the file's first line */
		char *sp = strpbrk(rest, " \t");
		if (!sp)
			return err_set(e, 0, file, "fixture line %d: head needs PATH LINE", lineno);
		*sp++ = '\0';
		struct hf_entry *en = find(hf, rest);
		if (!en)
			return err_set(e, 0, file, "fixture line %d: head of an unlisted file", lineno);
		free(en->head);
		en->head = xstrdup(sp);
		en->head_known = true;
		return 0;
	}
	if (!strcmp(key, "unreadable") && rest) {
		/* unreadable ROOT PATH: an entry of a scanned tree */
		char *sp = strchr(rest, ' ');
		if (!sp)
			return err_set(e, 0, file, "fixture line %d: unreadable needs ROOT PATH",
				       lineno);
		*sp++ = '\0';
		bool fresh;
		strv_push(&tree_entry(hf, rest, &fresh)->unreadable, sp);
		return 0;
	}
	if (!strcmp(key, "etc_unreadable") && rest) {
		strv_push(&hf->etc_unreadable, rest);
		return 0;
	}
	static const struct {
		const char *key;
		enum hf_type type;
		mode_t mode;
	} kinds[] = {{"d", HF_DIR, 0755},   {"f", HF_FILE, 0644}, {"l", HF_SYMLINK, 0777},
		     {"s", HF_SOCKET, 0777}, {"c", HF_CHR, 0666},  {"b", HF_BLK, 0660},
		     {"p", HF_FIFO, 0644}};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		if (strcmp(key, kinds[i].key) != 0)
			continue;
		char *path = rest ? strtok(rest, " \t") : NULL;
		char *arg = strtok(NULL, " \t");
		char *arg2 = strtok(NULL, " \t");
		if (!path)
			break;
		if (kinds[i].type == HF_SYMLINK) {
			if (!arg)
				break;
			hf_add(hf, path, HF_SYMLINK, 0777, 0, arg);
		} else {
			mode_t mode = arg ? (mode_t)strtoul(arg, NULL, 8) : kinds[i].mode;
			uid_t uid = arg2 ? (uid_t)strtoul(arg2, NULL, 10) : 0;
			hf_add(hf, path, kinds[i].type, mode, uid, NULL);
		}
		return 0;
	}
	err_set(e, 0, file, "fixture line %d: cannot parse `%s`", lineno, key);
	return -1;
}

int hostfacts_load_fixture(struct hostfacts *hf, const char *file, struct err *e)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re"); /* layering: a test fixture */
	if (!f)
		return err_set(e, errno, file, "cannot open fixture");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (fixture_line(hf, line, file, lineno, e) < 0)
			return -1;
	}
	return 0;
}
