/* review_diff: the unified diff of one file of a change set (review.h). Our own Myers diff
 * (E. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986): the common head and
 * tail are cut first, then the greedy search for the shortest edit script over the lines
 * between, keeping each step's diagonal band for the way back. Past MAX_D steps (files that
 * differ in thousands of places) the middle is given as all deleted, then all inserted: still
 * a correct diff, only not the shortest. */
#include "core/plan/review.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define CONTEXT 3
#define MAX_D 1000 /* the bands kept: about MAX_D² longs at most (8 MB) */
#define BINARY_PROBE 8000

bool rv_is_binary(const char *b, size_t n)
{
	return b && memchr(b, '\0', n < BINARY_PROBE ? n : BINARY_PROBE) != NULL;
}

struct line {
	const char *s;
	size_t n; /* with its newline, when it has one */
	uint32_t h;
};

static size_t split(const char *b, size_t n, struct line **out)
{
	size_t cnt = 0;
	for (size_t i = 0; i < n; i++)
		cnt += b[i] == '\n';
	if (n && b[n - 1] != '\n')
		cnt++;
	struct line *v = xcalloc(cnt ? cnt : 1, sizeof *v);
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= n && k < cnt; i++) {
		if (i < n && b[i] != '\n')
			continue;
		size_t end = i < n ? i + 1 : n;
		uint32_t h = 2166136261u; /* FNV-1a */
		for (size_t j = start; j < end; j++)
			h = (h ^ (unsigned char)b[j]) * 16777619u;
		v[k++] = (struct line){b + start, end - start, h};
		start = end;
	}
	*out = v;
	return cnt;
}

static bool same(const struct line *a, const struct line *b)
{
	return a->h == b->h && a->n == b->n && !memcmp(a->s, b->s, a->n);
}

enum { OP_EQ, OP_DEL, OP_INS };

struct script {
	unsigned char *op; /* one per old or new line, in order */
	size_t n;
};

static void emit(struct script *s, unsigned char op, size_t count)
{
	for (size_t i = 0; i < count; i++)
		s->op[s->n++] = op;
}

/* The shortest edit script of a[0..n) → b[0..m) into s (ops appended), or false when it takes
 * more than MAX_D steps. */
static bool myers(const struct line *a, size_t n, const struct line *b, size_t m, struct script *s)
{
	size_t max = n + m;
	if (max > MAX_D)
		max = MAX_D;
	long off = (long)max + 1;
	long *v = xcalloc((size_t)(2 * off + 1), sizeof *v);
	long **trace = xcalloc(max + 1, sizeof *trace);
	long dfound = -1;
	for (long d = 0; d <= (long)max && dfound < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
					 ? v[off + k + 1]
					 : v[off + k - 1] + 1;
			long y = x - k;
			while (x < (long)n && y < (long)m && same(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m) {
				dfound = d;
				break;
			}
		}
		/* the band [-d, d] after step d, for the way back */
		trace[d] = xmalloc((size_t)(2 * d + 1) * sizeof(long));
		memcpy(trace[d], &v[off - d], (size_t)(2 * d + 1) * sizeof(long));
	}
	bool ok = dfound >= 0;
	if (ok) {
		/* backwards: from (n, m) through each step's chosen diagonal */
		size_t len = 0;
		unsigned char *rev = xmalloc(n + m + 1);
		long x = (long)n, y = (long)m;
		for (long d = dfound; d > 0; d--) {
			const long *pv = trace[d - 1]; /* index k + (d - 1) */
			long k = x - y;
			long pk = (k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1])) ? k + 1
												   : k - 1;
			long px = pv[pk + d - 1], py = px - pk;
			while (x > px && y > py) {
				rev[len++] = OP_EQ;
				x--, y--;
			}
			rev[len++] = pk == k + 1 ? OP_INS : OP_DEL;
			if (pk == k + 1)
				y--;
			else
				x--;
		}
		while (x > 0 && y > 0) {
			rev[len++] = OP_EQ;
			x--, y--;
		}
		while (len)
			s->op[s->n++] = rev[--len];
		free(rev);
	}
	for (long d = 0; d <= (long)max; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return ok;
}

