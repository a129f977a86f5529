/* cmdwords: the programs a command line names (cmdwords.h). Pure. */
#include "core/backend/bwrap/cmdwords.h"

#include <stdbool.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

#define WORD_MAX 4096

static bool in_list(const char *const *l, const char *w)
{
	for (size_t i = 0; l[i]; i++)
		if (!strcmp(l[i], w))
			return true;
	return false;
}

/* Words after which the next word is again a command (reserved words, `!`, `time`). */
static const char *const keywords[] = {"if",   "then", "else", "elif", "fi", "do", "done",
				       "while", "until", "!",   "{",    "}",  "time", "esac",
				       NULL};
/* Words whose next words are the command and its options (exec -a NAME is not followed). */
static const char *const prefixes[] = {"exec", "command", "nohup", "env", NULL};
/* Words after which no command follows until the next separator: a loop's list, a case's
 * subject, a file sourced, a function's name. */
static const char *const no_command[] = {"for", "case", "select", "function", ".", "source",
					 NULL};

static bool is_sep(char c)
{
	return c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '`';
}

/* A separator at s[i], but not the & or | of a redirection (2>&1, &>f, >|f). */
static bool sep_at(const char *s, size_t i, size_t n)
{
	char c = s[i];
	if (!is_sep(c))
		return false;
	bool after_redir = i > 0 && (s[i - 1] == '>' || s[i - 1] == '<');
	if (c == '&')
		return !after_redir && !(i + 1 < n && s[i + 1] == '>');
	if (c == '|')
		return !(i > 0 && s[i - 1] == '>');
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A name worth looking up: letters, digits and a few marks, not an option. */
static bool plain_name(const char *w)
{
	if (!w[0] || w[0] == '-')
		return false;
	for (const char *c = w; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("_./+:@%,-", *c)))
			return false;
	return true;
}

/* NAME=… : an assignment before the command. */
static bool assignment(const char *w)
{
	if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') || *w == '_'))
		return false;
	for (const char *c = w; *c; c++) {
		if (*c == '=')
			return true;
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	}
	return false;
}

/* A redirection alone ("2>", "<", ">>"): its target is the next word. */
static bool redirection_op(const char *w)
{
	const char *c = w;
	while (*c >= '0' && *c <= '9')
		c++;
	if (*c != '<' && *c != '>')
		return false;
	while (*c == '<' || *c == '>' || *c == '&' || *c == '|')
		c++;
	return *c == '\0';
}

static bool redirection(const char *w)
{
	const char *c = w;
	while (*c >= '0' && *c <= '9')
		c++;
	return *c == '<' || *c == '>';
}

static void push_once(struct strv *out, const char *w)
{
	if (out->n < CMDWORDS_MAX && plain_name(w) && !strv_contains(out, w))
		strv_push(out, w);
}

struct lex {
	const char *s;
	size_t i, n;
};

/* Past a quoted string starting at l->i (its quote char there). */
static void skip_quoted(struct lex *l)
{
	char q = l->s[l->i++];
	while (l->i < l->n && l->s[l->i] != q) {
		if (q == '"' && l->s[l->i] == '\\')
			l->i++;
		l->i++;
	}
	if (l->i < l->n)
		l->i++;
}

/* One word at l->i, quoting followed: its text (NULL when longer than WORD_MAX) and whether
 * it is plain (no quote, escape, expansion or glob in it). */
static char *read_word(struct lex *l, bool *plain)
{
	size_t start = l->i;
	*plain = true;
	while (l->i < l->n && !is_blank(l->s[l->i]) && !sep_at(l->s, l->i, l->n)) {
		char c = l->s[l->i];
		if (c == '\'' || c == '"') {
			*plain = false;
			skip_quoted(l);
			continue;
		}
		if (c == '\\') {
			*plain = false;
			l->i += l->i + 1 < l->n ? 2 : 1;
			continue;
		}
		if (strchr("$*?[~", c))
			*plain = false;
		if (c == '$' && l->i + 1 < l->n && l->s[l->i + 1] == '(')
			return NULL; /* a command substitution starts here: the caller looks */
		l->i++;
	}
	size_t len = l->i - start;
	if (len > WORD_MAX)
		return NULL;
	return xstrndup(l->s + start, len);
}

