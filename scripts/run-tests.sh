#!/usr/bin/env bash
# Install the test dependencies and run every test: cargo tests, testthat
# (including end-to-end tests over stdio), and the extra suites in
# tests/suites/. The set-up and the dependencies come first; then the test
# steps run in two lanes at once (the Rust builds, niced, beside the R and
# client suites; MCPLITE_TEST_LANES=1: one after the other).
# Each step (the set-up, the dependencies, each test layer) runs in a session of its own with a marker
# in its environment; a process of a step still there after it ended
# (reparented, forgotten) is listed, stopped, and counted as a failure of
# that step, and all steps are checked once more at the end. Ends with a
# table of the steps (counts, wall times, CPU seconds, disk used since the start), the
# peak disk use, whether any process was left running and, last, one line
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:$HOME/.cargo/bin"

total_pass=0
total_fail=0
total_cpu=0
failed_suites=""
table=""
run_started=$(date +%s)
log_dir="${MCPLITE_TEST_LOGS:-$root/target/test-logs}"
mkdir -p "$log_dir"
# The marker of this run's test steps: MCPLITE_TEST_RUN=<run>:<step>.
run_id="run$$.$run_started"

mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# CPU seconds (user + system) of this shell's finished children so far,
# from the builtin `times` (run in this shell, not a subshell: a subshell's
# count starts at zero, so this sets `cpu_now` instead of printing it: a
# command substitution is a subshell). A step's CPU is the difference
# around it: every process of the step that its parent waited for, the
# compilers included.
children_cpu() {
  local f="$log_dir/.times.$BASHPID" a b
  times >"$f"
  { read -r _ && read -r a b; } <"$f"
  rm -f "$f"
  cpu_now=$(awk -v a="$a" -v b="$b" 'function s(t) { split(t, p, "m"); return p[1] * 60 + p[2] } BEGIN { printf "%d\n", s(a) + s(b) }')
}

