# Benchmark: the Rust payload encoder versus jsonlite::toJSON().
#
#   Rscript bench/encode.R            # uses the installed mcplite
#   R_LIBS=/path/to/lib Rscript bench/encode.R
#
# Install a release build first (R CMD INSTALL . without MCPLITE_PROFILE).
# For each case: median times of several runs in this R process of
# jsonlite::toJSON(), of mcplite's encoder returning an R string
# (json_encode(): includes R's own string creation) and returning the bytes
# (json_encode_raw(): what the server writes), the speed-ups, byte-identity
# with jsonlite, and peak memory of one encode (in a fresh process) relative
# to the output size.

suppressPackageStartupMessages({
  library(jsonlite)
  library(mcplite)
})
json_encode <- mcplite:::json_encode
json_encode_raw <- mcplite:::json_encode_raw

reps <- as.integer(Sys.getenv("MCPLITE_BENCH_REPS", "7"))

# Run jsonlite, mcplite (R string) and mcplite (bytes) alternately `reps`
# times (so all see the same machine load) and return the median elapsed
# and CPU (user + system) seconds of each.
timings <- function(jl, mc, mb, reps) {
  jl()
  mc()
  mb()
  t <- matrix(NA_real_, reps, 6, dimnames = list(NULL, c("jl_wall", "jl_cpu", "mc_wall", "mc_cpu", "mb_wall", "mb_cpu")))
  one <- function(f) {
    gc(FALSE)
    a <- system.time(f(), gcFirst = FALSE)
    c(a[["elapsed"]], a[["user.self"]] + a[["sys.self"]])
  }
  for (i in seq_len(reps)) {
    t[i, ] <- c(one(jl), one(mc), one(mb))
  }
  apply(t, 2, stats::median)
}

# Peak memory of one encode, measured in a fresh R process: growth of the
# peak RSS (VmHWM, reset through /proc/self/clear_refs) over the RSS before
# the call. glibc is told to serve large blocks with mmap so that freed
# memory is really returned and not reused silently.
peak_memory <- function(case_index, which = c("mcplite", "jsonlite")) {
  which <- match.arg(which)
  if (!file.exists("/proc/self/clear_refs")) {
    return(NA_real_)
  }
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(
    sprintf("source(%s, local = TRUE)", deparse(bench_inputs_file)),
    sprintf("cs <- cases[[%d]]", case_index),
    "st <- function(f) as.numeric(gsub('[^0-9]', '', grep(paste0('^', f), readLines('/proc/self/status'), value = TRUE))) * 1024",
    if (which == "mcplite") {
      "f <- function() do.call(mcplite:::json_encode, c(list(cs$x), cs$args))"
    } else {
      "f <- function() as.character(do.call(jsonlite::toJSON, c(list(cs$x, auto_unbox = TRUE, null = 'null'), cs$args)))"
    },
    "invisible(f()); invisible(gc(FALSE)); invisible(gc(FALSE))",
    "cat('5', file = '/proc/self/clear_refs'); before <- st('VmRSS')",
    "res <- f(); peak <- st('VmHWM')",
    "cat(peak - before, nchar(res, type = 'bytes'), '\\n')"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE,
    env = c("MALLOC_MMAP_THRESHOLD_=65536", "MALLOC_TRIM_THRESHOLD_=65536"))
  v <- as.numeric(strsplit(trimws(utils::tail(out, 1)), " +")[[1]])
  v[1] / v[2]
}

bench_inputs_file <- tempfile(fileext = ".R")
writeLines(c(
  "suppressPackageStartupMessages({library(jsonlite); library(mcplite)})",
  deparse(quote({
    set.seed(1)
    n <- 100000L
    df <- data.frame(
      dbl = ifelse(runif(n) < 0.05, NA, rnorm(n) * 100),
      int = ifelse(runif(n) < 0.05, NA, sample.int(1e6, n, TRUE)),
      chr = ifelse(runif(n) < 0.05, NA, paste0("item-", sample.int(1e4, n, TRUE))),
      lgl = ifelse(runif(n) < 0.05, NA, runif(n) < 0.5),
      fct = factor(ifelse(runif(n) < 0.05, NA, sample(c("red", "green", "blue"), n, TRUE))),
      stringsAsFactors = FALSE
    )
    dbl <- rnorm(1e6) * 1000

    cases <- list(
      list(name = "data frame, 100k rows x 5 cols (dbl, int, chr, lgl, factor, with NAs)", x = df, args = list()),
      list(name = "data frame, same, digits = NA", x = df, args = list(digits = NA)),
      list(name = "1e6 doubles, default digits (4)", x = dbl, args = list()),
      list(name = "1e6 doubles, digits = NA", x = dbl, args = list(digits = NA)),
      list(name = "1e6 doubles, digits = I(6)", x = dbl, args = list(digits = I(6)))
    )
  }))
), bench_inputs_file)
source(bench_inputs_file, local = TRUE)

rows <- list()
for (cs in cases) {
  jl <- function() do.call(jsonlite::toJSON, c(list(cs$x, auto_unbox = TRUE, null = "null"), cs$args))
  mc <- function() do.call(json_encode, c(list(cs$x), cs$args))
  mb <- function() do.call(json_encode_raw, c(list(cs$x), cs$args))
  same <- identical(as.character(jl()), mc()) && identical(charToRaw(as.character(jl())), mb())
  out_size <- as.numeric(nchar(mc(), type = "bytes"))
  tm <- timings(jl, mc, mb, reps)
  mem <- peak_memory(length(rows) + 1L, "mcplite")
  rows[[length(rows) + 1L]] <- data.frame(
    case = cs$name,
    jsonlite_s = round(tm[["jl_wall"]], 3),
    mcplite_string_s = round(tm[["mc_wall"]], 4),
    speedup_string = round(tm[["jl_wall"]] / tm[["mc_wall"]], 1),
    mcplite_bytes_s = round(tm[["mb_wall"]], 4),
    speedup_bytes = round(tm[["jl_wall"]] / tm[["mb_wall"]], 1),
    cpu_speedup_string = round(tm[["jl_cpu"]] / tm[["mc_cpu"]], 1),
    cpu_speedup_bytes = round(tm[["jl_cpu"]] / tm[["mb_cpu"]], 1),
    identical = same,
    output_MB = round(out_size / 1e6, 2),
    peak_mem_x_output = round(mem, 2)
  )
  message(sprintf("%-72s string %5.1fx bytes %5.1fx identical=%s mem=%.2fx", cs$name,
    tm[["jl_wall"]] / tm[["mc_wall"]], tm[["jl_wall"]] / tm[["mb_wall"]], same, mem))
}
res <- do.call(rbind, rows)
print(res[, -1], row.names = FALSE)
print(res[, 1, drop = FALSE])
cat("\nR", as.character(getRversion()), "| jsonlite", as.character(packageVersion("jsonlite")),
    "| mcplite", as.character(packageVersion("mcplite")), "| reps", reps, "\n")
