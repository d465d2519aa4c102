#!/usr/bin/env bash
# `npm run image:runner`: the pmv6 runner image, tag pmv6:local (or $PMV6_RUNNER_IMAGE). The
# checkout is packed and installed into a fresh folder (package/install.mjs: production
# dependencies only, no network), which is the build context of package/runner.Dockerfile. Base:
# fixtures/container/pick-base-image.sh, as for the reference image. Prints the image's size.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${PMV6_RUNNER_IMAGE:-pmv6:local}"
if [ ! -e node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  echo "npm run image:runner: no installed node_modules (better-sqlite3 not built); run npm ci first" >&2
  exit 1
fi
base="$(fixtures/container/pick-base-image.sh)"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
node package/install.mjs "$ctx/app" >/dev/null
rm -f "$ctx"/app/*.tgz
mkdir "$ctx/work"
cp package/runner.Dockerfile "$ctx/Dockerfile"
echo "building $tag from $base"
docker build --quiet --build-arg "BASE=$base" --tag "$tag" "$ctx" >/dev/null
docker image prune -f --filter "label=io.pmv6.runner=1" >/dev/null || true
size="$(docker image inspect -f '{{.Size}}' "$tag")"
echo "built $tag: $((size / 1000000)) MB ($(du -sm "$ctx/app/node_modules" | cut -f1) MB of it pmv6 and its dependencies)"