# Free disk space, in MB, of the file systems the steps write to (the
# checkout, with target/ and the logs, and the temporary directory). A step
# that fills one fails in ways that do not say so (an empty log, a cut
# tarball), so each step that leaves less than 2 GB free is named.
tmp_dir="${TMPDIR:-/tmp}"
free_mb() { df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
low_disk=""
check_disk() { # name
  local d f
  for d in "$root" "$tmp_dir"; do
    f=$(free_mb "$d")
    if [ -n "$f" ] && [ "$f" -lt 2048 ]; then
      echo "== low disk after $1: $f MB free on $d"
      low_disk="$low_disk $1 ($f MB free on $d)"
    fi
  done
}
echo "== disk: $(free_mb "$root") MB free on $root, $(free_mb "$tmp_dir") MB free on $tmp_dir"

# Disk the run uses: the size of the checkout (target/, the logs), of the
# temporary directory and of cargo's download cache (crates a cold machine
# fetches), measured with du, relative to the start. Anything else writing
# to these directories meanwhile is counted too. du runs after each step
# (the table's column) and, in a sampler the run starts here and stops at
# its end, every 10 s during the steps, so a step's transient peak (a build
# directory it removes before it ends) is seen as well.
used_mb() { du -sxm "$1" 2>/dev/null | awk 'END { print $1 + 0 }'; }
disk_dirs="$root"
case "$tmp_dir/" in "$root"/*) ;; *) disk_dirs="$disk_dirs $tmp_dir" ;; esac
cargo_cache="${CARGO_HOME:-$HOME/.cargo}/registry"
if [ -d "$cargo_cache" ]; then disk_dirs="$disk_dirs $cargo_cache"; fi
disk_used() { local d n=0; for d in $disk_dirs; do n=$((n + $(used_mb "$d"))); done; echo "$n"; }
disk_start=$(disk_used)
disk_peak=0
disk_peak_step="(start)"
disk_step=0
sample_disk() { # name
  disk_step=$(($(disk_used) - disk_start))
  if [ "$disk_step" -gt "$disk_peak" ]; then
    disk_peak=$disk_step
    disk_peak_step="the end of $1"
  fi
}
# The sampler writes "MB step" to $log_dir/.disk-peak when it sees a new
# peak; the running step's name is in $log_dir/.disk-step (the set-up, the
# dependencies) or, for the two lanes of test steps, in .disk-step.<lane>.
disk_peak_file="$log_dir/.disk-peak"
disk_step_file="$log_dir/.disk-step"
echo "0 (start)" >"$disk_peak_file"
echo "setup" >"$disk_step_file"
(
  s=0
  trap 'kill "$s" 2>/dev/null; exit 0' TERM
  peak=0
  while :; do
    n=$(($(disk_used) - disk_start))
    if [ "$n" -gt "$peak" ]; then
      peak=$n
      echo "$n $(cat "$disk_step_file" "$disk_step_file".* 2>/dev/null | paste -sd+)" >"$disk_peak_file.new" && mv "$disk_peak_file.new" "$disk_peak_file"
    fi
    sleep 10 &
    s=$!
    wait "$s"
  done
) </dev/null >/dev/null 2>&1 &
disk_sampler=$!
# The sampler's peak, when it is above the one seen at the ends of steps.
merge_sampled_peak() {
  local n step
  read -r n step <"$disk_peak_file" 2>/dev/null || return 0
  if [ "${n:-0}" -gt "$disk_peak" ]; then
    disk_peak=$n
    disk_peak_step="during $step"
  fi
}

record() { # name passed failed seconds [disk] [cpu]
  total_pass=$((total_pass + $2))
  total_fail=$((total_fail + $3))
  if [ "$3" -gt 0 ]; then failed_suites="$failed_suites $1"; fi
  if [ -n "${5:-}" ]; then
    # measured by the lane when the step ended
    disk_step=$5
    if [ "$disk_step" -gt "$disk_peak" ]; then disk_peak=$disk_step; disk_peak_step="the end of $1"; fi
  else
    sample_disk "$1"
  fi
  total_cpu=$((total_cpu + ${6:-0}))
  table="$table$(printf '%-28s %7s %7s %9s %9s %9s' "$1" "$2" "$3" "$(mmss "$4")" "${6:-?}" "$disk_step")"$'\n'
  echo "== $1: $2 passed, $3 failed ($(mmss "$4"); disk +$disk_step MB since the start)"
  check_disk "$1"
}

# Run `command...` as the test step `name` in a new session, with the step's
# marker in its environment, output to `log`. Sets `step_rc` and
# `step_seconds`.
run_step() { # name log command...
  local name=$1 log=$2 started sid_file="$log_dir/.sid-$1" cpu0
  shift 2
  started=$(date +%s)
  children_cpu
  cpu0=$cpu_now
  rm -f "$sid_file"
  MCPLITE_TEST_RUN="$run_id:$name" setsid --wait bash -c 'echo $$ >"$0"; exec "$@"' "$sid_file" "$@" \
    >"$log" 2>&1 </dev/null
  step_rc=$?
  step_seconds=$(($(date +%s) - started))
  children_cpu
  step_cpu=$((cpu_now - cpu0))
  step_sid=$(cat "$sid_file" 2>/dev/null || echo 0)
  rm -f "$sid_file"
}

# The processes a step left: those in its session, and those with its marker
# in their environment (also when they made a session of their own).
# Zombies are gone already (only their exit status waits for a reaper).
step_processes() { # name sid
  {
    ps -eo pid=,sid=,stat= | awk -v s="$2" 's != 0 && $2 == s && $3 !~ /^Z/ { print $1 }'
    grep -lzx "MCPLITE_TEST_RUN=$run_id:$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
  } | grep -vx "$$" | sort -un
}

# Processes of step `name` (a pattern: ".*" is every step) still there after
# it ended (after a grace time for those being stopped): listed on stderr as
# left by `label` and stopped; prints how many.
leftovers() { # name sid [label]
  local pids rest i p
  for i in $(seq 1 50); do
    pids=$(step_processes "$1" "$2")
    if [ -z "$pids" ]; then
      echo 0
      return
    fi
    sleep 0.1
  done
  for p in $pids; do
    echo "   left running by ${3:-$1}: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)" >&2
  done
  kill -TERM $pids 2>/dev/null
  for i in $(seq 1 50); do
    rest=$(step_processes "$1" "$2")
    [ -z "$rest" ] && break
    sleep 0.1
  done
  [ -n "$rest" ] && kill -KILL $rest 2>/dev/null
  echo "$pids" | wc -w
}

# A step's counts, plus one failure when it left processes behind.
left_by=""
finish_step() { # name passed failed
  local left
  left=$(leftovers "$1" "$step_sid")
  if [ "$left" -gt 0 ]; then
    echo "== $1 left $left process(es) running (stopped now): a failure"
    left_by="$left_by $1 ($left)"
  fi
  record "$1" "$2" $(($3 + (left > 0 ? 1 : 0))) "$step_seconds" "" "$step_cpu"
}

echo "== setting up (Debian packages, package build)"
# The set-up builds the package tarball once and installs it; R CMD check
# (50-rcmdcheck) checks that tarball and that installation instead of
# building and installing its own (scripts/check.sh).
# One host build of the crates per run: the run's package installs (the
# set-up's, the README quick start's in 30-docs) use the dev profile
# (MCPLITE_PROFILE=dev, tools/build-engine.sh), the profile of the cargo
# step, clippy and the Windows leg, so `cargo test --workspace` reuses the
# dependencies the set-up compiled instead of compiling the graph a second
# time in release mode. The run's one release build is 55-offline-install's,
# the shipped recipe built from the vendored crates (what users get; it
# ignores MCPLITE_PROFILE), cold in a cold run; it keeps its build in
# target/offline-install, so a later run compiles mcplite's own crates. scripts/setup.sh and scripts/demo.sh alone still
# build release. MCPLITE_PROFILE=release bash scripts/run-tests.sh installs
# release builds as before.
export MCPLITE_PROFILE="${MCPLITE_PROFILE:-dev}"
tarball_dir="$(cd "$log_dir" && pwd)/tarball"
rm -rf "$tarball_dir"
run_step setup "$log_dir/setup.log" env MCPLITE_KEEP_TARBALL="$tarball_dir" bash scripts/setup.sh
cat "$log_dir/setup.log"
if [ "$step_rc" -ne 0 ]; then
  echo "setup failed"
  leftovers setup "$step_sid" >/dev/null
  kill "$disk_sampler" 2>/dev/null
  echo "0 passed, 1 failed"
  exit 1
fi
finish_step setup 0 0
# (R is installed now.) Every cargo command of the run sees R's variables as
# R CMD INSTALL sets them: the build script of extendr-ffi (the bridge's R
# bindings) is run again when R_INCLUDE_DIR changes, so a `cargo test`
# without it would compile extendr-ffi, extendr-api and the bridge again
# after each install, and the next install back.
if [ -z "${R_HOME:-}" ] || [ -z "${R_INCLUDE_DIR:-}" ]; then
  R_HOME=$(R CMD printenv R_HOME 2>/dev/null) && R_INCLUDE_DIR=$(R CMD printenv R_INCLUDE_DIR 2>/dev/null) &&
    export R_HOME R_INCLUDE_DIR
fi
# (Without one, check.sh builds its own.)
MCPLITE_CHECK_TARBALL=$(ls "$tarball_dir"/mcplite_*.tar.gz 2>/dev/null | head -1)
export MCPLITE_CHECK_TARBALL
# The set-up ran the README quick start's install block: 30-docs checks that
# installation rather than building and installing the package again.
if [ -f "$tarball_dir/quickstart-install" ]; then
  export MCPLITE_QUICKSTART_RAN="$tarball_dir/quickstart-install"
fi
for dep in scripts/deps/*.sh; do
  [ -e "$dep" ] || continue
  name="deps:$(basename "$dep" .sh)"
  echo "== dependencies: $dep"
  echo "$name" >"$disk_step_file"
  run_step "$name" "$log_dir/deps-$(basename "$dep").log" bash "$dep"
  if [ "$step_rc" -ne 0 ]; then
    tail -20 "$log_dir/deps-$(basename "$dep").log"
    finish_step "$name" 0 1
  else
    finish_step "$name" 0 0
  fi
done

if [ -z "${MCPLITE_LIB:-}" ]; then
  MCPLITE_LIB=$(Rscript -e 'cat(dirname(find.package("mcplite")))')
fi
export MCPLITE_LIB
export R_LIBS="$MCPLITE_LIB${R_LIBS:+:$R_LIBS}"
# R CMD check (50-rcmdcheck) checks the set-up's installation of that
# tarball rather than installing it again, and leaves out what steps of this
# run do themselves: testthat, the help pages' examples (30-docs, 31-examples)
# and re-rendering the vignettes (the set-up's R CMD build rendered them).
if [ -n "$MCPLITE_CHECK_TARBALL" ] && [ -f "$tarball_dir/00install.out" ]; then
  export MCPLITE_CHECK_INSTALL_LOG="$tarball_dir/00install.out" MCPLITE_CHECK_LIB="$MCPLITE_LIB"
fi
export MCPLITE_CHECK_RAN_ELSEWHERE=1
# package_tools()'s cache for the run's tests, kept between runs (keyed by
# the installed packages, R and mcplite's code, RULES R8.6): the testthat
# step works it out first, the adversarial suite's servers read it.
export MCPLITE_TEST_PACKAGE_CACHE="${MCPLITE_TEST_PACKAGE_CACHE:-$root/target/package-tools-cache}"
export MCPLITE_VENV="${MCPLITE_VENV:-$HOME/.cache/mcplite-venv}"

# The test steps run in two lanes at once, each lane's steps one after the
# other: the Rust lane (the builds: the cargo step, clippy, the Windows and
# macOS legs, fuzzing), under `nice`, and the R lane (testthat and every
# other suite: R, Python and Node clients waiting on each other more than
# computing; last the offline install, whose release build is cold in a
# cold run). A lane done with its own steps takes the other lane's steps that
# have not started, from the end of its list: in a second run the Rust lane
# has little to compile and takes the offline install and more; in a cold
# run the two end about together. A cold run is mostly compiling; the R
# lane's steps fit beside it. Each step is claimed before it starts (mkdir
# is atomic), so it runs once. No step of one lane writes what a step of the
# other reads (55-offline-install vendors and builds in a staged copy; the
# two lanes' cargo commands share target/, which cargo locks). Each step
# still runs in a session of its own with its marker, so its leftovers are
# its own. MCPLITE_TEST_LANES=1 runs the Rust lane and then the R lane, one
# step at a time, as the run did before.
rust_lane_steps="cargo 10-lint 40-cross 60-fuzz"
r_lane_tail="55-offline-install"
results_file="$log_dir/.results"
: >"$results_file"

# The counts of a step's log: cargo's "test result" lines, testthat's counts
# file, or a suite's last "N passed, N failed" line. Prints "passed failed".
counts_cargo() { # log rc
  local p f
  p=$(grep -E "^test result" "$1" | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
  f=$(grep -E "^test result" "$1" | sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed.*/\2/' | awk '{s+=$1} END {print s+0}')
  if ! grep -q "^test result" "$1" || grep -q "^error" "$1"; then f=$((${f:-0} + 1)); fi
  echo "${p:-0} ${f:-0}"
}
counts_testthat() { # log rc
  local p f
  if [ -s "$log_dir/testthat-counts.txt" ]; then
    read -r p f <"$log_dir/testthat-counts.txt"
    echo "$p $f"
  else
    echo "0 1"
  fi
}
counts_suite() { # log rc
  local last p=0 f=0
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  if [ -n "$last" ]; then
    p=$(echo "$last" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$last" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\2/')
  fi
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  echo "$p $f"
}

# One step of a lane: run it, then, holding the output lock so that the two
# lanes' reports do not interleave, print the end of its log; append
# "name passed failed seconds disk left" to the results file.
lane_step() { # lane name log shown-lines counter command...
  local lane=$1 name=$2 log=$3 lines=$4 counter=$5 counts left disk
  shift 5
  echo "== [$lane] $name started"
  echo "$name" >"$disk_step_file.$lane"
  run_step "$name" "$log" "$@"
  counts=$("$counter" "$log" "$step_rc")
  left=$(leftovers "$name" "$step_sid")
  disk=$(($(disk_used) - disk_start))
  (
    flock 9
    echo "== [$lane] $name ($(mmss "$step_seconds"))"
    if [ "$counter" = counts_cargo ]; then
      grep -E "^test result|FAILED|panicked" "$log"
    else
      tail -"$lines" "$log"
    fi
    if [ "$left" -gt 0 ]; then echo "== $name left $left process(es) running (stopped now): a failure"; fi
    echo "$name $counts $step_seconds $disk $left $step_cpu" >>"$results_file"
  ) 9>"$log_dir/.output-lock"
  rm -f "$disk_step_file.$lane"
}

clippy_driver="$(rustc --print sysroot 2>/dev/null)/bin/clippy-driver"
[ -x "$clippy_driver" ] || clippy_driver=clippy-driver
# The arguments of lane_step after the lane, for step `name`, in the array
# step_args.
step_of() { # name
  case "$1" in
    cargo)
      # --no-fail-fast: a failing test binary must not hide the others
      # (their counts would be missing from the totals). It reuses the
      # set-up's dev build of the dependencies; what it compiles is the
      # workspace's crates, their tests, the dev-dependencies and the few
      # crates whose features those change. clippy-driver compiles the
      # workspace's crates (cargo's RUSTC_WORKSPACE_WRAPPER, as `cargo
      # clippy` runs it), so the build lints them too; 10-lint reports the
      # lints, with the same variables (tests/suites/10-lint.sh).
      step_args=(cargo "$log_dir/cargo.log" 0 counts_cargo
        env RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS=--cap-lints=warn
        cargo test --workspace --no-fail-fast) ;;
    testthat)
      step_args=(testthat "$log_dir/testthat.log" 40 counts_testthat
        Rscript --vanilla scripts/testthat-summary.R "$log_dir/testthat-counts.txt") ;;
    *)
      step_args=("$1" "$log_dir/suite-$1.log" 15 counts_suite bash "tests/suites/$1.sh") ;;
  esac
}

