"""``python -m lagassign.cli``: the ``lagassign`` command where its console script is not on PATH."""

from . import main

raise SystemExit(main())
