"""``python -m sklearn_noisy``: the ``sklearn-noisy`` command line."""

import sys

from .cli import main

sys.exit(main())
