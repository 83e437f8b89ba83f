#!/usr/bin/env bash
# pin-action-image.sh VERSION FULL_DIGEST SLIM_DIGEST [ROOT]
#
# Points action.yml and slim/action.yml under ROOT (default: the current
# directory) at the images the release published, by digest, with the tag
# they were pushed as in a comment:
#   image: docker://ghcr.io/gradegate/gradegate@sha256:… # ghcr.io/gradegate/gradegate:v1.2.3
# The release workflow runs it on the commit it tags; cmd/gradegate's
# TestActionImage checks the result against cmd/gradegate/VERSION.
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 VERSION FULL_DIGEST SLIM_DIGEST [ROOT]" >&2
  exit 2
fi
version=$1 full=$2 slim=$3 root=${4:-.}
repo=${IMAGE_REPOSITORY:-ghcr.io/gradegate/gradegate}

[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || { echo "$0: version $version is not vX.Y.Z" >&2; exit 2; }
for d in "$full" "$slim"; do
  [[ $d =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "$0: $d is not a sha256 digest" >&2; exit 2; }
done
[ "$full" != "$slim" ] || { echo "$0: the full and slim digests are the same" >&2; exit 2; }

# pin FILE IMAGE TAG: replace the one `  image:` line of runs.
pin() {
  local file=$1 ref="docker://$repo@$2 # $repo:$3"
  local n
  n=$(grep -c '^  image: ' "$file" || true)
  [ "$n" = 1 ] || { echo "$0: $file has $n '  image:' lines, want 1" >&2; exit 1; }
  sed -i.bak "s|^  image: .*|  image: $ref|" "$file"
  rm -f "$file.bak"
  echo "$file: image: $ref"
}
pin "$root/action.yml" "$full" "$version"
pin "$root/slim/action.yml" "$slim" "$version-slim"
