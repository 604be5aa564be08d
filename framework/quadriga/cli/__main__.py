"""``python -m quadriga.cli``: the ``quadriga`` command."""

import sys

from quadriga.cli import main

sys.exit(main())