# Run the lane's own steps (`mine`, in order), then, when `others` (the
# other lane's list) is given, the other lane's steps nobody claimed yet,
# last first. A step runs where it is claimed first.
claim() { mkdir "$log_dir/.claimed-$1" 2>/dev/null; }
run_lane() { # lane "mine" ["others"]
  local lane=$1 s stolen=""
  for s in $2; do
    claim "$s" || continue
    step_of "$s"
    lane_step "$lane" "${step_args[@]}"
  done
  for s in $(echo "${3:-}" | tr ' ' '\n' | tac); do
    claim "$s" || continue
    stolen="$stolen $s"
    step_of "$s"
    lane_step "$lane" "${step_args[@]}"
  done
  if [ -n "$stolen" ]; then echo "== [$lane] took from the other lane:$stolen"; fi
}

# The suites of tests/suites (not lib.sh, the helpers they share), in order.
all_suites=""
for suite in tests/suites/[0-9]*.sh; do
  [ -e "$suite" ] && all_suites="$all_suites $(basename "$suite" .sh)"
done
rust_steps=""
r_steps="testthat"
for s in cargo $all_suites; do
  case " $rust_lane_steps " in
    *" $s "*) rust_steps="$rust_steps $s" ;;
    *) r_steps="$r_steps $s" ;;
  esac