static void diff_lines(const struct line *a, size_t n, const struct line *b, size_t m,
		       struct script *s)
{
	size_t head = 0;
	while (head < n && head < m && same(&a[head], &b[head]))
		head++;
	size_t tail = 0;
	while (tail < n - head && tail < m - head && same(&a[n - 1 - tail], &b[m - 1 - tail]))
		tail++;
	emit(s, OP_EQ, head);
	size_t mn = n - head - tail, mm = m - head - tail;
	size_t at = s->n;
	if (!myers(a + head, mn, b + head, mm, s)) {
		s->n = at;
		emit(s, OP_DEL, mn);
		emit(s, OP_INS, mm);
	}
	emit(s, OP_EQ, tail);
}

static void put_line(struct strbuf *out, char mark, const struct line *l)
{
	sb_addc(out, mark);
	sb_addn(out, l->s, l->n);
	if (!l->n || l->s[l->n - 1] != '\n')
		sb_add(out, "\n\\ No newline at end of file\n");
}

static void range(struct strbuf *out, char sign, size_t start, size_t count)
{
	/* a range of no lines is given by the line before it */
	sb_addf(out, " %c%zu", sign, count ? start + 1 : start);
	if (count != 1)
		sb_addf(out, ",%zu", count);
}

/* The hunks of the script: each change with CONTEXT lines around it, hunks whose contexts
 * touch merged. */
static void hunks(struct strbuf *out, const struct script *s, const struct line *a,
		  const struct line *b)
{
	size_t i = 0;
	while (i < s->n) {
		while (i < s->n && s->op[i] == OP_EQ)
			i++;
		if (i >= s->n)
			break;
		/* the hunk starts CONTEXT equal lines before the change at i */
		size_t start = i >= CONTEXT ? i - CONTEXT : 0;
		size_t end = i; /* one past the hunk's last op */
		size_t eq = 0;
		for (size_t j = i; j < s->n; j++) {
			if (s->op[j] != OP_EQ) {
				end = j + 1;
				eq = 0;
				continue;
			}
			if (++eq > 2 * CONTEXT)
				break;
		}
		/* what follows end is equal lines only, up to the next hunk's context */
		size_t stop = end + CONTEXT < s->n ? end + CONTEXT : s->n;
		/* line numbers at start */
		size_t ai = 0, bi = 0;
		for (size_t j = 0; j < start; j++) {
			ai += s->op[j] != OP_INS;
			bi += s->op[j] != OP_DEL;
		}
		size_t ac = 0, bc = 0;
		for (size_t j = start; j < stop; j++) {
			ac += s->op[j] != OP_INS;
			bc += s->op[j] != OP_DEL;
		}
		sb_add(out, "@@");
		range(out, '-', ai, ac);
		range(out, '+', bi, bc);
		sb_add(out, " @@\n");
		for (size_t j = start; j < stop; j++) {
			if (s->op[j] == OP_EQ)
				put_line(out, ' ', &a[ai]), ai++, bi++;
			else if (s->op[j] == OP_DEL)
				put_line(out, '-', &a[ai++]);
			else
				put_line(out, '+', &b[bi++]);
		}
		i = stop;
	}
}

void rv_unified(struct strbuf *out, const char *rel, const char *old, size_t olen,
		const char *neu, size_t nlen, struct rv_diffstat *st)
{
	memset(st, 0, sizeof *st);
	if (rv_is_binary(old, olen) || rv_is_binary(neu, nlen)) {
		st->binary = true;
		if (out)
			sb_addf(out, "Binary files %s%s and %s%s differ\n", old ? "a/" : "",
				old ? rel : "/dev/null", neu ? "b/" : "", neu ? rel : "/dev/null");
		return;
	}
	struct line *a, *b;
	size_t n = split(old ? old : "", old ? olen : 0, &a);
	size_t m = split(neu ? neu : "", neu ? nlen : 0, &b);
	struct script s = {xmalloc(n + m + 1), 0};
	diff_lines(a, n, b, m, &s);
	for (size_t i = 0; i < s.n; i++) {
		st->del += s.op[i] == OP_DEL;
		st->ins += s.op[i] == OP_INS;
	}
	if (out && (st->ins || st->del)) {
		sb_addf(out, "--- %s%s\n", old ? "a/" : "", old ? rel : "/dev/null");
		sb_addf(out, "+++ %s%s\n", neu ? "b/" : "", neu ? rel : "/dev/null");
		hunks(out, &s, a, b);
	}
	free(s.op);
	free(a);
	free(b);
}
