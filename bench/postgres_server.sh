# Sourced by the benchmarks that need a throwaway PostgreSQL server (bench/workers_benchmark.sh,
# bench/serve_load.sh). `start_postgres DIR` starts one with Debian's server binaries and defaults
# (trust authentication, user visalign) on a free loopback port, as `nobody` when run as root, its
# files in DIR (a new folder), and sets pg_bindir, pg_port and pg_stop (the command that stops it).
start_postgres() {
  local dir=$1 run_as=""
  pg_bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  if [ "$(id -u)" -eq 0 ]; then run_as="setpriv --reuid=nobody --regid=nogroup --clear-groups"; fi
  mkdir "$dir" && chmod 755 "$(dirname "$dir")" && { [ -z "$run_as" ] || chown nobody "$dir"; }
  $run_as "$pg_bindir/initdb" -D "$dir/data" -U visalign -A trust -E UTF8 --locale=C -N > /dev/null
  pg_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  $run_as "$pg_bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
      -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1" start > /dev/null
  pg_stop="$run_as $pg_bindir/pg_ctl -D $dir/data -m immediate stop"
}
