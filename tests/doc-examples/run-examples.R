# Run every R and shell example of the documentation: the README, the
# vignettes (every chunk: `eval = FALSE` ones and plain ```r / ```sh fences
# included) and the help pages (`\examples` with their `\dontrun{}` parts, for
# every topic with a part that example() does not run; the rest is run by
# tests/suites/30-docs.sh).
#
#   Rscript --vanilla tests/doc-examples/run-examples.R                 # every document
#   Rscript --vanilla tests/doc-examples/run-examples.R README.md man/mcp_server.Rd
#
# Each document runs in a fresh R process and a working directory of its own,
# its examples in order in one global environment (as knitr does), so an
# example sees what the examples before it defined. How examples are run:
#
# * R code runs as written. A call of `mcp_server()` (which blocks) starts the
#   server in a background process instead, with the document's global
#   environment, attached packages and mcplite options, and a real client
#   (`mcp_connect()`) lists its tools and makes the calls that
#   tests/doc-examples/examples.dcf gives for the example; over HTTP `GET /health` is
#   checked too. The server runs until the document ends, then gets SIGTERM
#   and must exit with status 0 after saying that SIGTERM stopped it.
# * Shell code runs one command at a time (lines joined at a trailing `\`,
#   a command spanning lines such as `for ... done` kept whole), each in its
#   own bash (shell variables do not carry over), standard input closed. A command that prints mcplite's
#   "serving MCP over HTTP at <url>" line is a server, driven and stopped like
#   the above; any other command must exit with status 0. Lines `#> ...`
#   under a command are output it must print.
# * Placeholders: ports 8080 to 8089 stand for free ports picked here
#   (`MCPLITE_PORT` defaults to the one for 8080); `/absolute/path/to/` is the
#   document's working directory; `server.R` there is the last complete server
#   script the document showed (R code with `library(mcplite)` or `mcplite::`
#   and `mcp_server()`), at first mcplite's example server. A server started
#   where an earlier example's server still listens replaces it. `npx` finds
#   the MCP servers installed by scripts/deps/20-clients.sh.
#
# Examples that need something absent here are listed with the reason in
# tests/doc-examples/examples.dcf (the one place); an entry there that matches no
# example is an error too. Each result line names the file, the line and the
# first line of the example. The last line is "N passed, N failed".

