/* tui_view: draws the TUI's model with ncursesw and reads keys (cmd/tui/tui_view.c). Nothing here
 * decides anything: the behaviour is cmd/tui/tui_model.c. */
#pragma once
#include <stdbool.h>

struct tui_model;

/* Start curses (alternate screen, raw keys, no echo); colors unless NO_COLOR is set. The
 * terminal is given back by tuiv_stop, at exit, and on SIGSEGV/SIGBUS/SIGABRT/SIGFPE. */
int tuiv_start(void);
/* Leave curses (idempotent, also from atexit). */
void tuiv_stop(void);
/* Before giving the terminal to a child: leave curses; after: take it back and redraw. */
void tuiv_suspend(void);
void tuiv_resume(void);
/* The terminal modes saved at tuiv_start, put back (after a child, before curses returns). */
void tuiv_shell_modes(void);
void tuiv_draw(struct tui_model *m);
/* A key as tui_model knows it, TUIV_NONE after timeout_ms without one, TUIV_RESIZE when the
 * window changed size (redraw). */
#define TUIV_NONE (-1)
#define TUIV_RESIZE (-2)
int tuiv_key(int timeout_ms);
