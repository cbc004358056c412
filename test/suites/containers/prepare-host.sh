#!/bin/sh
# Lets rootful podman (crun) run containers on a host with cgroups in "hybrid" mode: v1
# controllers under /sys/fs/cgroup plus a v2 hierarchy at /sys/fs/cgroup/unified that still
# holds a controller (here hugetlb, which no v1 hierarchy took). crun then refuses every
# container: "cgroups in hybrid mode not supported, drop all controllers from cgroupv2". Each
# such controller gets a v1 hierarchy of its own, which takes it out of v2. Idempotent; changes
# nothing on a pure v1 or pure v2 host. Run as root.
set -eu
UNIFIED=/sys/fs/cgroup/unified
[ -r "$UNIFIED/cgroup.controllers" ] || exit 0
for controller in $(cat "$UNIFIED/cgroup.controllers"); do
  mkdir -p "/sys/fs/cgroup/$controller"
  mount -t cgroup -o "$controller" cgroup "/sys/fs/cgroup/$controller"
  echo "prepare-host: mounted the $controller controller as cgroup v1 (crun refuses hybrid mode with v2 controllers)"
done