done
# 30-docs runs the README quick start, whose package build uses the
# checkout's target/ (it reuses the run's host build): cargo locks the build
# directory while the Rust lane's cargo, clippy and Windows steps build in
# it (a cross build locks the host directory too, for its build scripts), so
# 30-docs waited for them (1m40s in a cold run). It goes last in the R lane,
# when the Rust lane builds the fuzz targets in a directory of their own.
r_lane_last="30-docs $r_lane_tail"
for s in $r_lane_last; do
  case " $r_steps " in
    *" $s "*) r_steps="$(echo " $r_steps " | sed "s/ $s / /; s/^ *//; s/ *$//") $s" ;;
  esac
done
rm -f "$log_dir/testthat-counts.txt"
rm -rf "$log_dir"/.claimed-*
: >"$disk_step_file" # the lanes name their steps in files of their own
echo "== test steps: Rust lane:$rust_steps; R lane: $r_steps"
if [ "${MCPLITE_TEST_LANES:-2}" = 1 ]; then
  run_lane rust "$rust_steps"
  run_lane r "$r_steps"
else
  # Each lane is a subshell of its own: a step's CPU is counted by its
  # lane's shell, and this shell would count a whole lane when it ends.
  (renice -n 10 -p "$BASHPID" >/dev/null; run_lane rust "$rust_steps" "$r_steps") &
  rust_lane=$!
  (run_lane r "$r_steps" "$rust_steps") &
  r_lane=$!
  wait "$rust_lane" "$r_lane"