local({
  `%||%` <- function(x, y) if (is.null(x) || length(x) == 0L) y else x
  trim <- function(x) sub("^\\s+", "", sub("\\s+$", "", x))
  first_line <- function(code) {
    code <- trim(code)
    code <- code[nzchar(code)]
    if (length(code)) code[[1]] else ""
  }
  script_path <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[[1]])
  here <- normalizePath(dirname(script_path))
  root <- normalizePath(file.path(here, "..", ".."))
  rscript <- file.path(R.home("bin"), "Rscript")
  base_packages <- c("stats", "graphics", "grDevices", "utils", "datasets", "methods", "base")

  read_config <- function() {
    lines <- readLines(file.path(here, "examples.dcf"), encoding = "UTF-8", warn = FALSE)
    recs <- read.dcf(textConnection(lines[!grepl("^#", lines)]), all = TRUE)
    recs$id <- seq_len(nrow(recs))
    for (f in c("File", "Example", "Containing", "Skip", "Call", "Expect", "Progress")) {
      if (is.null(recs[[f]])) recs[[f]] <- NA_character_
    }
    recs
  }

  # Extraction -----------------------------------------------------------------

  # Code blocks of a Markdown or R Markdown file: list(line, lang, code,
  # options: the chunk options unevaluated, or NULL for a plain fence).
  md_blocks <- function(path) {
    lines <- readLines(path, encoding = "UTF-8", warn = FALSE)
    blocks <- list()
    i <- 1L
    while (i <= length(lines)) {
      m <- regmatches(lines[[i]], regexec("^(\\s*)(```+)\\s*(\\{.*\\}|[A-Za-z0-9_+-]*)\\s*$", lines[[i]]))[[1]]
      if (length(m) == 0L) {
        i <- i + 1L
        next
      }
      indent <- m[[2]]
      fence <- m[[3]]
      info <- m[[4]]
      end <- i + 1L
      while (end <= length(lines) && !grepl(paste0("^\\s*", fence, "\\s*$"), lines[[end]])) end <- end + 1L
      body <- if (end > i + 1L) lines[(i + 1L):(end - 1L)] else character()
      body <- sub(paste0("^", indent), "", body)
      options <- NULL
      if (startsWith(info, "{")) {
        inner <- trim(sub("^\\{", "", sub("\\}$", "", info)))
        lang <- sub("^([A-Za-z0-9_]+).*$", "\\1", inner)
        rest <- trim(substring(inner, nchar(lang) + 1L))
        rest <- sub("^,", "", rest)
        # a chunk label (before the first comma, without "=") is not an option
        label <- sub(",.*$", "", rest)
        if (nzchar(trim(label)) && !grepl("=", label)) rest <- sub("^[^,]*,?", "", rest)
        options <- eval(str2lang(paste0("alist(", rest, ")")))
      } else {
        lang <- info
      }
      lang <- switch(tolower(lang), bash = , shell = "sh", tolower(lang))
      blocks[[length(blocks) + 1L]] <- list(line = i, lang = lang, code = body, options = options)
      i <- end + 1L
    }
    blocks
  }

  rd_text <- function(x) {
    paste(unlist(lapply(x, function(y) if (is.list(y)) rd_text(y) else as.character(y))), collapse = "")
  }

  # The examples of an installed help page: the code outside \dontrun{} as one
  # block, then each \dontrun{} or \donttest{} block.
  rd_blocks <- function(rd, source) {
    tags <- vapply(rd, function(x) attr(x, "Rd_tag") %||% "", "")
    if (!any(tags == "\\examples")) return(list())
    src <- if (file.exists(source)) readLines(source, warn = FALSE) else character()
    line_of <- function(code) {
      hit <- which(trim(src) == first_line(code))
      if (length(hit)) hit[[1]] else NA_integer_
    }
    plain <- character()
    extra <- list()
    for (part in rd[tags == "\\examples"][[1]]) {
      tag <- attr(part, "Rd_tag") %||% ""
      if (tag %in% c("\\dontrun", "\\donttest")) {
        code <- strsplit(rd_text(part), "\n")[[1]]
        extra[[length(extra) + 1L]] <- list(line = line_of(code), lang = "r", code = code, options = NULL)
      } else {
        plain <- c(plain, rd_text(list(part)))
      }
    }
    code <- strsplit(paste(plain, collapse = ""), "\n")[[1]]
    c(list(list(line = line_of(code), lang = "r", code = code, options = NULL)), extra)
  }

  # Help pages with a part example() leaves out: \dontrun{}, \donttest{}, or a
  # server guarded by MCPLITE_CAN_BLOCK_PROCESS.
  rd_documents <- function() {
    db <- tools::Rd_db("mcplite")
    keep <- vapply(db, function(rd) {
      blocks <- rd_blocks(rd, "")
      length(blocks) > 1L || (length(blocks) == 1L &&
        any(grepl("MCPLITE_CAN_BLOCK_PROCESS", blocks[[1]]$code, fixed = TRUE)))
    }, logical(1))
    file.path("man", sort(names(db)[keep]))
  }

  # One document, in this process ----------------------------------------------

  run_document <- function(doc, work, report_file) {
    report <- file(report_file, open = "w")
    on.exit(close(report), add = TRUE)
    emit <- function(...) {
      writeLines(paste0(...), report)
      flush(report)
    }
    config <- read_config()
    config <- config[!is.na(config$File) & config$File == doc, , drop = FALSE]
    passed <- 0L
    failed <- 0L
    result <- function(ok, label, what, detail = character()) {
      emit(if (ok) "ok   - " else "FAIL - ", label, ": ", what)
      if (!ok && length(detail)) {
        detail <- tail(detail[nzchar(trim(detail))], 25)
        emit(paste0("       ", detail, collapse = "\n"))
      }
      if (ok) passed <<- passed + 1L else failed <<- failed + 1L
    }

    dir.create(work, recursive = TRUE, showWarnings = FALSE)
    work <- normalizePath(work)
    setwd(work)
    dir.create(file.path(work, ".R-user"))
    Sys.setenv(
      R_USER_CACHE_DIR = file.path(work, ".R-user", "cache"),
      R_USER_DATA_DIR = file.path(work, ".R-user", "data"),
      R_USER_CONFIG_DIR = file.path(work, ".R-user", "config"),
      MCPLITE_CAN_BLOCK_PROCESS = "true"
    )
    Sys.unsetenv(c("MCPLITE_TRANSPORT", "MCPLITE_TOKEN", "MCPLITE_HOST", "MCPLITE_REPLICA"))
    node_modules <- file.path(root, "tests", "clients", "node", "node_modules")
    if (dir.exists(node_modules)) file.symlink(node_modules, file.path(work, "node_modules"))
    file.copy(system.file("examples", "server.R", package = "mcplite"), file.path(work, "server.R"))

    # Documented ports 8080-8089 -> free ports.
    ports <- integer()
    port_free <- function(p) {
      s <- tryCatch(serverSocket(p), error = function(e) NULL)
      if (is.null(s)) return(FALSE)
      close(s)
      TRUE
    }
    port_for <- function(p) {
      key <- as.character(p)
      if (is.na(ports[key])) {
        repeat {
          cand <- sample(20000:32000, 1)
          if (!cand %in% ports && port_free(cand)) break
        }
        ports[key] <<- cand
      }
      ports[[key]]
    }
    Sys.setenv(MCPLITE_PORT = port_for(8080))
    localize <- function(text) {
      text <- gsub("/absolute/path/to/", paste0(work, "/"), text, fixed = TRUE)
      m <- gregexpr("(?<![0-9])808[0-9](?![0-9])", text, perl = TRUE)
      regmatches(text, m) <- lapply(regmatches(text, m), function(x) {
        vapply(x, function(p) as.character(port_for(as.integer(p))), "")
      })
      text
    }

    # Servers started by the examples: list(process, label, output file).
    servers <- list()
    stop_server <- function(s) {
      # The server itself gets SIGTERM, as a process manager sends it: the
      # process started here when it is the server, or the children of the
      # shell that runs it (bash execs a lone command, so the process is
      # often the server; a server's own children are its workers, which the
      # server ends itself).
      h <- ps::ps_handle(s$process$get_pid())
      shell <- tryCatch(ps::ps_name(h) %in% c("sh", "bash", "dash"), error = function(e) FALSE)
      kids <- if (shell) tryCatch(ps::ps_children(h), error = function(e) list()) else list()
      targets <- if (length(kids)) kids else list(h)
      for (k in targets) try(ps::ps_send_signal(k, ps::signals()$SIGTERM), silent = TRUE)
      s$process$wait(20000)
      out <- readLines(s$output, warn = FALSE)
      if (s$process$is_alive()) {
        s$process$kill_tree()
        result(FALSE, s$label, "the server stops on SIGTERM within 20 seconds", out)
        return(invisible())
      }
      status <- s$process$get_exit_status()
      result(identical(status, 0L) && any(grepl("mcplite: HTTP server stopped (SIGTERM)", out, fixed = TRUE)),
             s$label, "the server stops on SIGTERM, says why, and exits with status 0",
             c(paste("exit status:", status), out))
    }
    stop_servers <- function() {
      for (s in servers) stop_server(s)
      servers <<- list()
    }
    # A server that fails to start while an earlier example's server still
    # listens is tried again once that one has stopped (the port may be the
    # same; mcplite's start-up error is not always printed).
    address_in_use <- function(out) length(servers) > 0L

    calls_for <- function(label_key) {
      config[!is.na(config$Call) & config$Example == label_key & config$id %in% current$ids, , drop = FALSE]
    }

    # A real client drives a server: list the tools, make the configured calls.
    drive <- function(connect, label, key, pids = integer()) {
      conn <- tryCatch(connect(), error = function(e) e)
      if (inherits(conn, "error")) {
        result(FALSE, label, "a client connects", conditionMessage(conn))
        return(invisible())
      }
      on.exit(try(mcplite::mcp_close(conn), silent = TRUE))
      tools <- tryCatch(names(mcplite::mcp_list_tools(conn)), error = function(e) e)
      if (inherits(tools, "error")) {
        result(FALSE, label, "a client lists the tools", conditionMessage(tools))
        return(invisible())
      }
      shown <- if (length(tools) > 5) c(head(tools, 5), sprintf("... (%d tools)", length(tools))) else tools
      result(length(tools) > 0L, label, paste("a client lists the tools:", paste(shown, collapse = ", ")))
      calls <- calls_for(key)
      for (i in seq_len(nrow(calls))) {
        spec <- trim(calls$Call[[i]])
        tool <- sub("\\s.*$", "", spec)
        arguments <- jsonlite::fromJSON(trim(substring(spec, nchar(tool) + 1L)) %||% "{}", simplifyVector = FALSE)
        if (!length(arguments)) arguments <- structure(list(), names = character())
        seen <- 0L
        progress <- if (identical(tolower(calls$Progress[[i]]), "yes")) function(...) seen <<- seen + 1L
        res <- tryCatch(mcplite::mcp_call(conn, tool, arguments, progress = progress), error = function(e) e)
        if (inherits(res, "error")) {
          result(FALSE, label, paste("calls", spec), conditionMessage(res))
          next
        }
        text <- res$content[[1]]$text %||% ""
        want <- calls$Expect[[i]]
        result(is.na(want) || identical(text, want), label, paste0("calls ", spec, " and gets \"", text, "\""),
               paste0("expected \"", want, "\""))
        if (!is.null(progress)) {
          result(seen > 0L, label, sprintf("the call of %s reports progress (%d notifications)", tool, seen))
        }
      }
    }

    token_of <- function(pid) {
      for (p in c(pid, vapply(tryCatch(ps::ps_children(ps::ps_handle(pid), recursive = TRUE), error = function(e) list()),
                              ps::ps_pid, 1L))) {
        env <- tryCatch(ps::ps_environ(ps::ps_handle(p)), error = function(e) NULL)
        token <- if (is.null(env)) NA else unname(env["MCPLITE_TOKEN"])
        if (!is.na(token) && nzchar(token)) return(token)
      }
      NULL
    }

    drive_http <- function(url, process, label, key, token = NULL) {
      url <- sub("//(0\\.0\\.0\\.0|\\[::\\])(:|/)", "//127.0.0.1\\2", url)
      base <- regmatches(url, regexpr("^https?://[^/]+", url))
      health <- processx::run("curl", c("-s", "-m", "10", "-w", "\n%{http_code}", paste0(base, "/health")),
                              error_on_status = FALSE)
      lines <- strsplit(health$stdout, "\n")[[1]]
      body <- tryCatch(jsonlite::fromJSON(lines[[1]]), error = function(e) NULL)
      result(identical(tail(lines, 1), "200") && identical(body$status, "ok"), label,
             paste("GET /health answers", lines[[1]]), health$stdout)
      token <- token %||% token_of(process$get_pid())
      headers <- if (!is.null(token)) c(Authorization = paste("Bearer", token))
      drive(function() mcplite::mcp_connect(url = url, headers = headers, name = "example", timeout = 30),
            label, key)
    }

    # Wait until `p` exits or prints the serving line; returns the URL or NULL.
    await_server <- function(p, output, timeout = 300) {
      deadline <- Sys.time() + timeout
      repeat {
        out <- if (file.exists(output)) readLines(output, warn = FALSE) else character()
        hit <- regmatches(out, regexpr("serving MCP over HTTP at \\S+", out))
        if (length(hit)) return(sub("^serving MCP over HTTP at ", "", hit[[1]]))
        if (!p$is_alive() || Sys.time() > deadline) return(NULL)
        Sys.sleep(0.05)
      }
    }

    child_script <- file.path(work, ".serve-example.R")
    writeLines(c(
      "local({",
      "  a <- commandArgs(TRUE)",
      "  meta <- readRDS(a[[1]])",
      "  for (p in meta$packages) suppressPackageStartupMessages(library(p, character.only = TRUE))",
      "  load(a[[2]], envir = globalenv())",
      "  options(meta$options)",
      "  setwd(meta$wd)",
      "  do.call(mcplite::mcp_server, readRDS(a[[3]]))",
      "})"
    ), child_script)

    current <- list(label = "", key = "", ids = integer())

    # Replaces mcp_server() while the examples run (see the header).
    serve_example <- function(args) {
      n <- length(servers) + 1L
      state <- file.path(work, sprintf(".server-%d", n))
      dir.create(state)
      files <- file.path(state, c("meta.rds", "globals.RData", "args.rds"))
      http <- identical(tolower(args$transport %||% Sys.getenv("MCPLITE_TRANSPORT")), "http")
      if (http && is.numeric(args$port) && args$port %in% 8080:8089) args$port <- port_for(args$port)
      saveRDS(list(
        packages = rev(setdiff(.packages(), base_packages)),
        options = options()[grepl("^mcplite[.]", names(options()))],
        wd = getwd()
      ), files[[1]])
      save(list = ls(globalenv(), all.names = TRUE), file = files[[2]], envir = globalenv())
      saveRDS(args, files[[3]])
      label <- current$label
      if (!http) {
        drive(function() {
          mcplite::mcp_connect(rscript, c("--vanilla", child_script, files), name = "example", timeout = 60)
        }, label, current$key)
        return(invisible(NULL))
      }
      for (attempt in 1:2) {
        output <- file.path(state, "output.txt")
        p <- processx::process$new(rscript, c("--vanilla", child_script, files),
          stdout = output, stderr = "2>&1", cleanup_tree = TRUE)
        url <- await_server(p, output, 60)
        if (!is.null(url)) break
        p$wait(5000)
        out <- readLines(output, warn = FALSE)
        if (attempt == 1L && address_in_use(out)) {
          stop_servers()
          next
        }
        result(FALSE, label, "mcp_server() starts serving over HTTP", out)
        return(invisible(NULL))
      }
      servers[[length(servers) + 1L]] <<- list(process = p, label = label, output = output)
      drive_http(url, p, label, current$key, token = args$token)
      invisible(NULL)
    }

    ns <- asNamespace("mcplite")
    fake <- get("mcp_server", ns)
    body(fake) <- quote({
      cl <- match.call()
      vals <- lapply(as.list(cl)[-1L], eval, envir = parent.frame())
      serve_example(vals)
    })
    environment(fake) <- environment()
    unlockBinding("mcp_server", ns)
    assign("mcp_server", fake, envir = ns)
    lockBinding("mcp_server", ns)

    is_server_script <- function(code) {
      text <- paste(code, collapse = "\n")
      grepl("mcp_server(", text, fixed = TRUE) &&
        (grepl("library(mcplite)", text, fixed = TRUE) || grepl("mcplite::", text, fixed = TRUE))
    }

    run_r <- function(code, allow_error) {
      exprs <- tryCatch(parse(text = localize(code), keep.source = FALSE), error = function(e) e)
      if (inherits(exprs, "error")) {
        result(FALSE, current$label, "parses as R code", conditionMessage(exprs))
        return(FALSE)
      }
      for (e in exprs) {
        err <- tryCatch({
          setTimeLimit(elapsed = 600, transient = TRUE)
          v <- withVisible(eval(e, globalenv()))
          if (v$visible) print(v$value)
          NULL
        }, error = function(err) err)
        setTimeLimit(elapsed = Inf)
        if (!is.null(err) && !allow_error) {
          result(FALSE, current$label, "runs", c(paste("in:", paste(deparse(e), collapse = " ")),
                                                 paste("error:", conditionMessage(err))))
          return(FALSE)
        }
      }
      TRUE
    }

    complete <- function(cmd) {
      # bash -n: the lines so far make complete commands (a `for ... done`
      # spans several lines)
      identical(suppressWarnings(system2("bash", c("-n", "-c", shQuote(cmd)), stdout = FALSE, stderr = FALSE)), 0L)
    }

    run_sh <- function(code) {
      # Commands: continuation lines joined, multi-line commands kept whole;
      # "#>" lines are expected output of the command above them.
      cmds <- list()
      pending <- ""
      for (l in code) {
        if (grepl("^#>", l)) {
          if (length(cmds)) cmds[[length(cmds)]]$expect <- c(cmds[[length(cmds)]]$expect, trim(sub("^#>", "", l)))
          next
        }
        if (!nzchar(pending) && (grepl("^\\s*#", l) || !nzchar(trim(l)))) next
        if (grepl("\\\\$", l)) {
          pending <- paste0(pending, sub("\\\\$", "", l), " ")
          next
        }
        pending <- paste0(pending, l)
        if (!complete(pending)) {
          pending <- paste0(pending, "\n")
          next
        }
        cmds[[length(cmds) + 1L]] <- list(cmd = pending, expect = character())
        pending <- ""
      }
      if (nzchar(trim(pending))) cmds[[length(cmds) + 1L]] <- list(cmd = pending, expect = character())
      all_ok <- TRUE
      for (cm in cmds) {
        cmd <- localize(cm$cmd)
        expect <- localize(cm$expect)
        for (attempt in 1:2) {
          output <- tempfile("sh-", tmpdir = work, fileext = ".txt")
          p <- processx::process$new("bash", c("-c", cmd), stdout = output, stderr = "2>&1",
            wd = work, cleanup_tree = TRUE)
          url <- await_server(p, output)
          out <- readLines(output, warn = FALSE)
          if (!is.null(url)) break
          if (p$is_alive()) {
            p$kill_tree()
            break
          }
          if (attempt == 1L && address_in_use(out)) {
            stop_servers()
            next
          }
          break
        }
        what <- paste0("`", substr(trim(cm$cmd), 1, 70), "`")
        if (!is.null(url)) {
          servers[[length(servers) + 1L]] <<- list(process = p, label = current$label, output = output)
          result(TRUE, current$label, paste(what, "starts a server at", url))
          drive_http(url, p, current$label, current$key)
        } else {
          status <- p$get_exit_status()
          ok <- identical(status, 0L)
          result(ok, current$label, paste(what, if (is.na(status %||% NA)) "finishes within 300 s" else "exits with status 0"),
                 c(paste("exit status:", status), out))
          all_ok <- all_ok && ok
        }
        out <- if (file.exists(output)) readLines(output, warn = FALSE) else character()
        missing <- expect[!vapply(expect, function(x) any(trim(out) == x), logical(1))]
        if (length(expect)) {
          result(!length(missing), current$label, paste(what, "prints the output shown"),
                 c("not printed:", missing, "printed:", out))
        }
      }
      all_ok
    }

    # The document's blocks.
    blocks <- if (grepl("\\.Rd$", doc)) {
      library(mcplite)
      db <- tools::Rd_db("mcplite")
      rd_blocks(db[[basename(doc)]], file.path(root, doc))
    } else {
      md_blocks(file.path(root, doc))
    }
    matched <- integer()
    for (b in blocks) {
      if (!b$lang %in% c("r", "sh", "cat")) next
      key <- first_line(b$code)
      short <- if (nchar(key) > 60) paste0(substr(key, 1, 57), "...") else key
      current$label <- sprintf("%s:%s %s `%s`", doc, b$line %||% "?", b$lang, short)
      current$key <- key
      hit <- config[!is.na(config$Example) & config$Example == key &
        (is.na(config$Containing) | vapply(config$Containing, function(x) {
          is.na(x) || any(grepl(x, b$code, fixed = TRUE))
        }, logical(1))), , drop = FALSE]
      matched <- c(matched, hit$id)
      current$ids <- hit$id
      skip <- hit$Skip[!is.na(hit$Skip)]
      if (length(skip)) {
        emit("skip - ", current$label, ": ", skip[[1]])
        next
      }
      problem <- tryCatch({
        if (b$lang == "r") {
          allow_error <- isTRUE(tryCatch(eval(b$options$error %||% FALSE, globalenv()), error = function(e) FALSE))
          if (run_r(b$code, allow_error)) {
            result(TRUE, current$label, "runs")
            if (is_server_script(b$code)) writeLines(b$code, file.path(work, "server.R"))
          }
        } else if (b$lang == "cat") {
          file <- eval(b$options$engine.opts, globalenv())$file
          writeLines(b$code, file)
          if (is_server_script(b$code)) {
            writeLines(b$code, file.path(work, "server.R"))
            drive(function() mcplite::mcp_connect_script(file, name = "example", timeout = 60), current$label, key)
          }
        } else {
          run_sh(b$code)
        }
        NULL
      }, error = function(e) e)
      if (!is.null(problem)) {
        result(FALSE, current$label, "the runner could run it", conditionMessage(problem))
      }
    }
    stop_servers()
    emit("matched ", paste(unique(matched), collapse = " "))
    emit("counts ", passed, " ", failed)
  }

  # Every document, each in its own R process ----------------------------------

  main <- function(docs) {
    setwd(root)
    if (!length(docs)) {
      docs <- c("README.md", file.path("vignettes", sort(list.files("vignettes", "\\.Rmd$"))), rd_documents())
    }
    config <- read_config()
    out_dir <- tempfile("doc-examples-")
    dir.create(out_dir)
    on.exit(unlink(out_dir, recursive = TRUE), add = TRUE)
    passed <- 0L
    failed <- 0L
    matched <- integer()
    crashed <- character()
    for (doc in docs) {
      slug <- gsub("[^A-Za-z0-9]+", "-", doc)
      report <- file.path(out_dir, paste0(slug, ".report"))
      log <- file.path(out_dir, paste0(slug, ".log"))
      res <- processx::run(rscript, c("--vanilla", script_path, "--document", doc, file.path(out_dir, slug), report),
        error_on_status = FALSE, timeout = 1500, stdout = log, stderr = "2>&1", cleanup_tree = TRUE)
      lines <- if (file.exists(report)) readLines(report, warn = FALSE) else character()
      counts <- grep("^counts ", lines, value = TRUE)
      shown <- lines[!grepl("^(counts|matched) ", lines)]
      if (length(shown)) cat(shown, sep = "\n")
      if (length(counts)) {
        n <- as.integer(strsplit(counts, " ")[[1]][2:3])
        passed <- passed + n[[1]]
        failed <- failed + n[[2]]
        ids <- strsplit(sub("^matched ?", "", grep("^matched ", lines, value = TRUE)), " ")[[1]]
        matched <- c(matched, as.integer(ids[nzchar(ids)]))
      } else {
        # The document's process died: what it reported still counts, and
        # its entries in examples.dcf are not judged.
        passed <- passed + sum(startsWith(shown, "ok   - "))
        failed <- failed + sum(startsWith(shown, "FAIL - ")) + 1L
        crashed <- c(crashed, doc)
        cat("FAIL - ", doc, ": the examples ran to the end (exit status ", res$status,
            if (isTRUE(res$timeout)) ", timed out", ")\n", sep = "")
        if (file.exists(log)) cat(paste0("       ", tail(readLines(log, warn = FALSE), 25)), sep = "\n")
      }
    }
    stale <- config[config$File %in% setdiff(docs, crashed) & !config$id %in% matched, , drop = FALSE]
    for (i in seq_len(nrow(stale))) {
      failed <- failed + 1L
      cat("FAIL - tests/doc-examples/examples.dcf: the entry for ", stale$File[[i]], " `", stale$Example[[i]],
          "` matches no example's first line (fix or remove it)\n", sep = "")
    }
    cat(passed, " passed, ", failed, " failed\n", sep = "")
    invisible(failed == 0L)
  }

  args <- commandArgs(TRUE)
  if (length(args) == 4L && identical(args[[1]], "--document")) {
    run_document(args[[2]], args[[3]], args[[4]])
  } else {
    ok <- main(args)
    quit(status = if (ok) 0L else 1L)
  }
})
