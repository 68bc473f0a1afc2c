#!/bin/sh
# Starts the demo origin in the foreground: rpcbind (nfs-ganesha will not serve
# without it), then nfs-ganesha with ganesha.conf, logging to stderr.
set -eu
export_dir=/srv/export
mkdir -p /run/rpcbind /run/ganesha /var/lib/ganesha/recovery "$export_dir"
# Something to list, and writable by everyone (like /tmp): nfsgw squashes root
# to 65534 by default, so a root-owned 0755 tree would be read-only to clients.
[ -e "$export_dir/README" ] || echo "served by the nfsgw compose demo origin" > "$export_dir/README"
chmod 1777 "$export_dir"
rpcinfo -p 127.0.0.1 >/dev/null 2>&1 || rpcbind -w
exec ganesha.nfsd -F -f /etc/ganesha/ganesha.conf -L STDERR -N NIV_WARN -p /run/ganesha.pid