fi

# The table, in the order of the steps (cargo, testthat, the suites).
for s in cargo testthat $all_suites; do
  line=$(awk -v s="$s" '$1 == s' "$results_file" | tail -1)
  if [ -z "$line" ]; then
    record "$s" 0 1 0 "$disk_step"
    continue
  fi
  read -r _ p f secs disk left cpu <<<"$line"
  if [ "$left" -gt 0 ]; then left_by="$left_by $s ($left)"; fi
  record "$s" "$p" $((f + (left > 0 ? 1 : 0))) "$secs" "$disk" "$cpu"
done
rm -f "$results_file" "$log_dir/.output-lock"
rm -rf "$log_dir"/.claimed-*

# Last, every test step at once: none of their processes may be left (each
# step's were stopped when it ended; one that appeared since is a failure).
left=$(leftovers ".*" 0 "a test step (found at the end)")
if [ "$left" -gt 0 ]; then
  total_fail=$((total_fail + 1))
  failed_suites="$failed_suites leftovers"
  left_by="$left_by end-of-run ($left)"
fi

# The disk sampler is the run's own last process: stopped, and gone.
kill -TERM "$disk_sampler" 2>/dev/null
wait "$disk_sampler" 2>/dev/null
if kill -0 "$disk_sampler" 2>/dev/null; then
  kill -KILL "$disk_sampler" 2>/dev/null
  total_fail=$((total_fail + 1))
  failed_suites="$failed_suites leftovers"
  left_by="$left_by disk-sampler (1)"
