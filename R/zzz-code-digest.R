# The identity of mcplite's R code for the cache keys of package_tools()
# (mcplite_code_id(), RULES R8.6), worked out once, when the package is
# installed: this file is sourced last (no Collate field: files are sourced
# in alphabetical order), so every function of the package is defined here.
mcplite_code_digest <- code_identity(environment())
