#!/bin/sh
# Adds Workstation to your desktop's application menu from this unpacked folder (for you only:
# files under ~/.local/share). `./install-desktop-entry.sh --remove` takes them out again.
set -eu
here=$(dirname "$(readlink -f "$0")")
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
if [ "${1:-}" = "--remove" ]; then
    rm -f "$apps/workstation.desktop" "$icons/workstation.png"
    echo "removed the Workstation menu entry"
    exit 0
fi
mkdir -p "$apps" "$icons"
cp "$here/share/icons/hicolor/256x256/apps/workstation.png" "$icons/workstation.png"
sed "s|^Exec=workstation|Exec=\"$here/workstation\"|" \
    "$here/share/applications/workstation.desktop" > "$apps/workstation.desktop"
echo "added Workstation to the application menu ($apps/workstation.desktop)"