fi
merge_sampled_peak
rm -f "$disk_peak_file" "$disk_step_file"

echo
echo "== summary (logs in $log_dir)"
printf '%-28s %7s %7s %9s %9s %9s\n' step passed failed time "CPU s" "disk MB"
printf '%s' "$table"
printf '%-28s %7s %7s %9s %9s %9s\n' total "$total_pass" "$total_fail" "$(mmss $(($(date +%s) - run_started)))" "$total_cpu" "$disk_peak"
echo "CPU s: user + system seconds of the step's processes (those their parents waited for); the machine has $(nproc) cores"
echo "disk MB: what $disk_dirs held after the step more than at the start (du)"
echo "peak disk use: $disk_peak MB more than at the start, $disk_peak_step (du after each step and every 10 s)"
echo "disk at the end: $(free_mb "$root") MB free on $root, $(free_mb "$tmp_dir") MB free on $tmp_dir"
if [ -z "$left_by" ]; then
  echo "processes left running: none (each step checked when it ended, all of them again at the end, and the disk sampler stopped)"
else
  echo "processes left running (stopped, each a failure):$left_by"
fi
if [ -n "$low_disk" ]; then echo "low disk after:$low_disk"; fi
if [ -n "$failed_suites" ]; then echo "failing:$failed_suites"; fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
