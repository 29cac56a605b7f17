library(testthat)
library(meanserver)
test_check("meanserver")
