#!/usr/bin/env bash
# The multi-SoC link's hand-off (link-handoff: a runnable end from one process's link to the
# other's, round trip / 2) four ways, in one run: loopback and two emulated hosts (each side in a
# network namespace of its own, one veth pair between), each without and with DDS Security (the
# PKI of samples/multisoc/security/make_pki.sh: authenticated, access-controlled, encrypted). It
# prints p50 and p99 of each and their ratios to plain loopback. Root only (ip netns); exit 77
# (skipped) where that, openssl or Cyclone's security plugins are missing.
#
#   link_variants.sh LINK_HANDOFF DDS_PINGPONG SOURCE_ROOT [ITERATIONS]   (default 10000)
set -euo pipefail
handoff=$1 pingpong=$2 root=$3 iterations=${4:-10000}
plugins=/usr/lib/x86_64-linux-gnu/libddsc0debian/libdds_security_auth.so
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v openssl >/dev/null || [ ! -e "$plugins" ]; then
  echo "link_variants: needs root, ip(8), openssl(1) and $plugins: skipped"
  exit 77
fi
work=$(mktemp -d)
tag=$$
nsA=tactusLA$tag nsB=tactusLB$tag
cleanup() { ip netns del "$nsA" 2>/dev/null || true; ip netns del "$nsB" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
"$root/samples/multisoc/security/make_pki.sh" "$work/pki" SocA SocB >"$work/pki.out" 2>&1
ip netns add "$nsA"
ip netns add "$nsB"
ip link add vA netns "$nsA" type veth peer name vB netns "$nsB"
ip -n "$nsA" addr add 10.78.0.1/30 dev vA
ip -n "$nsB" addr add 10.78.0.2/30 dev vB
for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
ip -n "$nsA" link set vA up
ip -n "$nsB" link set vB up
side() {  # own address, peer address -> a Cyclone configuration for that veth side
  cat >"$work/dds_$1.xml" <<XML
<CycloneDDS xmlns="https://cdds.io/config"><Domain Id="any"><General><Interfaces>
<NetworkInterface address="$1"/></Interfaces><AllowMulticast>false</AllowMulticast></General>
<Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address="$2"/></Peers></Discovery>
</Domain></CycloneDDS>
XML
  echo "file://$work/dds_$1.xml"
}
uriA=$(side 10.78.0.1 10.78.0.2)
uriB=$(side 10.78.0.2 10.78.0.1)
loop="file://$root/samples/multisoc/loopback.xml"
declare -A p50 p99
measure() {  # name, link-handoff's extra arguments...
  local name=$1
  shift
  local out
  out=$("$handoff" "$pingpong" "$iterations" --no-bare "$@" 2>&1) || { echo "$out"; echo "link_variants: $name failed"; exit 1; }
  read -r p50["$name"] p99["$name"] < <(sed -n 's/^ *one way (round trip \/ 2): p50 \([0-9.]*\) us *p99 \([0-9.]*\) us.*/\1 \2/p' <<<"$out" | head -n 1)
  [ -n "${p50[$name]}" ] || { echo "$out"; echo "link_variants: no figures for $name"; exit 1; }
}
measure "loopback" --uri-a "$loop" --uri-b "$loop"
measure "loopback, DDS Security" --uri-a "$loop,file://$work/pki/SocA.xml" --uri-b "$loop,file://$work/pki/SocB.xml"
measure "veth" --netns-a "$nsA" --netns-b "$nsB" --uri-a "$uriA" --uri-b "$uriB"
measure "veth, DDS Security" --netns-a "$nsA" --netns-b "$nsB" --uri-a "$uriA,file://$work/pki/SocA.xml" \
  --uri-b "$uriB,file://$work/pki/SocB.xml"
echo "soc_link hand-off, one way (round trip / 2), $iterations iterations each:"
printf '  %-26s %9s %9s %12s %12s\n' "" "p50 us" "p99 us" "p50 ratio" "p99 ratio"
for name in "loopback" "loopback, DDS Security" "veth" "veth, DDS Security"; do
  printf '  %-26s %9s %9s %11.2fx %11.2fx\n' "$name" "${p50[$name]}" "${p99[$name]}" \
    "$(echo "${p50[$name]} / ${p50[loopback]}" | bc -l)" "$(echo "${p99[$name]} / ${p99[loopback]}" | bc -l)"
done
