"""``python -m simscore.app.cli``: the ``simscore`` command (as ``python -m simscore``)."""

import sys

from simscore.app.cli import main

sys.exit(main())
