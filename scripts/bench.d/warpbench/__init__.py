"""warpbench: the harness behind scripts/bench (docs/bench.md).

  cli.py        flags, --cleanup, signals            run.py      one run: setup, the loop, report
  loop.py       the measurement loop (cold, warm, N runs, --repeat-limit, Warp's counters)
  workloads.py  the registry of workloads            measures.py how each workload is measured
  systems.py    the registry of systems, the peers   warp.py     Warp (warpd, its control socket)
  env.py        the run's shared state, S3, shaper   data.py     generated data, facts, peers' objects
  report.py     medians, ratios, targets, tables     procs.py    processes, mounts, pids (also soak's)
  common.py     paths, credentials, log, clock
  fleet.py      --fleet N: N warpd nodes at once, with and without an nginx mirror (fleet_node.py reads)

Standard library only, on Debian's /usr/bin/python3 (numpy and PIL only to generate data).
Unit tests: scripts/bench.d/tests (pytest; run by scripts/test).
"""
