// Registration glue: extendr generates R_init_mcplite_extendr in the Rust
// static library; R looks for R_init_mcplite when it loads the package.
void R_init_mcplite_extendr(void *dll);
void register_extendr_panic_hook(void);

void R_init_mcplite(void *dll) {
  register_extendr_panic_hook();
  R_init_mcplite_extendr(dll);
}

// Evaluating a tool call (used by rust/mcplite-r/src/rhost.rs). Written in C
// so that R's longjmp on an error or interrupt only crosses C frames: it ends
// at the R_ToplevelExec() context opened here, never inside Rust code.
//
// The error handler is a calling handler installed with the C API (much
// cheaper than an R-level withCallingHandlers() per call): it stores the
// condition in `slot_env` under `slot_sym` and unwinds (tool-unwind.c).
#include <Rinternals.h>

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
