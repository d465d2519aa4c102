#!/usr/bin/env bash
# `npm run image:k6`: the k6 runner image for the k6-operator, tag pmv6-k6:local (or
# $PMV6_K6_IMAGE), from load/operator/k6-runner.Dockerfile. Its rootfs is assembled here: the k6
# binary ($K6_BINARY, else ../shared/tools/k6/k6 beside the repository; it must be static), this
# machine's /bin/sh with the libraries ldd lists for it, the CA bundle, and load/k6,
# load/scenarios and core/signed-uri.js under /pmv6. Prints the image's size.
set -euo pipefail
cd "$(dirname "$0")/../.."
tag="${PMV6_K6_IMAGE:-pmv6-k6:local}"
k6="${K6_BINARY:-../shared/tools/k6/k6}"
if [ ! -x "$k6" ]; then
  echo "npm run image:k6: no k6 binary at $k6 (set K6_BINARY)" >&2
  exit 2
fi
if command -v file >/dev/null && ! file -L "$k6" | grep -q 'statically linked'; then
  echo "npm run image:k6: $k6 is not statically linked; build k6 with CGO_ENABLED=0" >&2
  exit 2
fi
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
root="$ctx/rootfs"

copy() { # a file to the same path under the rootfs, following symlinks
  mkdir -p "$(dirname "$root$1")"
  cp -L "$1" "$root$1"
}

mkdir -p "$root/usr/bin" "$root/bin" "$root/tmp" "$root/etc/ssl/certs" "$root/pmv6/load" "$root/pmv6/core" "$root/pmv6/out"
chmod 1777 "$root/tmp"
chmod 0777 "$root/pmv6/out"   # the summary files; mount a volume here to keep them
cp "$k6" "$root/usr/bin/k6"
sh_bin="$(readlink -f /bin/sh)"
cp "$sh_bin" "$root/bin/sh"
ldd "$sh_bin" | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' | while read -r lib; do
  [ -e "$root$lib" ] || copy "$lib"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nk6:x:1000:1000:k6:/pmv6/out:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nk6:x:1000:\n' >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
cp -r load/k6 load/scenarios "$root/pmv6/load/"
rm -f "$root/pmv6/load/k6/tsconfig.json"
cp core/signed-uri.js "$root/pmv6/core/signed-uri.js"
cp load/operator/k6-runner.Dockerfile "$ctx/Dockerfile"
echo "building $tag ($("$k6" version | head -1))"
docker build --quiet --tag "$tag" "$ctx" >/dev/null
docker image prune -f --filter "label=io.pmv6.k6=1" >/dev/null || true
size="$(docker image inspect -f '{{.Size}}' "$tag")"
echo "built $tag: $((size / 1000000)) MB"
