#!/usr/bin/env bash
# build-binaries.sh VERSION COMMIT OUTDIR
#
# Builds the static gradegate binaries a release attaches, one per target
# (TARGETS, default: linux, darwin and windows on amd64 and arm64), stamped
# with VERSION and COMMIT, and writes OUTDIR/SHA256SUMS over them.
#   gradegate-v1.2.3-linux-amd64, …, gradegate-v1.2.3-windows-arm64.exe
# The release workflow runs it; cmd/gradegate's TestReleaseBinaries runs it
# for one target as a dry run.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 VERSION COMMIT OUTDIR" >&2
  exit 2
fi
version=$1 commit=$2 out=$3
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || { echo "$0: version $version is not vX.Y.Z" >&2; exit 2; }
targets=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}

mkdir -p "$out"
for target in $targets; do
  os=${target%/*} arch=${target#*/}
  name="gradegate-$version-$os-$arch"
  [ "$os" = windows ] && name="$name.exe"
  # -trimpath and no cgo: the same source gives the same bytes on any
  # builder; -buildvcs=false because the commit is stamped explicitly.
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
    -o "$out/$name" ./cmd/gradegate
  echo "$out/$name"
done
(cd "$out" && sha256sum gradegate-"$version"-* > SHA256SUMS)
