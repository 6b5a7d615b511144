#!/bin/sh
# Starts a Sibyl node in a container. Writes /var/lib/sibyl/conf/storage-conf.xml from
# the template (SIBYL_CONF_TEMPLATE, default /etc/sibyl/storage-conf.xml) with:
#
#   SIBYL_LISTEN_ADDRESS  internode address other nodes reach this one at
#                         (default: the container's first address, from `hostname -i`)
#   SIBYL_THRIFT_ADDRESS  Thrift address (default: the listen address)
#   SIBYL_ADMIN_ADDRESS   admin interface address (default: the listen address)
#   SIBYL_SEEDS           comma-separated seeds (default: the listen address, a cluster of one)
#   SIBYL_INITIAL_TOKEN   this node's token on its first start (default: empty, the node picks)
#
# and data, commit log and saved caches under /var/lib/sibyl. Then it runs sibyl on that file.
# A command other than `sibyl` (e.g. `sibyltool -h ... status`, `sibyl-cli`, `sh`) runs as is.
set -eu

if [ "${1:-sibyl}" != "sibyl" ]; then
    exec "$@"
fi
[ $# -gt 0 ] && shift

template=${SIBYL_CONF_TEMPLATE:-/etc/sibyl/storage-conf.xml}
home=/var/lib/sibyl
conf_dir=$home/conf

listen=${SIBYL_LISTEN_ADDRESS:-}
if [ -z "$listen" ]; then
    # Docker writes the container's address and host name into /etc/hosts.
    listen=$(hostname -i 2>/dev/null | awk '{ print $1 }' || true)
fi
if [ -z "$listen" ] && [ -r /etc/hostname ]; then
    listen=$(awk -v h="$(cat /etc/hostname)" '$2 == h { print $1; exit }' /etc/hosts)
fi
[ -n "$listen" ] || { echo "sibyl-entrypoint: no address found; set SIBYL_LISTEN_ADDRESS" >&2; exit 1; }
thrift=${SIBYL_THRIFT_ADDRESS:-$listen}
admin=${SIBYL_ADMIN_ADDRESS:-$listen}
seeds_list=${SIBYL_SEEDS:-$listen}
token=${SIBYL_INITIAL_TOKEN:-}

seeds=""
old_ifs=$IFS
IFS=,
for seed in $seeds_list; do
    seed=$(echo "$seed" | tr -d ' ')
    [ -n "$seed" ] && seeds="$seeds<Seed>$seed</Seed>"
done
IFS=$old_ifs
[ -n "$seeds" ] || { echo "sibyl-entrypoint: SIBYL_SEEDS lists no seed" >&2; exit 1; }

mkdir -p "$conf_dir" "$home/data" "$home/commitlog" "$home/saved_caches"
# The SimpleAuthenticator reads its files next to the configuration.
for f in "$(dirname "$template")"/*.properties; do
    [ -f "$f" ] && cp "$f" "$conf_dir/"
done

SET_ELEMENTS="ListenAddress=$listen
ThriftAddress=$thrift
AdminAddress=$admin
Seeds=$seeds
InitialToken=$token
DataFileDirectories=<DataFileDirectory>$home/data</DataFileDirectory>
CommitLogDirectory=$home/commitlog
SavedCachesDirectory=$home/saved_caches" \
    awk -f /usr/local/share/sibyl/set-conf-elements.awk "$template" >"$conf_dir/storage-conf.xml.tmp"
mv "$conf_dir/storage-conf.xml.tmp" "$conf_dir/storage-conf.xml"

echo "sibyl-entrypoint: listen $listen, thrift $thrift, admin $admin, seeds $seeds_list, token ${token:-(node picks)}"
exec sibyl --config "$conf_dir/storage-conf.xml" "$@"
