#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses (the first main archive, not security), from
# deb822 sources (/etc/apt/sources.list.d/*.sources) or one-line sources (sources.list, *.list).
set -euo pipefail
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  uri="$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")"
  [ -n "$uri" ] && { echo "$uri"; exit 0; }
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  uri="$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) { print $i; exit } else break } }' "$f")"
  [ -n "$uri" ] && { echo "$uri"; exit 0; }
done
exit 1
