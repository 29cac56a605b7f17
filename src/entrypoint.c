// Registration glue: extendr generates R_init_mcplite_extendr in the Rust
// static library (it registers the .Call entry points); R looks for
// R_init_mcplite when it loads the package. One entry point is not
// extendr's: mcp_progress()'s, a .External routine written in Rust without
// extendr's wrapper (rust/mcplite-r/src/running_call.rs says why). Registering
// .External routines leaves the .Call table as extendr set it, and resets
// dynamic lookup, which is switched off again.
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

void R_init_mcplite_extendr(void *dll);
void register_extendr_panic_hook(void);
SEXP mcplite_progress(SEXP args);

static const R_ExternalMethodDef mcplite_externals[] = {
  {"mcplite_progress", (DL_FUNC) &mcplite_progress, 3},
  {NULL, NULL, 0}
};

void R_init_mcplite(DllInfo *dll) {
  register_extendr_panic_hook();
  R_init_mcplite_extendr(dll);
  R_registerRoutines(dll, NULL, NULL, NULL, mcplite_externals);
  R_useDynamicSymbols(dll, FALSE);
}

// The two places where R code runs under the tool host
// (rust/mcplite-r/src/host.rs). Written in C so that R's longjmp on an error
// or interrupt only crosses C frames: it ends at the R_ToplevelExec() context
// opened here, never inside Rust code. Only R's documented API is used.
#include <Rinternals.h>

// --- Evaluating a tool call ------------------------------------------------
//
// The error handler is a calling handler installed with the C API (much
// cheaper than an R-level withCallingHandlers() per call): it stores the
// condition in `slot_env` under `slot_sym` and unwinds (tool-unwind.c).
// Errors R signals to exiting handlers only (C stack overflow) skip it; the
// host reads their message with geterrmessage().

typedef struct {
  SEXP call, env, slot_env, slot_sym, value;
  int done;
} mcplite_eval_t;

static SEXP mcplite_eval_body(void *p) {
  mcplite_eval_t *d = (mcplite_eval_t *) p;
  return Rf_eval(d->call, d->env);
}

void mcplite_unwind_handled_error(void); // tool-unwind.c

static SEXP mcplite_eval_on_error(SEXP cond, void *p) {
  mcplite_eval_t *d = (mcplite_eval_t *) p;
  Rf_defineVar(d->slot_sym, cond, d->slot_env);
  mcplite_unwind_handled_error(); // does not return
  return R_NilValue;
}

static void mcplite_eval_run(void *p) {
  mcplite_eval_t *d = (mcplite_eval_t *) p;
  d->value = R_withCallingErrorHandler(mcplite_eval_body, d, mcplite_eval_on_error, d);
  d->done = 1;
}

// Returns 1 and sets *value (unprotected) when `call` returned normally,
// 0 when R jumped out (error or interrupt).
int mcplite_eval_guarded(SEXP call, SEXP env, SEXP slot_env, SEXP slot_sym, SEXP *value) {
  mcplite_eval_t d = {call, env, slot_env, slot_sym, R_NilValue, 0};
  Rboolean ok = R_ToplevelExec(mcplite_eval_run, &d);
  *value = d.value;
  return ok && d.done;
}

// --- Interrupts while idle ------------------------------------------------------
//
// R_CheckUserInterrupt() runs R's interrupt handling when the user pressed
// Ctrl-C (SIGINT). Under an exiting handler for "interrupt" conditions the
// interrupt ends in that handler, before R's default handling (which would
// write a blank line to stderr); R_ToplevelExec() contains anything else
// R_CheckUserInterrupt() may raise (a time limit set with setTimeLimit()).
// The handler is established with R_tryCatch(), which evaluates R code: a few
// microseconds, spent only while the server waits for requests.

typedef struct {
  int hit;
} mcplite_interrupt_t;

static SEXP mcplite_interrupt_body(void *p) {
  (void) p;
  R_CheckUserInterrupt();
  return R_NilValue;
}

static SEXP mcplite_interrupt_caught(SEXP cond, void *p) {
  (void) cond;
  ((mcplite_interrupt_t *) p)->hit = 1;
  return R_NilValue;
}

static void mcplite_interrupt_run(void *p) {
  SEXP classes = PROTECT(Rf_mkString("interrupt"));
  R_tryCatch(mcplite_interrupt_body, NULL, classes, mcplite_interrupt_caught, p, NULL, NULL);
  UNPROTECT(1);
}

// 1 when an interrupt was pending (it is consumed), else 0.
int mcplite_take_interrupt(void) {
  mcplite_interrupt_t d = {0};
  R_ToplevelExec(mcplite_interrupt_run, &d);
  return d.hit;
}
