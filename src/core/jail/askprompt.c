/* askprompt: see askprompt.h. */
#include "core/jail/askprompt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

enum { AP_IDLE, AP_FLUSH, AP_SHOWN };

#define AP_GUARD_MS 300  /* keys typed this soon after the question appeared are dropped */
#define AP_REGROW_MS 150 /* a full-screen program redraws at a line less, then at its size */

void askprompt_init(struct askprompt *a, const struct askprompt_src *src)
{
	memset(a, 0, sizeof *a);
	a->src = src;
}

void askprompt_seen(void *arg, const char *buf, size_t n)
{
	struct askprompt *a = arg;
	ttyscan_feed(&a->scan, buf, n);
}

/* Our own bytes to the terminal (never through the relay: the scan is the jail's). */
static void put(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t k = write(fd, buf, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue; /* a terminal drains: a few hundred bytes */
		if (k <= 0)
			return;
		buf += k;
		n -= (size_t)k;
	}
}

static long long left_s(const struct askprompt *a)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	long long left = a->q.deadline_ms - now;
	return left > 0 ? (left + 999) / 1000 : 0;
}

static void draw(struct askprompt *a, int out_fd, bool first)
{
	a->drawn_s = left_s(a);
	size_t n;
	char *s = askterm_draw(&a->q, a->src->session, a->rows, a->cols, a->alt, first, a->drawn_s,
			       &n);
	put(out_fd, s, n);
	free(s);
}

static void measure(struct askprompt *a, int tty_fd)
{
	struct winsize ws;
	a->rows = 24;
	a->cols = 80;
	if (ioctl(tty_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		a->rows = ws.ws_row;
		a->cols = ws.ws_col;
	}
}

/* Take the question away and give the relay back; a full-screen program is made to redraw
 * what the question covered: a line less now, its size again shortly (a size change is what
 * every such program redraws for). */
static void hide(struct askprompt *a, struct pty_relay *r, int tty_fd, int master)
{
	if (a->st == AP_SHOWN) {
		size_t n;
		char *s = askterm_undraw(a->rows, a->alt, &n);
		put(r->out_fd, s, n);
		free(s);
		struct winsize ws;
		if (a->alt && master >= 0 && ioctl(tty_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 1) {
			ws.ws_row--;
			if (ioctl(master, TIOCSWINSZ, &ws) == 0)
				a->regrow_ms = clock_mono_ms() + AP_REGROW_MS;
		}
	}
	r->hold = false;
	a->st = AP_IDLE;
}

static void put_aside(struct askprompt *a, uint64_t id)
{
	if (a->nlater == ASKPROMPT_LATER_MAX) {
		memmove(a->later, a->later + 1, (ASKPROMPT_LATER_MAX - 1) * sizeof *a->later);
		a->nlater--;
	}
	a->later[a->nlater++] = id;
}

/* The person typed something while the question was shown. */
static void keys_in(struct askprompt *a, struct pty_relay *r, int in_fd, int tty_fd, int master)
{
	char buf[256];
	ssize_t k = read(in_fd, buf, sizeof buf);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (k <= 0) { /* the terminal is gone */
		hide(a, r, tty_fd, master);
		return;
	}
	enum askkey key = askkeys_feed(&a->keys, buf, (size_t)k);
	if (clock_mono_ms() - a->shown_ms < AP_GUARD_MS || key == AK_NONE)
		return; /* typed for the program before the question came, or no answer */
	uint64_t id = a->q.id;
	hide(a, r, tty_fd, master);
	put_aside(a, id); /* answered, or for later: not shown again while it is still open */
	if (key != AK_LATER)
		a->src->answered(a->src->arg, id, askkey_answer(key));
}

int askprompt_step(struct askprompt *a, struct pty_relay *r, int in_fd, int tty_fd, int master,
		   bool can, const struct pollfd *in)
{
	long long now = clock_mono_ms();
	if (a->regrow_ms && now >= a->regrow_ms) {
		a->regrow_ms = 0;
		(void)pty_copy_winsize(tty_fd, master);
	}
	struct net_question q;
	bool have = can && a->src &&
		    a->src->question(a->src->arg, a->later, a->nlater, &q);
	if (a->st != AP_IDLE && (!have || q.id != a->q.id)) /* answered elsewhere, out of time,
							    * or the terminal is not ours now */
		hide(a, r, tty_fd, master);
	if (a->st == AP_SHOWN && in && in->fd >= 0 && (in->revents & (POLLIN | POLLHUP | POLLERR)))
		keys_in(a, r, in_fd, tty_fd, master);
	if (a->st == AP_IDLE && have) {
		a->q = q;
		/* what the jail wrote before it asked goes out first (a full-screen program's
		 * screen: where the question is drawn depends on it); from then on nothing of the
		 * jail's is read */
		struct err e = {0};
		if (pty_relay_pull(r, &e) < 0)
			r->master_eof = true;
		r->hold = true;
		a->st = AP_FLUSH;
	}
	if (a->st == AP_FLUSH && r->to_out_len == 0) { /* what was read of it is out */
		measure(a, tty_fd);
		a->alt = a->scan.alt;
		memset(&a->keys, 0, sizeof a->keys);
		draw(a, r->out_fd, true);
		a->shown_ms = now;
		a->st = AP_SHOWN;
	} else if (a->st == AP_SHOWN && a->drawn_s < 0) { /* the window changed size */
		measure(a, tty_fd);
		draw(a, r->out_fd, true);
	} else if (a->st == AP_SHOWN && left_s(a) != a->drawn_s) {
		draw(a, r->out_fd, false); /* the time left */
	}
	int t = a->st == AP_SHOWN ? 250 : a->st == AP_FLUSH ? 50 : -1;
	if (a->regrow_ms) {
		long long w = a->regrow_ms - now;
		t = t < 0 || w < t ? (int)(w > 0 ? w : 0) : t;
	}
	return t;
}

struct pollfd askprompt_fill(const struct askprompt *a, int in_fd)
{
	return (struct pollfd){.fd = a->st == AP_SHOWN ? in_fd : -1, .events = POLLIN};
}

void askprompt_resized(struct askprompt *a)
{
	if (a->st == AP_SHOWN)
		a->drawn_s = -1; /* redrawn at the next step */
}

void askprompt_end(struct askprompt *a, struct pty_relay *r, int tty_fd, int master)
{
	hide(a, r, tty_fd, master);
	a->regrow_ms = 0;
}
