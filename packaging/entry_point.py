"""What the frozen executable runs: the ``workstation`` command."""

from workstation.cli import main

raise SystemExit(main())
