"""``python -m simscore.app.cli``: the ``simscore`` command (as ``python -m simscore``)."""

import sys

from simscore.app.cli import main

if __name__ == "__main__":  # run, not imported (pkgutil.walk_packages imports every module)
    sys.exit(main())
