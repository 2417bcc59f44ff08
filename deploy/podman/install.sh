#!/usr/bin/env bash
# The container tools `npm run image` and `npm run play` need, from Debian's own archive: podman (4.3 on
# bookworm), runc (crun refuses hybrid cgroup hosts), debootstrap (the image's base is built locally, so no
# image registry is ever contacted), iptables (netavark, the pods' network, needs it), catatonit (podman builds its pod pause image from it, locally). Needs root (apt-get); a second run finds them and returns at once.
set -euo pipefail
missing=()
for tool in podman runc debootstrap iptables catatonit; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if ((${#missing[@]})); then
  [[ "$(id -u)" == 0 ]] || { echo "podman-install: run as root to apt-get install ${missing[*]}" >&2; exit 77; }
  command -v apt-get >/dev/null 2>&1 || { echo "podman-install: needs a Debian-family host (apt-get) for ${missing[*]}" >&2; exit 69; }
  echo "podman-install: apt-get install ${missing[*]}..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc debootstrap \
    uidmap slirp4netns fuse-overlayfs netavark aardvark-dns iptables catatonit >&2 \
    || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap iptables catatonit >&2
fi
echo "podman-install: $(podman --version), runc $(runc --version | head -n1 | awk '{print $3}'), debootstrap $(dpkg-query -W -f='${Version}' debootstrap 2>/dev/null || echo '?')" >&2
