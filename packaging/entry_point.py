"""What the frozen executable runs: the ``workstation`` command."""

from workstation.launch import main

raise SystemExit(main())