/* The rest of a command: words up to an unquoted separator, which is left in place. A "$(" is
 * consumed and true returned: a command starts inside it. */
static bool skip_command(struct lex *l)
{
	while (l->i < l->n && !sep_at(l->s, l->i, l->n)) {
		char c = l->s[l->i];
		if (c == '\'' || c == '"') {
			skip_quoted(l);
		} else if (c == '\\') {
			l->i += 2;
		} else if (c == '$' && l->i + 1 < l->n && l->s[l->i + 1] == '(') {
			bool arith = l->i + 2 < l->n && l->s[l->i + 2] == '(';
			l->i += arith ? 3 : 2;
			if (!arith)
				return true;
		} else {
			l->i++;
		}
	}
	if (l->i > l->n)
		l->i = l->n;
	return false;
}

/* Where the scan is in the script's grammar, as far as finding command words goes. */
struct scan {
	bool start;          /* the next word is a command's first */
	bool after_prefix;   /* … after exec/command/nohup/env: options and assignments */
	bool redirect_target; /* the next word is a redirection's file */
	bool pattern;        /* a case's patterns come, up to their ")" */
	int parens;          /* "(" and "$(" open */
	bool outer[8];       /* for the innermost ones: whether a command starts after it */
	int cases;           /* case … esac open */
	bool backtick;       /* inside `…` */
};

/* A "(" or "$(": a command starts inside; `then` says whether one starts after its ")". */
static void open_paren(struct scan *sc, bool then)
{
	if (sc->parens < 8)
		sc->outer[sc->parens] = then;
	sc->parens++;
	sc->start = true;
}

/* A separator at l->i (consumed): what comes next. */
static void on_separator(struct lex *l, struct scan *sc)
{
	char c = l->s[l->i++];
	sc->after_prefix = sc->redirect_target = false;
	if (c == '`') {
		sc->backtick = !sc->backtick;
		sc->start = sc->backtick; /* `cmd`: a command inside, none right after it */
	} else if (c == '(') {
		open_paren(sc, false);
	} else if (c == ')') {
		if (sc->parens > 0) {
			/* "$(cmd) arg": what follows belongs to the outer command, unless the
			 * substitution was an assignment's value: "V=$(cmd) tool" */
			sc->parens--;
			sc->start = sc->parens < 8 && sc->outer[sc->parens];
		} else {
			sc->pattern = false;
			sc->start = sc->cases > 0; /* a case pattern's end: its command follows */
		}
	} else if (c == ';' && l->i < l->n && l->s[l->i] == ';' && sc->cases > 0) {
		l->i++;
		sc->pattern = true; /* ";;": the next pattern */
		sc->start = false;
	} else if (!sc->pattern) {
		sc->start = true;
	}
}

/* A word at a command's start (or where a case pattern may end with esac). */
static void on_word(const char *w, bool plain, struct scan *sc, struct strv *out)
{
	if (sc->pattern) {
		if (!strcmp(w, "esac")) {
			sc->pattern = false;
			sc->cases--;
		}
		sc->start = false;
		return;
	}
	if (sc->redirect_target) {
		sc->redirect_target = false;
		return;
	}
	if (redirection_op(w)) {
		sc->redirect_target = true;
		return;
	}
	if (sc->after_prefix && (!strcmp(w, "-v") || !strcmp(w, "-V"))) {
		sc->start = false; /* command -v NAME asks, runs nothing */
		return;
	}
	if (redirection(w) || assignment(w) || (sc->after_prefix && w[0] == '-'))
		return;
	if (!plain) {
		sc->start = false;
		return;
	}
	if (!strcmp(w, "esac") && sc->cases > 0)
		sc->cases--;
	if (in_list(keywords, w))
		return;
	if (!strcmp(w, "case"))
		sc->cases++; /* its subject and "in" are skipped; ")" ends the first pattern */
	if (in_list(no_command, w)) {
		sc->start = false;
		return;
	}
	if (in_list(prefixes, w)) {
		sc->after_prefix = true;
		return;
	}
	push_once(out, w);
	sc->start = sc->after_prefix = false;
}

