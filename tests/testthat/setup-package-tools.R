# package_tools() caches help pages and schemas on disk: the tests keep
# theirs in the session's temporary directory, not the user's cache; or,
# when scripts/testthat-summary.R runs the files (each in an R process of
# its own), in one directory of that run, so that the files after the first
# read stats' and base's classification and help pages instead of working
# them out again (a cache entry is the same whoever writes it; tests of the
# cache itself use directories of their own).
cache_dir <- Sys.getenv("MCPLITE_TEST_PACKAGE_CACHE", file.path(tempdir(), "mcplite-pkgtools-cache"))
old_cache_opt <- options(mcplite.cache_dir = cache_dir)
withr::defer(options(old_cache_opt), teardown_env())
