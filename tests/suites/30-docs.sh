#!/usr/bin/env bash
# Documentation suite:
#   1. every vignette builds with rmarkdown/knitr against the installed package
#      (the pages R CMD build rendered into the installed package are checked
#      when they come from these sources);
#   2. the examples of every exported function, and of every other help page
#      with examples, run (example() on the installed help pages, each topic
#      in a fresh R process; blocking examples stay off);
#   3. the README quick start, followed literally: the install command runs in
#      a copy of the clone (without target/) into a fresh library, the rest in
#      a temporary directory.
# Runs from the repository root; uses the library in $MCPLITE_LIB when set.
# Prints "N passed, N failed" last and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
if [ -n "${MCPLITE_LIB:-}" ]; then export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"; fi
unset MCPLITE_CAN_BLOCK_PROCESS
export LANG="${LANG:-C.UTF-8}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. tests/suites/lib.sh

if ! Rscript --vanilla -e 'library(mcplite)' >/dev/null 2>&1; then
  bad "mcplite can be loaded (R_LIBS=${R_LIBS:-})"
  finish
fi

# 1. Vignettes -------------------------------------------------------------
# The installed package's guides: R CMD build renders every vignette (it
# fails when one does not build) and the install puts the source (.Rmd) and
# the rendered page (.html) in doc/. A guide whose installed source is this
# checkout's vignette, byte for byte, was rendered from it (in the test
# command: by the set-up's R CMD build, once per run) and its page is checked;
# any other (a dev install without guides, an older build) is rendered here.
docdir=$(Rscript --vanilla -e 'cat(system.file("doc", package = "mcplite"))' 2>/dev/null)
for rmd in vignettes/*.Rmd; do
  [ -e "$rmd" ] || continue
  name=$(basename "$rmd" .Rmd)
  log="$work/vignette-$name.log"
  if [ -n "$docdir" ] && cmp -s "$rmd" "$docdir/$name.Rmd" && [ -f "$docdir/$name.html" ]; then
    html="$docdir/$name.html"
    how="rendered by R CMD build"
    : >"$log"
  else
    out="$work/vignette-$name"
    mkdir -p "$out"
    cp -R vignettes/. "$out/"
    html="$out/$name.html"
    how="rendered here"
    Rscript --vanilla -e '
        args <- commandArgs(TRUE)
        html <- rmarkdown::render(args[[1]], output_dir = dirname(args[[1]]), quiet = TRUE,
                                  envir = new.env(parent = globalenv()))
        cat("built", html, "\n")
      ' "$out/$name.Rmd" >"$log" 2>&1
  fi
  # A chunk that failed shows "## Error" in the page (chunks with error = TRUE
  # are not allowed to hide a failure either).
  if [ -s "$html" ] && ! grep -qF "## Error" "$html"; then
    ok "vignette $name builds ($how)"
  else
    echo "no page, or the rendered page $html shows an error" >>"$log"
    bad "vignette $name builds ($how)" "$log"
  fi
done

# 2. Examples of every exported function -----------------------------------
Rscript --vanilla -e '
  exports <- sort(getNamespaceExports("mcplite"))
  db <- tools::Rd_db("mcplite")
  alias_of <- lapply(db, function(rd) {
    tags <- vapply(rd, function(x) attr(x, "Rd_tag"), character(1))
    vapply(rd[tags == "\\alias"], function(x) paste(unlist(x), collapse = ""), character(1))
  })
  has_examples <- vapply(db, function(rd) {
    any(vapply(rd, function(x) identical(attr(x, "Rd_tag"), "\\examples"), logical(1)))
  }, logical(1))
  topics <- sub("\\.Rd$", "", names(db))
  for (e in exports) {
    hit <- which(vapply(alias_of, function(a) e %in% a, logical(1)))
    topic <- if (length(hit)) topics[[hit[[1]]]] else ""
    cat(e, topic, if (length(hit) && has_examples[[hit[[1]]]]) "yes" else "no", "\n")
  }
  # Help pages with examples that no export names (conditions, topics):
  # R CMD check runs every example, and leaves that to this suite.
  named <- unlist(lapply(alias_of, function(a) any(a %in% exports)))
  for (t in topics[has_examples & !named]) cat("-", t, "yes", "\n")
' >"$work/exports.txt" 2>"$work/exports.err" || { bad "list exported topics" "$work/exports.err"; }

declare -A done_topics=()
while read -r export topic examples; do
  if [ -z "$topic" ] || [ "$topic" = "yes" ] || [ "$topic" = "no" ]; then
    bad "export $export has a help page"
    continue
  fi
  if [ "$examples" != "yes" ]; then
    bad "export $export has examples (help page $topic)"
    continue
  fi
  if [ -n "${done_topics[$topic]:-}" ]; then continue; fi
  done_topics[$topic]=1
  log="$work/example-$topic.log"
  if (cd "$work" && Rscript --vanilla -e '
      library(mcplite)
      example(commandArgs(TRUE)[[1]], package = "mcplite", character.only = TRUE,
              ask = FALSE, echo = TRUE, run.dontrun = FALSE)
    ' "$topic" >"$log" 2>&1); then
    ok "examples of $topic run"
  else
    bad "examples of $topic run" "$log"
  fi
done <"$work/exports.txt"

# 3. README quick start, literally -------------------------------------------
qs="$work/quickstart"
mkdir -p "$qs"
cat >"$work/quickstart.R" <<'REOF'
`%||%` <- function(x, y) if (is.null(x)) y else x
args <- commandArgs(TRUE)
readme <- readLines(args[[1]], encoding = "UTF-8", warn = FALSE)
root <- dirname(normalizePath(args[[1]]))
dir <- args[[2]]
# Blocks are announced by "<!-- quickstart: file NAME -->", "<!-- quickstart: run sh -->"
# or "<!-- quickstart: output -->" directly above a fenced code block.
marks <- grep("^<!-- quickstart: .* -->$", readme)
blocks <- lapply(marks, function(i) {
  kind <- sub("^<!-- quickstart: (.*) -->$", "\\1", readme[[i]])
  start <- i + 1L
  stopifnot(grepl("^```", readme[[start]]))
  end <- start + which(grepl("^```\\s*$", readme[-seq_len(start)]))[[1]]
  list(kind = kind, body = readme[(start + 1L):(end - 1L)])
})
version <- as.character(packageVersion("mcplite"))
results <- character()
report <- function(ok, what, detail = NULL) {
  cat(if (ok) "ok   - " else "FAIL - ", what, "\n", sep = "")
  if (!ok && length(detail)) cat(paste0("       ", detail), sep = "\n")
  results[[length(results) + 1L]] <<- if (ok) "pass" else "fail"
}
report(length(blocks) >= 5, "README has the quick start blocks")
last_out <- NULL
lib <- NULL
for (b in blocks) {
  ran <- Sys.getenv("MCPLITE_QUICKSTART_RAN")
  ran <- if (nzchar(ran) && file.exists(ran)) readLines(ran, warn = FALSE)
  if (b$kind == "install" && length(ran) > 1L && identical(ran[-1L], b$body)) {
    # The set-up (scripts/setup.sh) ran this very block, line by line, in a
    # copy of the clone: its installation is checked instead of building
    # and installing the package a second time.
    lib <- ran[[1L]]
    installed <- file.exists(file.path(lib, "mcplite", "DESCRIPTION"))
    report(installed, paste("quick start install runs (run by the set-up):", b$body[[1]]), lib)
    guides <- sort(sub("\\.html$", "", list.files(file.path(lib, "mcplite", "doc"), "\\.html$")))
    report(all(c("mcplite", "return-results", "write-tools") %in% guides),
           "the quick start install installs the guides (vignettes)", guides)
    if (installed) Sys.setenv(R_LIBS = paste(unique(c(lib, .libPaths())), collapse = .Platform$path.sep))
  } else if (b$kind == "install") {
    # Run in a copy of the clone as a newcomer has it, without the build
    # output beside it (scripts/stage.sh): `R CMD build .` copies the whole
    # directory before it drops what .Rbuildignore names, and after the
    # cargo tests target/ alone is several GB (a CI machine ran out of disk).
    # The block keeps a CARGO_TARGET_DIR that is set, and the run sets it to
    # the checkout's target directory (src/Makevars honours it), so the
    # crates the tests built are not compiled again. (Not a link to it in
    # the copy: R CMD build's file.copy() follows a link to a directory and
    # copied all of target/, several GB, into its temporary directory; for
    # the same reason the block's own default is outside the package.)
    # Installs into a fresh library put first on the library path, so the
    # rest of the quick start uses it.
    clone <- system2("bash", c(file.path(root, "scripts", "stage.sh"), shQuote(dir)), stdout = TRUE)
    target <- Sys.getenv("CARGO_TARGET_DIR", file.path(root, "target"))
    dir.create(target, showWarnings = FALSE)
    old_target <- Sys.getenv("CARGO_TARGET_DIR", NA)
    Sys.setenv(CARGO_TARGET_DIR = normalizePath(target))
    lib <- file.path(dir, "r-lib")
    dir.create(lib)
    Sys.setenv(R_LIBS = paste(c(lib, .libPaths()), collapse = .Platform$path.sep))
    script <- tempfile(fileext = ".sh")
    writeLines(b$body, script)
    log <- file.path(dir, "install.log")
    old <- setwd(clone)
    status <- system2("bash", script, stdout = log, stderr = log)
    setwd(old)
    if (is.na(old_target)) Sys.unsetenv("CARGO_TARGET_DIR") else Sys.setenv(CARGO_TARGET_DIR = old_target)
    installed <- file.exists(file.path(lib, "mcplite", "DESCRIPTION"))
    report(status == 0L && installed, paste("quick start install runs:", b$body[[1]]),
           tail(readLines(log, warn = FALSE), 20))
    # The help pages point to vignette("mcplite") and the other guides.
    guides <- sort(sub("\\.html$", "", list.files(file.path(lib, "mcplite", "doc"), "\\.html$")))
    report(all(c("mcplite", "return-results", "write-tools") %in% guides),
           "the quick start install installs the guides (vignettes)", guides)
    if (!installed) Sys.setenv(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  } else if (startsWith(b$kind, "file ")) {
    writeLines(b$body, file.path(dir, sub("^file ", "", b$kind)))
  } else if (b$kind == "run sh") {
    script <- tempfile(fileext = ".sh")
    writeLines(b$body, script)
    old <- setwd(dir)
    out <- suppressWarnings(system2("bash", script, stdout = TRUE, stderr = FALSE))
    setwd(old)
    status <- attr(out, "status") %||% 0L
    report(status == 0L, paste("quick start command runs:", b$body[[1]]), out)
    last_out <- list(cmd = paste(b$body, collapse = "\n"), out = out)
    if (grepl("mcp_client_config", last_out$cmd, fixed = TRUE)) {
      text <- paste(out, collapse = "\n")
      json <- regmatches(text, regexpr("(?s)\\{\\n.*\\n\\}", text, perl = TRUE))
      cfg <- tryCatch(jsonlite::fromJSON(json, simplifyVector = FALSE), error = function(e) NULL)
      entry <- if (!is.null(cfg)) cfg$mcpServers[[1]]
      report(!is.null(entry), "mcp_client_config() prints an mcpServers entry", out)
      if (!is.null(entry)) {
        report(identical(unlist(entry$args), c("--vanilla", normalizePath(file.path(dir, "server.R")))),
               "the entry runs the quick start script by absolute path", unlist(entry$args))
        report(file.exists(entry$command) && grepl("Rscript", basename(entry$command)),
               "the entry's command is an existing Rscript", entry$command)
        # (The set-up may have installed into one of R's default libraries,
        # which a server finds without R_LIBS.)
        defaults <- normalizePath(c(.Library, .Library.site), mustWork = FALSE)
        if (!is.null(lib) && file.exists(file.path(lib, "mcplite")) && !normalizePath(lib) %in% defaults) {
          report(startsWith(entry$env$R_LIBS %||% "", normalizePath(lib)),
                 "the entry's R_LIBS points at the library the quick start installed into",
                 entry$env$R_LIBS %||% "(no env entry)")
        } else if (!is.null(lib)) {
          report(is.null(entry$env$R_LIBS), "the entry needs no R_LIBS: the quick start installed into R's default library",
                 entry$env$R_LIBS)
        }
        # Launch the server exactly as a client would, with a bare environment.
        env <- c(PATH = Sys.getenv("PATH"), HOME = tempdir(), unlist(entry$env))
        req <- tempfile()
        writeLines('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"describe_data","arguments":{"dataset":"iris"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}', req)
        res <- processx::run(entry$command, unlist(entry$args), env = env, stdin = req,
                             error_on_status = FALSE, timeout = 60)
        reply <- tryCatch(jsonlite::fromJSON(res$stdout, simplifyVector = FALSE), error = function(e) NULL)
        text <- if (!is.null(reply)) reply$result$content[[1]]$text
        report(identical(text, '{"rows":150,"columns":["Sepal.Length","Sepal.Width","Petal.Length","Petal.Width","Species"]}'),
               "a client launching the configured entry can call describe_data", c(res$stdout, res$stderr))
      }
    }
  } else if (b$kind == "output") {
    expected <- gsub('"version":"[^"]*"', paste0('"version":"', version, '"'), b$body)
    report(!is.null(last_out) && identical(last_out$out, expected),
           "the command prints exactly the output shown in the README",
           c("expected:", expected, "got:", last_out$out))
  } else {
    report(FALSE, paste("unknown quick start block kind:", b$kind))
  }
}
cat("quickstart-counts", sum(results == "pass"), sum(results == "fail"), "\n")
REOF
Rscript --vanilla "$work/quickstart.R" "$root/README.md" "$qs" >"$work/quickstart.log" 2>&1
cat "$work/quickstart.log"
counts=$(grep '^quickstart-counts' "$work/quickstart.log" | tail -1)
if [ -n "$counts" ]; then
  set -- $counts
  pass=$((pass + $2))
  fail=$((fail + $3))
else
  bad "README quick start ran to the end"
fi

finish
