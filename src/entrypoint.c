// Registration glue: extendr generates R_init_mcplite_extendr in the Rust
// static library; R looks for R_init_mcplite when it loads the package.
void R_init_mcplite_extendr(void *dll);
void register_extendr_panic_hook(void);

void R_init_mcplite(void *dll) {
  register_extendr_panic_hook();
  R_init_mcplite_extendr(dll);
}
