# package_tools(): the tool function's guard, file arguments confined to
# `root` (RULES R8.8, R/package-call.R). Tools served with files allowed,
# called through a server: test-package-tools.R.

test_that("paths are confined to the root", {
  root <- normalizePath(tempdir())
  expect_true(path_inside("a/b.txt", root))
  expect_true(path_inside(file.path(root, "x"), root))
  expect_true(path_inside(root, root))
  expect_false(path_inside("../x", root))
  expect_false(path_inside("a/../../x", root))
  expect_false(path_inside("/etc/passwd", root))
  expect_false(path_inside("|ls", root))
  expect_false(path_inside(paste0(root, "-other/x"), root))
})
