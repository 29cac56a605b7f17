#!/usr/bin/env bash
# Non-API R entry points in the installed mcplite.so (issue 21). R CMD check
# reports compiled code that references R entry points outside R's API
# ("Found non-API calls to R"), a NOTE that newer R versions make a WARNING.
# This includes symbols pulled in by the Rust crates (extendr). Checks:
#  1. none of the entry points in R's own list of non-API entry points (as R
#     CMD check uses it; tests/data/r-api, whose README.md says where it comes
#     from) is referenced;
#  2. none of the symbols below is referenced: they are declared for front
#     ends and graphics devices (Rinterface.h, R_ext/GraphicsDevice.h) and are
#     not in R's list yet, but no package should touch them. R_InputHandlers
#     is not among them: with addInputHandler() and removeInputHandler()
#     (R_ext/eventloop.h) it is how Writing R Extensions ("Meshing event
#     loops") lets code run from R's event loop on Unix, R CMD check does not
#     report it, and packages such as later rely on it; the live session
#     uses it (RULES R10.4);
#  3. the check itself works: it finds a symbol the object does use.
# Uses MCPLITE_LIB (set by scripts/run-tests.sh) or the library Rscript finds.
# Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C # one collation for sort and comm

. tests/suites/lib.sh

front_end_only="
R_interrupts_pending
R_interrupts_suspended
R_CStackDir
R_Busy
R_CleanUp
R_ResetConsole
R_ShowMessage
R_EditFile
R_ChooseFile
R_ShowFiles
R_common_command_line
R_dot_Last
jump_to_toplevel
mainloop
onintr
onintrNoResume
"

if [ -n "${MCPLITE_LIB:-}" ]; then
  so="$MCPLITE_LIB/mcplite/libs/mcplite.so"
else
  so=$(Rscript -e 'cat(file.path(find.package("mcplite"), "libs", "mcplite.so"))' 2>/dev/null)
fi
non_api=tests/data/r-api/non-api-entry-points.txt

if [ ! -f "$so" ]; then
  bad "no installed shared object at '$so' (install the package first)"
  finish
fi
echo "shared object: $so"

# Undefined dynamic symbols of the shared object, without version suffixes.
undefined=$(nm -u -D "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u)

# 1. R's list
if [ ! -s "$non_api" ]; then
  bad "R's list of non-API entry points: no $non_api"
else
  hits=$(comm -12 <(echo "$undefined") <(sort -u "$non_api"))
  if [ -z "$hits" ]; then
    ok "no entry point from R's list of non-API entry points ($(wc -l <"$non_api") names)"
  else
    bad "non-API entry points referenced:"
    echo "$hits"
  fi
fi

# 2. front-end and device symbols
hits=$(comm -12 <(echo "$undefined") <(echo "$front_end_only" | sed '/^$/d' | sort -u))
if [ -z "$hits" ]; then
  ok "no front-end or graphics-device symbol"
else
  bad "front-end or graphics-device symbols referenced:"
  echo "$hits"
fi

# 3. the comparison finds what is there (guards against an empty nm output)
if grep -qx Rf_eval <<<"$undefined"; then
  ok "the symbol check sees the object's R references (Rf_eval)"
else
  bad "nm found no reference to Rf_eval in $so: the check cannot work"
fi

finish
