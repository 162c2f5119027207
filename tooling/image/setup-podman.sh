#!/usr/bin/env bash
# Prepares a Debian machine without a Docker daemon or a registry (like this project's CI) to build
# and run the image with Podman, as root: installs podman, runc and debootstrap from Debian's
# packages, and writes /etc/containers/containers.conf with the settings such machines need (runc
# rather than crun, cgroupfs and file events without systemd, ulimits runc may set) unless the file
# exists already. Machines with Docker, or a working Podman, do not need it.
set -euo pipefail

missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian's packages"
  # Only the missing packages: naming installed ones (curl, ca-certificates) would upgrade them.
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

conf=/etc/containers/containers.conf
if [ ! -e "$conf" ]; then
  limit=$(ulimit -Hn)
  mkdir -p /etc/containers
  cat >"$conf" <<CONF
# Written by the Plant Store's tooling/image/setup-podman.sh for a machine without systemd.
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[containers]
default_ulimits = ["nofile=${limit}:${limit}", "nproc=32768:32768"]
CONF
  echo "wrote $conf"
fi
podman --version
