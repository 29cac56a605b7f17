# Developer shortcuts. The README's two commands are `make demo` and `make test`
# equivalents that also work before make is installed.
.PHONY: demo test install dev document check bench site

demo:
	bash scripts/demo.sh

test:
	bash scripts/run-tests.sh

install:
	R CMD INSTALL --no-test-load .

dev:
	MCPLITE_PROFILE=dev R CMD INSTALL --no-test-load .

document:
	Rscript -e 'roxygen2::roxygenise()'

check:
	bash scripts/check.sh

bench:
	bash bench/run.sh

site:
	Rscript -e 'pkgdown::build_site(install = FALSE)'
