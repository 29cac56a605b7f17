# package_tools() caches help pages and schemas on disk: the tests keep
# theirs in the session's temporary directory, not the user's cache.
cache_dir <- file.path(tempdir(), "mcplite-pkgtools-cache")
old_cache_opt <- options(mcplite.cache_dir = cache_dir)
withr::defer(options(old_cache_opt), teardown_env())
