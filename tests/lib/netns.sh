# tests/lib/netns.sh: network namespaces for multi-agent runs on one machine, shared by
# tests/integration/test_agents_scale.sh and bench/agent-skew.sh. A bridge carries the
# cluster's address; each namespace joins it through a veth pair, with an address of its own
# on the same /24 and its loopback up. Needs root and iproute2.

# netns_bridge BRIDGE ADDRESS: the bridge, up, with ADDRESS/24 and a MAC address of its own
# (locally administered, random). Without one, a bridge takes the lowest MAC of its ports,
# so a namespace joined later can change it; the namespaces that already resolved the
# bridge's address then send to the old MAC until their ARP entry expires, longer than a
# client waits for the mon.
netns_bridge() {
  local mac
  mac=$(od -An -N5 -tx1 /dev/urandom | tr -s ' ' ':')
  ip link add "$1" address "02$mac" type bridge && ip addr add "$2/24" dev "$1" && ip link set "$1" up
}

# netns_join NAMESPACE BRIDGE HOST_END NAMESPACE_END ADDRESS: the namespace, joined to the
# bridge by the veth pair HOST_END (on the bridge) and NAMESPACE_END (inside, ADDRESS/24).
netns_join() {
  local ns=$1 bridge=$2 host_end=$3 ns_end=$4 address=$5
  ip netns add "$ns" &&
    ip link add "$host_end" type veth peer name "$ns_end" &&
    ip link set "$host_end" master "$bridge" up &&
    ip link set "$ns_end" netns "$ns" &&
    ip -n "$ns" addr add "$address/24" dev "$ns_end" &&
    ip -n "$ns" link set "$ns_end" up &&
    ip -n "$ns" link set lo up
}
