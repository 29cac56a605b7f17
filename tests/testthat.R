# Runs the testthat suite under R CMD check. Tests that need the repository
# (tests/data, tests/clients, client SDKs) or a long time skip themselves there.
library(testthat)
library(mcplite)

test_check("mcplite")
