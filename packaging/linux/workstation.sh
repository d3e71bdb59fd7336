#!/bin/sh
# Launcher for /usr/bin/workstation: runs the bundled app two folders up in opt/workstation,
# so it works from the installed package and from a `dpkg -x` copy alike.
here=$(dirname "$(readlink -f "$0")")
exec "$here/../../opt/workstation/workstation" "$@"
