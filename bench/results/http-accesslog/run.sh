#!/usr/bin/env bash
# Quiet-machine access log on/off, interleaved, release build of 259dd59 (the access-log code is unchanged on dafb9be).
# Run from the repository root of a checkout; results go to /work/coord/accesslog4 (copy what you need).
cd /work/main
export MCPLITE_BENCH_LIB=/work/rlib/ci-259dd59
for i in 1 2 3 4; do
  for mode in on off; do
    if [ $mode = off ]; then export MCPLITE_ACCESS_LOG=false; else unset MCPLITE_ACCESS_LOG; fi
    bash bench/http/run.sh --servers mcplite > /work/coord/accesslog4/$mode-$i.log 2>&1
    rm -rf /work/coord/accesslog4/$mode-$i; cp -a bench/results/http /work/coord/accesslog4/$mode-$i
  done
done
git -C /work/main checkout -- bench/results/http 2>/dev/null
echo done > /work/coord/accesslog4/DONE
