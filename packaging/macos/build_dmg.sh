#!/bin/sh
# Wraps dist/Workstation.app (made by `python packaging/build.py` on macOS) into
# dist/workstation-VERSION-macos-ARCH-VARIANT.dmg: a compressed disk image holding the app and a
# link to /Applications to drag it onto. Usage: build_dmg.sh VERSION [VARIANT] (macOS only).
set -eu
version=${1:?usage: build_dmg.sh VERSION [VARIANT]}
variant=${2:-cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
app="$root/dist/Workstation.app"
dmg="$root/dist/workstation-$version-macos-$(uname -m)-$variant.dmg"
[ -d "$app" ] || { echo "build_dmg.sh: $app is missing; run python packaging/build.py" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
# Ad-hoc signature so Apple silicon runs it; sign with a Developer ID and notarize to ship.
codesign --force --deep --sign - "$stage/Workstation.app"
rm -f "$dmg"
hdiutil create -volname "Workstation $version" -srcfolder "$stage" -fs HFS+ -format UDZO \
    -ov "$dmg"
echo "$dmg"
