# The server an MCP client starts: Rscript "$(Rscript -e 'cat(system.file("server.R", package = "meanserver"))')"
meanserver::serve()
