// Exiting semantics for errors in tool calls. The error handler in
// entrypoint.c is a calling handler: it records the condition and returns.
// Code that signals an error condition and then looks at whether anyone
// handled it (rlang's abort(), and so cli and the tidyverse) treats a handler
// that returns as "unhandled" and prints the error and a backtrace to stderr
// before stopping. Once the condition is recorded, the call is over, as it
// would be under tryCatch(error = ): invoking R's "abort" restart jumps
// straight to the R_ToplevelExec() context that entrypoint.c opened for the
// call, running on.exit() code on the way.
#include <Rinternals.h>

void mcplite_unwind_handled_error(void) {
  SEXP what = PROTECT(Rf_mkString("abort"));
  SEXP call = PROTECT(Rf_lang2(Rf_install("invokeRestart"), what));
  Rf_eval(call, R_BaseEnv); // does not return
  UNPROTECT(2);
}