void cmdwords_script(const char *script, struct strv *out)
{
	struct lex l = {script, 0, strnlen(script, CMDWORDS_SCRIPT_MAX)};
	struct scan sc = {.start = true};
	while (l.i < l.n && out->n < CMDWORDS_MAX) {
		char c = l.s[l.i];
		if (is_blank(c)) {
			l.i++;
		} else if (sep_at(l.s, l.i, l.n)) {
			on_separator(&l, &sc);
		} else if (c == '#') { /* a comment, to the end of the line */
			while (l.i < l.n && l.s[l.i] != '\n')
				l.i++;
		} else if (!sc.start && !sc.pattern) {
			if (skip_command(&l))
				open_paren(&sc, false);
		} else {
			size_t from = l.i;
			bool plain;
			_cleanup_free_ char *w = read_word(&l, &plain);
			if (w) {
				on_word(w, plain, &sc, out);
				continue;
			}
			/* a "$(" in the word (or a word too long): an assignment's value keeps the
			 * command's start after it */
			_cleanup_free_ char *head = xstrndup(l.s + from, l.i - from);
			bool assigns = sc.start && !sc.pattern && head[0] &&
				       head[strlen(head) - 1] == '=' && assignment(head);
			if (skip_command(&l))
				open_paren(&sc, assigns);
			else
				sc.start = false;
		}
	}
}

static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", NULL};

/* sh [-abefx…] [-o OPT] -c SCRIPT …: the script, or NULL. */
static const char *shell_script(char *const *argv, size_t argc)
{
	bool c = false;
	size_t i = 1;
	while (i < argc) {
		const char *a = argv[i];
		if (!strcmp(a, "--") || !strcmp(a, "-")) {
			i++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (a[1] == '-') { /* bash's long options; two take a file */
			i += !strcmp(a, "--rcfile") || !strcmp(a, "--init-file") ? 2 : 1;
			continue;
		}
		size_t args = 0;
		for (const char *o = a + 1; *o; o++) {
			if (*o == 'c' && a[0] == '-')
				c = true;
			if (*o == 'o' || *o == 'O')
				args++;
		}
		i += 1 + args;
	}
	return c && i < argc ? argv[i] : NULL;
}

static void collect(char *const *argv, size_t argc, struct strv *out, int depth)
{
	if (!argc || !argv[0] || depth > 4)
		return;
	const char *base = path_basename(argv[0]);
	if (!strcmp(base, "env")) {
		size_t i = 1;
		while (i < argc) {
			const char *a = argv[i];
			if (!strcmp(a, "--")) {
				i++;
				break;
			}
			if (a[0] == '-') {
				if (!strncmp(a, "-S", 2) || !strncmp(a, "--split-string", 14))
					return; /* a command line in one string: not guessed at */
				bool arg = !strcmp(a, "-u") || !strcmp(a, "--unset") ||
					   !strcmp(a, "-C") || !strcmp(a, "--chdir");
				i += arg ? 2 : 1;
				continue;
			}
			if (!strchr(a, '='))
				break;
			i++;
		}
		if (i < argc) {
			push_once(out, argv[i]);
			collect(argv + i, argc - i, out, depth + 1);
		}
		return;
	}
	if (in_list(shells, base)) {
		const char *script = shell_script(argv, argc);
		if (script)
			cmdwords_script(script, out);
	}
}

void cmdwords_collect(char *const *argv, size_t argc, struct strv *out)
{
	collect(argv, argc, out, 0);
}
