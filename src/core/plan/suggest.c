/* suggest: the closest known word to a mistyped one (a typo in a configuration key). */
#include "core/plan/suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/xalloc.h"

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

size_t edit_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b);
	if ((la > lb ? la - lb : lb - la) > max)
		return max + 1;
	/* three rows of the optimal-string-alignment table: i-2, i-1, i */
	size_t *row = xcalloc(3 * (lb + 1), sizeof(*row));
	size_t *pp = row, *prev = row + lb + 1, *cur = row + 2 * (lb + 1);
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		size_t best = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
			if (cur[j] < best)
				best = cur[j];
		}
		if (best > max) {
			free(row);
			return max + 1;
		}
		size_t *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	size_t d = prev[lb];
	free(row);
	return d > max ? max + 1 : d;
}

const char *closest_word(const char *word, const char *const *candidates)
{
	size_t n = strlen(word);
	size_t max = n <= 4 ? 1 : n <= 8 ? 2 : 3;
	const char *best = NULL;
	size_t best_d = max + 1;
	for (size_t i = 0; candidates && candidates[i]; i++) {
		size_t d = edit_distance(word, candidates[i], max);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	if (best_d == 0 || n - strspn(word, "-") < 3)
		return best;
	/* a word cut short ("--allow" for --allow-domain, "--deny" for --deny-domain rather than
	 * --env, 2 edits away): the first candidate it begins, when it has at least 3 letters
	 * past any leading dashes */
	for (size_t i = 0; candidates && candidates[i]; i++)
		if (strlen(candidates[i]) > n && !strncasecmp(word, candidates[i], n))
			return candidates[i];
	return best;
}
