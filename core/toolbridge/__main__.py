"""``python -m toolbridge`` is the ``toolbridge`` command."""

from .cli import main

raise SystemExit(main())
