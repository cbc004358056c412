#!/bin/sh
# Builds local stand-ins for the images deploy/compose.yml names, from this machine's own
# binaries, because this machine cannot pull images. Each is a minimal root file system made
# with tar and `podman import` or `docker import` (seconds, no network):
#   $PREFIX-node      for node:20-alpine   node 20 and npm at /usr/local, user node (uid 1000), sh
#   $PREFIX-caddy     for caddy:2-alpine   caddy, run as the official image does
#   $PREFIX-whoami    for traefik/whoami   a few lines of node answering with the request it got
# Usage: [ENGINE=docker] stand-in-images.sh PREFIX   (e.g. localhost/gatehouse-standin); needs
# root and the engine (podman unless ENGINE names another program with podman's `import`).
set -eu
PREFIX=$1
ENGINE=${ENGINE:-podman}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
LIBDIR=/usr/lib/x86_64-linux-gnu
NODE=$(readlink -f "$(command -v node)")
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
CADDY=$(readlink -f "$(command -v caddy)")

# A root file system holding the given programs and the shared libraries they load (Debian is
# merged-/usr: /bin, /lib and /lib64 are links into /usr).
base_root() {
  root=$1; shift
  mkdir -p "$root/usr/bin" "$root/usr/lib64" "$root$LIBDIR" "$root/etc/ssl/certs" "$root/tmp" "$root/root"
  ln -s usr/bin "$root/bin"; ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"; ln -s usr/bin "$root/usr/sbin"; ln -s usr/bin "$root/sbin"
  chmod 1777 "$root/tmp"
  for program in "$@"; do
    for lib in $(ldd "$program" | awk '/=> \//{print $3} /^\t\/lib64/{print $1}'); do
      cp -L "$lib" "$root$(dirname "$lib" | sed 's#^/lib#/usr/lib#')/"
    done
  done
  cp /bin/dash "$root/usr/bin/sh"
  for tool in env mkdir chown chmod cat ls rm; do cp "/usr/bin/$tool" "$root/usr/bin/"; done
  for lib in $(ldd /usr/bin/ls | awk '/=> \//{print $3}'); do cp -L "$lib" "$root$LIBDIR/"; done
  # This machine reaches the npm registry through a TLS proxy whose CA is in its bundle.
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\nnobody:x:65534:65534::/nonexistent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
  mkdir -p "$root/home/node" && chown 1000:1000 "$root/home/node"
}

# node:20-alpine: node and npm under /usr/local, as the official image has them.
node_root="$WORK/node"
base_root "$node_root" "$NODE"
mkdir -p "$node_root/usr/local/bin" "$node_root/usr/local/lib/node_modules"
cp "$NODE" "$node_root/usr/local/bin/node"
cp -a "$NPM_DIR" "$node_root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$node_root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$node_root/usr/local/bin/npx"

tar -C "$node_root" -cf - . | "$ENGINE" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' - "$PREFIX-node:latest" >/dev/null

# traefik/whoami: answers every request on :80 with what it received, as whoami does.
cat >"$node_root/whoami" <<'JS'
#!/usr/local/bin/node
require('node:http').createServer((req, res) => {
  const lines = [`Hostname: ${require('node:os').hostname()}`, `RemoteAddr: ${req.socket.remoteAddress}:${req.socket.remotePort}`, `${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${lines.join('\n')}\n`);
}).listen(Number(process.env.WHOAMI_PORT_NUMBER || 80));
process.on('SIGTERM', () => process.exit(0));
JS
chmod 0755 "$node_root/whoami"
tar -C "$node_root" -cf - . | "$ENGINE" import --change 'ENTRYPOINT ["/whoami"]' --change 'EXPOSE 80' - "$PREFIX-whoami:latest" >/dev/null

# caddy:2-alpine: the binary, its directories, and the official image's command and variables.
caddy_root="$WORK/caddy"
base_root "$caddy_root" "$CADDY"
cp "$CADDY" "$caddy_root/usr/bin/caddy"
mkdir -p "$caddy_root/etc/caddy" "$caddy_root/config/caddy" "$caddy_root/data/caddy" "$caddy_root/srv"
tar -C "$caddy_root" -cf - . | "$ENGINE" import \
  --change 'ENV XDG_CONFIG_HOME=/config' --change 'ENV XDG_DATA_HOME=/data' \
  --change 'WORKDIR /srv' --change 'EXPOSE 80' --change 'EXPOSE 443' \
  --change 'CMD ["caddy","run","--config","/etc/caddy/Caddyfile","--adapter","caddyfile"]' - "$PREFIX-caddy:latest" >/dev/null
echo "built $PREFIX-node, $PREFIX-whoami, $PREFIX-caddy"
